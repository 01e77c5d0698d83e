// et_portable::attention.out: the bits of the chain it replaces (mul.Scalar
// or div.Scalar, where, _softmax, bmm) after scores summed in the
// documented order, and the unfused chain's results (bmm's scores) to
// rounding, for heads shared by several queries,
// masks of every broadcast, keys in a transposed layout and prompts longer
// than one block of scores, finite masked scores and masks of other
// steps, on every SIMD target and on 1, 2 and 3 threads;
// cache positions no row attends left unread; a masked-out row; zero
// sizes; every error; a float16 or bfloat16 cache.
#include <pthreadpool.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "simd_targets.h"
#include "test_util.h"

namespace {

const float kInf = std::numeric_limits<float>::infinity();

struct Case {
  int64_t batch, heads, kv_heads, rows, length, depth, value_depth;
};

// Key and value heads repeated for the query heads that read them, as the
// exported repeat_kv does: [B, Hkv, S, D] -> [B, H, S, D].
std::vector<float> repeat_heads(const std::vector<float>& x, const Case& c, int64_t depth) {
  std::vector<float> out;
  const int64_t per_head = c.length * depth;
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t h = 0; h < c.heads; ++h) {
      const int64_t g = h / (c.heads / c.kv_heads);
      const auto first = x.begin() + (b * c.kv_heads + g) * per_head;
      out.insert(out.end(), first, first + per_head);
    }
  return out;
}

// Scores [B * H, T, S] in the kernel's documented order: term d into
// partial sum d % 8 (float64, increasing d), the partials added as
// ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7)), rounded once.
std::vector<float> documented_scores(const Case& c, const std::vector<float>& q, const std::vector<float>& k) {
  const auto repeated = repeat_heads(k, c, c.depth);
  std::vector<float> scores;
  for (int64_t i = 0; i < c.batch * c.heads; ++i)
    for (int64_t t = 0; t < c.rows; ++t)
      for (int64_t s = 0; s < c.length; ++s) {
        double p[8] = {};
        for (int64_t d = 0; d < c.depth; ++d)
          p[d % 8] += static_cast<double>(q[static_cast<std::size_t>((i * c.rows + t) * c.depth + d)]) *
                      repeated[static_cast<std::size_t>((i * c.length + s) * c.depth + d)];
        scores.push_back(static_cast<float>(((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]))));
      }
  return scores;
}

enum class Scores { Bmm, Documented };

// The unfused chain through the portable kernels (what the exporter emits
// without the fusion), its scores from bmm or in the kernel's order.
std::vector<float> chain(const Case& c, const std::vector<float>& q, const std::vector<float>& k,
                         const std::vector<float>& v, const Mask* mask, double scale, double divisor,
                         double masked_score, Scores order = Scores::Documented) {
  const int64_t bh = c.batch * c.heads;
  Owned<float> q3({bh, c.rows, c.depth}, q);
  // [B*H, D, S] in logical order, stored as [B*H, S, D]: the exported permute of the key.
  const auto repeated = repeat_heads(k, c, c.depth);
  std::vector<float> transposed;
  for (int64_t i = 0; i < bh; ++i)
    for (int64_t d = 0; d < c.depth; ++d)
      for (int64_t s = 0; s < c.length; ++s) transposed.push_back(repeated[(i * c.length + s) * c.depth + d]);
  Owned<float> kt({bh, c.depth, c.length}, transposed, {0, 2, 1});
  Owned<float> scores({bh, c.rows, c.length}, Owned<float>::filled({bh, c.rows, c.length}, 0));
  KernelContext ctx;
  REQUIRE(portable::bmm_out(ctx, q3, kt, scores));
  const Sizes four{c.batch, c.heads, c.rows, c.length};
  Owned<float> raw(four, order == Scores::Bmm ? scores.logical() : documented_scores(c, q, k));
  Owned<float> scaled(four, raw.logical());
  if (scale != 1.0) REQUIRE(portable::mul_scalar_out(ctx, raw, Scalar(scale), scaled));
  Owned<float> divided(four, scaled.logical());
  if (divisor != 1.0) REQUIRE(portable::div_scalar_out(ctx, scaled, Scalar(divisor), divided));
  Owned<float> masked(four, divided.logical());
  if (mask != nullptr) {
    Owned<float> fill({}, {static_cast<float>(masked_score)});
    REQUIRE(portable::where_self_out(ctx, *mask, divided, fill, masked));
  }
  Owned<float> probabilities(four, Owned<float>::filled(four, 0));
  REQUIRE(portable::softmax_out(ctx, masked, -1, false, probabilities));
  Owned<float> p3({bh, c.rows, c.length}, probabilities.logical());
  Owned<float> v3({bh, c.length, c.value_depth}, repeat_heads(v, c, c.value_depth));
  Owned<float> out({bh, c.rows, c.value_depth}, Owned<float>::filled({bh, c.rows, c.value_depth}, 0));
  REQUIRE(portable::bmm_out(ctx, p3, v3, out));
  return out.logical();
}

// The fused kernel; with `threads` > 1 called as a run state of that many
// threads calls it (its context carries the run's environment).
// Key and value hold T elements (float, or a 16-bit float type).
template <typename T>
std::vector<float> fused(const Case& c, const std::vector<float>& q, const std::vector<T>& k, const std::vector<T>& v,
                         const Mask* mask, double scale, double divisor, double masked_score,
                         std::vector<uint8_t> key_order = {}, uint32_t threads = 1) {
  Owned<float> query({c.batch, c.heads, c.rows, c.depth}, q);
  Owned<T> key({c.batch, c.kv_heads, c.length, c.depth}, k, std::move(key_order));
  Owned<T> value({c.batch, c.kv_heads, c.length, c.value_depth}, v);
  const Sizes out_sizes{c.batch, c.heads, c.rows, c.value_depth};
  Owned<float> out(out_sizes, Owned<float>::filled(out_sizes, -1));
  Owned<float> fill({}, {static_cast<float>(masked_score)});
  KernelContext ctx;
  const std::unique_ptr<pthreadpool, void (*)(pthreadpool_t)> pool(threads > 1 ? pthreadpool_create(threads) : nullptr,
                                                                    pthreadpool_destroy);
  const et_ops_run_environment env{sizeof(et_ops_run_environment), threads, pool.get()};
  if (threads > 1) ctx.set_run_environment(&env);
  std::optional<TensorRef> m, f;
  if (mask != nullptr) m = mask->ref(), f = fill.ref();
  REQUIRE(portable::attention_out(ctx, query, key, value, m, f, scale, divisor, out));
  return out.logical();
}

// A causal mask [T, S] for rows that are the last T of S positions.
std::vector<uint8_t> causal(int64_t rows, int64_t length) {
  std::vector<uint8_t> m;
  for (int64_t t = 0; t < rows; ++t)
    for (int64_t s = 0; s < length; ++s) m.push_back(s <= length - rows + t ? 1 : 0);
  return m;
}

}  // namespace

// Random operands of one case, with a causal mask [T, S] and a mask per batch [B, 1, T, S].
struct Operands {
  std::vector<float> q, k, v;
  Mask rows_mask, batch_mask;

  Operands(const Case& c, std::mt19937_64& rng)
      : q(et_ops::test::random_floats(rng, c.batch * c.heads * c.rows * c.depth)),
        k(et_ops::test::random_floats(rng, c.batch * c.kv_heads * c.length * c.depth)),
        v(et_ops::test::random_floats(rng, c.batch * c.kv_heads * c.length * c.value_depth)),
        rows_mask({c.rows, c.length}, causal(c.rows, c.length)),
        batch_mask({c.batch, 1, c.rows, c.length}, per_batch(c)) {}

  static std::vector<uint8_t> per_batch(const Case& c) {
    std::vector<uint8_t> out;
    for (int64_t b = 0; b < c.batch; ++b) {
      auto m = causal(c.rows, c.length);
      for (std::size_t i = 0; i < m.size(); i += 3) m[i] = static_cast<uint8_t>(b % 2);
      out.insert(out.end(), m.begin(), m.end());
    }
    return out;
  }
};

const Case kCases[] = {
    {1, 4, 4, 1, 16, 8, 8},     // one decode step
    {1, 8, 2, 3, 13, 21, 7},    // query heads sharing key/value heads, odd sizes
    {2, 2, 1, 6, 9, 16, 3},     // two batches
    {1, 2, 2, 230, 300, 4, 37},  // more rows than one block of scores holds
    {1, 4, 2, 1, 51, 64, 64},    // decode steps of a model's head size: two query rows per key/value head
    {1, 3, 3, 1, 33, 64, 40},    // one query row per head, value columns that fill no whole tile
    // Key rows scored four (one query row) or two (two rows) at a time, with
    // positions, terms and value columns left over.
    {1, 2, 2, 1, 23, 21, 70},
    {1, 4, 2, 1, 19, 13, 33},
};
const double kDivisor = 2.8284271247461903;  // sqrt(8): not a power of two

TEST_CASE("attention: the bits of the documented order, on every SIMD target", "[portable][attention]") {
  auto rng = et_ops::test::seeded_rng(11);
  for (const Case& c : kCases) {
    INFO("B " << c.batch << " H " << c.heads << " Hkv " << c.kv_heads << " T " << c.rows << " S " << c.length);
    const Operands o(c, rng);
    const auto unmasked = chain(c, o.q, o.k, o.v, nullptr, 1.0, kDivisor, 0);
    const auto causal_chain = chain(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf);
    const double lowest = std::numeric_limits<float>::lowest();
    const auto batch_chain = chain(c, o.q, o.k, o.v, &o.batch_mask, 1.0, 8.0, lowest);
    const auto multiplied = chain(c, o.q, o.k, o.v, &o.rows_mask, 1.0 / kDivisor, 1.0, -kInf);
    et_ops::test::for_each_simd_target([&] {
      // No mask; a causal mask [T, S] with masked scores -inf; a mask per
      // batch [B, 1, T, S] with the lowest float; scores multiplied, not
      // divided; a key stored transposed.
      CHECK(first_difference(fused(c, o.q, o.k, o.v, nullptr, 1.0, kDivisor, 0), unmasked) == -1);
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf), causal_chain) == -1);
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.batch_mask, 1.0, 8.0, lowest), batch_chain) == -1);
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.rows_mask, 1.0 / kDivisor, 1.0, -kInf), multiplied) == -1);
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf, {0, 1, 3, 2}),
                             causal_chain) == -1);
    });
    if (c.rows > 1) CHECK(first_difference(unmasked, causal_chain) != -1);  // the mask matters
  }
}

// x rounded to T, with every `stride`-th element from `start` on replaced
// by one of `specials` (bit patterns) in turn.
template <typename T>
std::vector<T> narrowed(const std::vector<float>& x, const std::vector<uint16_t>& specials, std::size_t start,
                        std::size_t stride) {
  std::vector<T> out;
  for (float f : x) out.push_back(T::from_float(f));
  for (std::size_t i = start, n = 0; i < out.size(); i += stride, ++n) out[i] = T::from_bits(specials[n % specials.size()]);
  return out;
}

template <typename T>
std::vector<float> widened(const std::vector<T>& x) {
  std::vector<float> out;
  for (T h : x) out.push_back(h.to_float());
  return out;
}

template <typename T>
void check_16_bit_cache(const std::vector<uint16_t>& specials) {
  auto rng = et_ops::test::seeded_rng(16);
  for (const Case& c : kCases) {
    INFO("B " << c.batch << " H " << c.heads << " Hkv " << c.kv_heads << " T " << c.rows << " S " << c.length);
    const Operands o(c, rng);
    // Specials in a few key positions (scores of inf or NaN) and value
    // columns; subnormals and the extremes among them.
    const auto k = narrowed<T>(o.k, specials, 5, 97), v = narrowed<T>(o.v, specials, 3, 41);
    const auto k32 = widened(k), v32 = widened(v);
    const auto expected = fused(c, o.q, k32, v32, &o.rows_mask, 1.0, kDivisor, -kInf);
    const auto unmasked = fused(c, o.q, k32, v32, nullptr, 1.0, kDivisor, -kInf, {0, 1, 3, 2});
    et_ops::test::for_each_simd_target([&] {
      CHECK(first_difference(fused(c, o.q, k, v, &o.rows_mask, 1.0, kDivisor, -kInf), expected) == -1);
      CHECK(first_difference(fused(c, o.q, k, v, &o.rows_mask, 1.0, kDivisor, -kInf, {}, 2), expected) == -1);
      CHECK(first_difference(fused(c, o.q, k, v, nullptr, 1.0, kDivisor, -kInf, {0, 1, 3, 2}), unmasked) == -1);
    });
  }
}

// A 16-bit cache widens exactly: the bits of the float32 kernel on the
// widened cache, on every SIMD target and thread count, infinities, NaN
// and subnormals included (Highway's own float16 conversion, on targets
// without F16C, would make infinities finite).
TEST_CASE("attention: a float16 or bfloat16 cache gives the bits of its float32 widening", "[portable][attention]") {
  SECTION("float16") {
    check_16_bit_cache<et_ops::Half>({0x0001, 0x83FF, 0x7BFF, 0xFBFF, 0x0400, 0x7C00, 0x8000, 0xFC00, 0x7E01, 0x03FF});
  }
  SECTION("bfloat16") {
    check_16_bit_cache<et_ops::BFloat16>({0x0001, 0x807F, 0x7F7F, 0x0080, 0x7F80, 0x8000, 0xFF80, 0x7FC1});
  }
}

// A run state of several threads splits the heads and blocks of rows among
// them: the same bits as one thread, with every mask form, on every target.
TEST_CASE("attention: two and three threads give one thread's bits", "[portable][attention][threads]") {
  auto rng = et_ops::test::seeded_rng(12);
  for (const Case& c : kCases) {
    INFO("B " << c.batch << " H " << c.heads << " Hkv " << c.kv_heads << " T " << c.rows << " S " << c.length);
    const Operands o(c, rng);
    const double lowest = std::numeric_limits<float>::lowest();
    const auto one = fused(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf);
    const auto one_batch = fused(c, o.q, o.k, o.v, &o.batch_mask, 1.0, 8.0, lowest);
    const auto one_unmasked = fused(c, o.q, o.k, o.v, nullptr, 1.0, kDivisor, 0, {0, 1, 3, 2});
    et_ops::test::for_each_simd_target([&] {
      for (const uint32_t threads : {2u, 3u}) {
        INFO(threads << " threads");
        CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf, {}, threads), one) == -1);
        CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.batch_mask, 1.0, 8.0, lowest, {}, threads), one_batch) ==
              -1);
        CHECK(first_difference(fused(c, o.q, o.k, o.v, nullptr, 1.0, kDivisor, 0, {0, 1, 3, 2}, threads),
                               one_unmasked) == -1);
      }
    });
  }
}

// A finite masked score leaves masked positions a probability, so each
// row's softmax covers the whole row (masked_score outside the positions
// scored); masks whose positions are not adjacent bytes: stored transposed,
// and [T, 1] broadcast over the positions (step 0, rows kept or masked whole).
TEST_CASE("attention: a finite masked score, and masks read with other steps", "[portable][attention]") {
  auto rng = et_ops::test::seeded_rng(14);
  for (const Case& c : kCases) {
    INFO("B " << c.batch << " H " << c.heads << " Hkv " << c.kv_heads << " T " << c.rows << " S " << c.length);
    const Operands o(c, rng);
    const Mask transposed({c.rows, c.length}, causal(c.rows, c.length), {1, 0});
    std::vector<uint8_t> per_row;
    for (int64_t t = 0; t < c.rows; ++t) per_row.push_back(t % 3 == 1 ? 0 : 1);
    const Mask whole_rows({c.rows, 1}, per_row);
    const auto finite_causal = chain(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -1.0);
    const auto finite_batch = chain(c, o.q, o.k, o.v, &o.batch_mask, 1.0, kDivisor, 0.5);
    const auto transposed_chain = chain(c, o.q, o.k, o.v, &transposed, 1.0, kDivisor, -kInf);
    const auto rows_chain = chain(c, o.q, o.k, o.v, &whole_rows, 1.0, kDivisor, -kInf);
    et_ops::test::for_each_simd_target([&] {
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -1.0), finite_causal) == -1);
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &o.batch_mask, 1.0, kDivisor, 0.5), finite_batch) == -1);
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &transposed, 1.0, kDivisor, -kInf), transposed_chain) == -1);
      CHECK(first_difference(fused(c, o.q, o.k, o.v, &whole_rows, 1.0, kDivisor, -kInf), rows_chain) == -1);
    });
    if (c.rows > 1 && c.length > c.rows) {
      const auto infinite_causal = chain(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf);
      CHECK(first_difference(finite_causal, infinite_causal) != -1);  // the masked positions weigh in
    }
  }
}

TEST_CASE("attention: the unfused chain's results (bmm's scores) to rounding", "[portable][attention]") {
  auto rng = et_ops::test::seeded_rng(12);
  for (const Case& c : kCases) {
    const Operands o(c, rng);
    const auto expected = chain(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf, Scores::Bmm);
    const auto got = fused(c, o.q, o.k, o.v, &o.rows_mask, 1.0, kDivisor, -kInf);
    double largest = 0, difference = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      largest = std::max(largest, std::fabs(static_cast<double>(expected[i])));
      difference = std::max(difference, std::fabs(static_cast<double>(got[i]) - expected[i]));
    }
    CHECK(difference <= 1e-6 * largest);
  }
}

TEST_CASE("attention: cache positions no row attends are not read", "[portable][attention]") {
  // A prompt of T tokens at the start of a cache of S positions, as a
  // language model's first run: positions from T on hold garbage that the
  // chain would turn into NaN (0 * inf) and the fused kernel never touches.
  auto rng = et_ops::test::seeded_rng(13);
  for (const Case& c : {Case{1, 4, 2, 5, 40, 8, 8}, Case{1, 4, 4, 1, 70, 16, 9}}) {
    std::vector<uint8_t> m;
    for (int64_t t = 0; t < c.rows; ++t)
      for (int64_t s = 0; s < c.length; ++s) m.push_back(s <= t ? 1 : 0);
    const Mask mask({c.rows, c.length}, m);
    const Operands o(c, rng);
    auto k = o.k, v = o.v;
    for (int64_t h = 0; h < c.kv_heads; ++h)
      for (int64_t s = c.rows; s < c.length; ++s) {
        for (int64_t d = 0; d < c.depth; ++d) k[(h * c.length + s) * c.depth + d] = std::nanf("");
        for (int64_t d = 0; d < c.value_depth; ++d) v[(h * c.length + s) * c.value_depth + d] = kInf;
      }
    for (const double masked_score : {-static_cast<double>(kInf), static_cast<double>(std::numeric_limits<float>::lowest())}) {
      const auto expected = chain(c, o.q, o.k, o.v, &mask, 1.0, kDivisor, masked_score);
      et_ops::test::for_each_simd_target([&] {
        CHECK(first_difference(fused(c, o.q, k, v, &mask, 1.0, kDivisor, masked_score), expected) == -1);
        CHECK(first_difference(fused(c, o.q, k, v, &mask, 1.0, kDivisor, masked_score, {0, 1, 3, 2}), expected) ==
              -1);
      });
      const auto poisoned_chain = chain(c, o.q, k, v, &mask, 1.0, kDivisor, masked_score);
      CHECK(std::any_of(poisoned_chain.begin(), poisoned_chain.end(), [](float x) { return std::isnan(x); }));
    }
  }
}

TEST_CASE("attention: a row with every position masked is NaN, as softmax of -inf is", "[portable][attention]") {
  const Case c{1, 1, 1, 2, 3, 2, 2};
  const std::vector<float> q{1, 2, 3, 4}, k{1, 0, 0, 1, 1, 1}, v{1, 2, 3, 4, 5, 6};
  const Mask mask({2, 3}, {0, 0, 0, 1, 0, 1});
  const auto out = fused(c, q, k, v, &mask, 1.0, 1.0, -kInf);
  CHECK(std::isnan(out[0]));
  CHECK(std::isnan(out[1]));
  CHECK(first_difference(out, chain(c, q, k, v, &mask, 1.0, 1.0, -kInf)) == -1);
  CHECK(!std::isnan(out[2]));
}

TEST_CASE("attention: zero sizes", "[portable][attention]") {
  KernelContext ctx;
  SECTION("no positions: every output is +0.0") {
    Owned<float> q({1, 2, 3, 4}, Owned<float>::filled({1, 2, 3, 4}, 1));
    Owned<float> k({1, 1, 0, 4}, {});
    Owned<float> v({1, 1, 0, 5}, {});
    Owned<float> out({1, 2, 3, 5}, Owned<float>::filled({1, 2, 3, 5}, -1));
    REQUIRE(portable::attention_out(ctx, q, k, v, std::nullopt, std::nullopt, 1.0, 1.0, out));
    CHECK(bits_of(out.values) == bits_of(std::vector<float>(30, 0.0f)));
  }
  SECTION("no rows, no heads, no value features") {
    Owned<float> q({1, 2, 0, 4}, {});
    Owned<float> k({1, 2, 3, 4}, Owned<float>::filled({1, 2, 3, 4}, 1));
    Owned<float> v({1, 2, 3, 0}, {});
    Owned<float> out({1, 2, 0, 0}, {});
    CHECK(portable::attention_out(ctx, q, k, v, std::nullopt, std::nullopt, 1.0, 1.0, out));
    Owned<float> q0({1, 0, 2, 4}, {});
    Owned<float> k0({1, 0, 3, 4}, {});
    Owned<float> v0({1, 0, 3, 4}, {});
    Owned<float> out0({1, 0, 2, 4}, {});
    CHECK(portable::attention_out(ctx, q0, k0, v0, std::nullopt, std::nullopt, 1.0, 1.0, out0));
  }
  SECTION("no features: the scores are 0, the values are averaged") {
    Owned<float> q({1, 1, 1, 0}, {});
    Owned<float> k({1, 1, 2, 0}, {});
    Owned<float> v({1, 1, 2, 1}, {1, 3});
    Owned<float> out({1, 1, 1, 1}, {-1});
    REQUIRE(portable::attention_out(ctx, q, k, v, std::nullopt, std::nullopt, 1.0, 1.0, out));
    CHECK(out.values[0] == 2.0f);
  }
}

TEST_CASE("attention: errors name the argument", "[portable][attention]") {
  Owned<float> q({1, 4, 2, 8}, Owned<float>::filled({1, 4, 2, 8}, 0));
  Owned<float> k({1, 2, 5, 8}, Owned<float>::filled({1, 2, 5, 8}, 0));
  Owned<float> v({1, 2, 5, 3}, Owned<float>::filled({1, 2, 5, 3}, 0));
  Owned<float> out({1, 4, 2, 3}, Owned<float>::filled({1, 4, 2, 3}, 0));
  Owned<float> fill({}, {-kInf});
  const Mask mask({2, 5}, std::vector<uint8_t>(10, 1));
  KernelContext ctx;
  SECTION("a mask without a masked score, and a masked score without a mask") {
    CHECK_FALSE(portable::attention_out(ctx, q, k, v, mask.ref(), std::nullopt, 1.0, 1.0, out));
    CHECK_ERROR(ctx, "got a mask without a masked_score");
    KernelContext ctx2;
    CHECK_FALSE(portable::attention_out(ctx2, q, k, v, std::nullopt, fill.ref(), 1.0, 1.0, out));
    CHECK_ERROR(ctx2, "got a masked_score without a mask");
  }
  SECTION("a masked score of two elements, or of int type") {
    Owned<float> two({2}, {0, 0});
    CHECK_FALSE(portable::attention_out(ctx, q, k, v, mask.ref(), two.ref(), 1.0, 1.0, out));
    CHECK_ERROR(ctx, "masked_score must hold one element", "[2]");
    Owned<int32_t> integer({}, {0});
    KernelContext ctx2;
    CHECK_FALSE(portable::attention_out(ctx2, q, k, v, mask.ref(), integer.ref(), 1.0, 1.0, out));
    CHECK_ERROR(ctx2, "masked_score");
  }
  SECTION("a key of int8 elements") {
    Owned<int8_t> k8({1, 2, 5, 8}, Owned<int8_t>::filled({1, 2, 5, 8}, 0));
    CHECK_FALSE(portable::attention_out(ctx, q, k8, v, std::nullopt, std::nullopt, 1.0, 1.0, out));
    CHECK_ERROR(ctx, "key has dtype int8", "float32, float16 or bfloat16");
  }
  SECTION("a query of rank 3") {
    Owned<float> q3({4, 2, 8}, Owned<float>::filled({4, 2, 8}, 0));
    CHECK_FALSE(portable::attention_out(ctx, q3, k, v, std::nullopt, std::nullopt, 1.0, 1.0, out));
    CHECK_ERROR(ctx, "et_portable::attention.out", "query");
  }
  SECTION("heads that are not a multiple of the key's") {
    Owned<float> k3({1, 3, 5, 8}, Owned<float>::filled({1, 3, 5, 8}, 0));
    Owned<float> v3({1, 3, 5, 3}, Owned<float>::filled({1, 3, 5, 3}, 0));
    CHECK_FALSE(portable::attention_out(ctx, q, k3, v3, std::nullopt, std::nullopt, 1.0, 1.0, out));
    CHECK_ERROR(ctx, "query has 4 heads", "3");
  }
  SECTION("key features other than the query's") {
    Owned<float> k7({1, 2, 5, 7}, Owned<float>::filled({1, 2, 5, 7}, 0));
    CHECK_FALSE(portable::attention_out(ctx, q, k7, v, std::nullopt, std::nullopt, 1.0, 1.0, out));
    CHECK_ERROR(ctx, "key of shape [1, 2, 5, 7]", "query of shape [1, 4, 2, 8]");
  }
  SECTION("value positions other than the key's") {
    Owned<float> v6({1, 2, 6, 3}, Owned<float>::filled({1, 2, 6, 3}, 0));
    CHECK_FALSE(portable::attention_out(ctx, q, k, v6, std::nullopt, std::nullopt, 1.0, 1.0, out));
    CHECK_ERROR(ctx, "value of shape [1, 2, 6, 3]", "key");
  }
  SECTION("a float mask") {
    Owned<float> m({2, 5}, Owned<float>::filled({2, 5}, 1));
    CHECK_FALSE(portable::attention_out(ctx, q, k, v, m.ref(), fill.ref(), 1.0, 1.0, out));
    CHECK_ERROR(ctx, "mask", "bool");
  }
  SECTION("a mask that does not broadcast to the scores") {
    const Mask m({3, 5}, std::vector<uint8_t>(15, 1));
    CHECK_FALSE(portable::attention_out(ctx, q, k, v, m.ref(), fill.ref(), 1.0, 1.0, out));
    CHECK_ERROR(ctx, "mask of shape [3, 5]", "[1, 4, 2, 5]");
  }
  SECTION("out of the wrong shape") {
    Owned<float> wrong({1, 4, 2, 8}, Owned<float>::filled({1, 4, 2, 8}, 0));
    CHECK_FALSE(portable::attention_out(ctx, q, k, v, std::nullopt, std::nullopt, 1.0, 1.0, wrong));
    CHECK_ERROR(ctx, "out", "[1, 4, 2, 3]");
  }
  SECTION("out overlapping the query") {
    Owned<float> q3({1, 4, 2, 3}, Owned<float>::filled({1, 4, 2, 3}, 0));
    Owned<float> k3({1, 2, 5, 3}, Owned<float>::filled({1, 2, 5, 3}, 0));
    CHECK_FALSE(portable::attention_out(ctx, q3, k3, v, std::nullopt, std::nullopt, 1.0, 1.0, q3));
    CHECK_ERROR(ctx, "out", "query");
  }
}
