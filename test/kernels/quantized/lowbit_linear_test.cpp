// et_quantized::linear_8da4w.out / linear_8da8w.out: bit for bit the
// documented integer-then-float order (an independent scalar model built on
// the library's own per-token quantize), the same bytes under every Highway
// target (the AVX-512 VNNI one included) and on 1 and 2 threads, within the
// documented bound of the decomposed reference chain (choose_qparams ->
// quantize -> dequantize_per_token -> dequantize weights -> float linear),
// and every error naming its argument. et_quantized::linear_int4.out /
// linear_int8.out: the documented float order bit for bit, the same bytes
// everywhere, within the bound of dequantize -> float linear.
#include <catch2/catch.hpp>
#include <pthreadpool.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "et_ops/kernels/quantized.h"
#include "et_ops/registry.h"
#include "et_ops/value.h"
#include "simd_targets.h"
#include "test_util.h"

namespace {

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::TensorRef;
using et_ops::test::bits_of;
using et_ops::test::for_each_simd_target;
using et_ops::test::Owned;
using et_ops::test::require_error;
namespace q = et_ops::kernels::quantized;

struct Problem {
  int64_t tokens, in, out, group_size;
  bool four_bit, with_bias;
};

// Every target of for_each_simd_target, and the AVX-512 VNNI one (AVX3_DL:
// only the low-bit linears are compiled for it) where the CPU has it.
template <typename F>
void for_each_target_and_vnni(F&& f) {
  for_each_simd_target(f);
  if ((hwy::SupportedTargets() & HWY_AVX3_DL) == 0) return;
  const et_ops::test::TargetOverride vnni(HWY_AVX3_DL | HWY_AVX3);
  INFO("Highway target AVX3_DL");
  f();
}

struct Data {
  std::vector<float> x, scales, bias;
  std::vector<int8_t> w;        // [N, K] integer weights
  std::vector<uint8_t> packed;  // [N, K/2] for int4
};

void pack_int4(Data& d);

Data random_data(const Problem& p, std::mt19937_64& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> w4(-8, 7), w8(-128, 127);
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  Data d;
  d.x.resize(static_cast<std::size_t>(p.tokens * p.in));
  for (auto& v : d.x) v = normal(rng) * 3.0f;
  d.w.resize(static_cast<std::size_t>(p.out * p.in));
  for (auto& v : d.w) v = static_cast<int8_t>(p.four_bit ? w4(rng) : w8(rng));
  d.scales.resize(static_cast<std::size_t>(p.out * (p.in / p.group_size)));
  for (auto& s : d.scales) s = scale(rng);
  if (p.with_bias)
    for (int64_t n = 0; n < p.out; ++n) d.bias.push_back(normal(rng));
  if (p.four_bit) pack_int4(d);
  return d;
}

// d.packed from d.w, int4 weights.
void pack_int4(Data& d) {
  d.packed.clear();
  for (std::size_t m = 0; m < d.w.size() / 2; ++m)
    d.packed.push_back(static_cast<uint8_t>(((d.w[2 * m] + 8) << 4) | (d.w[2 * m + 1] + 8)));
}

// The extremes of every integer the kernels sum: rows of the smallest
// weight, of the largest, alternating and random; one token of
// non-negative values (zero point -128), one of non-positive ones (zero
// point 127) and one of both signs, its quantized values reaching -128 and
// 127.
Data extreme_data(const Problem& p, std::mt19937_64& rng) {
  Data d = random_data(p, rng);
  const int low = p.four_bit ? -8 : -128, high = p.four_bit ? 7 : 127;
  for (int64_t n = 0; n < p.out; ++n)
    for (int64_t k = 0; k < p.in; ++k) {
      int8_t& w = d.w[static_cast<std::size_t>(n * p.in + k)];
      if (n % 4 == 0) w = static_cast<int8_t>(low);
      if (n % 4 == 1) w = static_cast<int8_t>(high);
      if (n % 4 == 2) w = static_cast<int8_t>(k % 2 == 0 ? low : high);
    }
  if (p.four_bit) pack_int4(d);
  for (int64_t t = 0; t < p.tokens; ++t)
    for (int64_t k = 0; k < p.in; ++k) {
      float& x = d.x[static_cast<std::size_t>(t * p.in + k)];
      if (t % 3 == 0) x = std::fabs(x);
      if (t % 3 == 1) x = -std::fabs(x);
    }
  return d;
}

// The per-token quantization of the reference: the library's two kernels.
void quantize_tokens(const Problem& p, const Data& d, std::vector<int8_t>& qx, std::vector<double>& s,
                     std::vector<int64_t>& zp) {
  Owned<float> x({p.tokens, p.in}, d.x);
  Owned<double> scales({p.tokens, 1}, std::vector<double>(static_cast<std::size_t>(p.tokens)));
  Owned<int64_t> zps({p.tokens, 1}, std::vector<int64_t>(static_cast<std::size_t>(p.tokens)));
  Owned<int8_t> out({p.tokens, p.in}, std::vector<int8_t>(d.x.size()));
  KernelContext ctx;
  REQUIRE(q::choose_qparams_per_token_asymmetric_out(ctx, x, DType::Int8, scales, zps));
  REQUIRE(q::quantize_per_token_out(ctx, x, scales, zps, -128, 127, DType::Int8, out));
  qx = out.values;
  s = scales.values;
  zp = zps.values;
}

// The documented order, written out with scalars: the exact integer
// products P_g = sum q * w scaled into one chain, the zero point's term
// z * C (C the row's scaled weight sums) taken off at the end.
std::vector<float> model(const Problem& p, const Data& d) {
  std::vector<int8_t> qx;
  std::vector<double> s;
  std::vector<int64_t> zp;
  quantize_tokens(p, d, qx, s, zp);
  const int64_t groups = p.in / p.group_size;
  std::vector<float> scaled_sums(static_cast<std::size_t>(p.out), 0.0f);
  for (int64_t n = 0; n < p.out; ++n)
    for (int64_t g = 0; g < groups; ++g) {
      int64_t sum = 0;
      for (int64_t k = g * p.group_size; k < (g + 1) * p.group_size; ++k) sum += d.w[static_cast<std::size_t>(n * p.in + k)];
      float& c = scaled_sums[static_cast<std::size_t>(n)];
      c = c + static_cast<float>(sum) * d.scales[static_cast<std::size_t>(n * groups + g)];
    }
  std::vector<float> y(static_cast<std::size_t>(p.tokens * p.out));
  for (int64_t t = 0; t < p.tokens; ++t)
    for (int64_t n = 0; n < p.out; ++n) {
      float acc = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        int64_t product = 0;
        for (int64_t k = g * p.group_size; k < (g + 1) * p.group_size; ++k)
          product += qx[static_cast<std::size_t>(t * p.in + k)] * d.w[static_cast<std::size_t>(n * p.in + k)];
        acc = acc + static_cast<float>(product) * d.scales[static_cast<std::size_t>(n * groups + g)];
      }
      const float zero_point_term =
          static_cast<float>(zp[static_cast<std::size_t>(t)]) * scaled_sums[static_cast<std::size_t>(n)];
      float v = (acc - zero_point_term) * static_cast<float>(s[static_cast<std::size_t>(t)]);
      if (p.with_bias) v = v + d.bias[static_cast<std::size_t>(n)];
      y[static_cast<std::size_t>(t * p.out + n)] = v;
    }
  return y;
}

enum class Activation { Dynamic, Float };

const char* operator_name(const Problem& p, Activation a) {
  if (a == Activation::Dynamic) return p.four_bit ? "et_quantized::linear_8da4w.out" : "et_quantized::linear_8da8w.out";
  return p.four_bit ? "et_quantized::linear_int4.out" : "et_quantized::linear_int8.out";
}

// The typed entry point (one thread), or with threads > 1 the registered
// prepared kernel's functions on a pool of that many threads.
std::vector<float> run(const Problem& p, const Data& d, Activation a = Activation::Dynamic, std::size_t threads = 1) {
  Owned<float> x({p.tokens, p.in}, d.x);
  Owned<float> scales({p.out, p.in / p.group_size}, d.scales);
  Owned<float> bias({p.out}, d.bias.empty() ? std::vector<float>(static_cast<std::size_t>(p.out)) : d.bias);
  Owned<float> out({p.tokens, p.out}, std::vector<float>(static_cast<std::size_t>(p.tokens * p.out), -7.0f));
  Owned<uint8_t> w4({p.out, p.in / 2}, d.packed);
  Owned<int8_t> w8({p.out, p.in}, d.w);
  const TensorRef w = p.four_bit ? w4.ref() : w8.ref();
  const std::optional<TensorRef> b = p.with_bias ? std::optional<TensorRef>(bias.ref()) : std::nullopt;
  KernelContext ctx;
  bool ok;
  if (threads > 1) {
    REQUIRE(q::register_kernels().ok());
    const et_ops::ResolvedKernel kernel = et_ops::lookup_kernel(operator_name(p, a));
    REQUIRE(kernel.prepared != nullptr);
    et_ops::Tensor* tensors[] = {&x.tensor, p.four_bit ? &w4.tensor : &w8.tensor, &scales.tensor, &bias.tensor,
                                 &out.tensor};
    std::vector<et_ops_value> values{et_ops::tensor_value(*tensors[0]), et_ops::tensor_value(*tensors[1]),
                                     et_ops::tensor_value(*tensors[2])};
    if (p.four_bit) values.push_back(et_ops::int_value(p.group_size));
    values.push_back(p.with_bias ? et_ops::tensor_value(*tensors[3]) : et_ops::none_value());
    values.push_back(et_ops::tensor_value(*tensors[4]));
    std::vector<et_ops_value*> args;
    for (et_ops_value& v : values) args.push_back(&v);
    const std::unique_ptr<pthreadpool, void (*)(pthreadpool_t)> pool(pthreadpool_create(threads), pthreadpool_destroy);
    REQUIRE(pool != nullptr);
    const et_ops_prepared_kernel& f = *kernel.prepared;
    void* state = f.prepare(ctx.raw(), args.data(), args.size());
    REQUIRE(state != nullptr);
    const et_ops_run_environment env{sizeof(et_ops_run_environment), static_cast<uint32_t>(threads), pool.get()};
    f.run(ctx.raw(), state, nullptr, &env, args.data(), args.size());
    f.release_prepared(state);
    ok = ctx.ok();
  } else if (a == Activation::Dynamic) {
    ok = p.four_bit ? q::linear_8da4w_out(ctx, x, w, scales, p.group_size, b, out)
                    : q::linear_8da8w_out(ctx, x, w, scales, b, out);
  } else {
    ok = p.four_bit ? q::linear_int4_out(ctx, x, w, scales, p.group_size, b, out)
                    : q::linear_int8_out(ctx, x, w, scales, b, out);
  }
  INFO(ctx.message());
  REQUIRE(ok);
  return out.values;
}

std::size_t mismatches(const std::vector<float>& got, const std::vector<float>& expected) {
  REQUIRE(got.size() == expected.size());
  std::size_t count = 0;
  for (std::size_t i = 0; i < got.size(); ++i) count += bits_of(got[i]) != bits_of(expected[i]);
  return count;
}

// The weights as the reference dequantizes them: fl32(fl32(w) * scale).
std::vector<float> dequantized(const Problem& p, const Data& d) {
  const int64_t groups = p.in / p.group_size;
  std::vector<float> wd(d.w.size());
  for (int64_t n = 0; n < p.out; ++n)
    for (int64_t k = 0; k < p.in; ++k) {
      const auto i = static_cast<std::size_t>(n * p.in + k);
      wd[i] = static_cast<float>(d.w[i]) * d.scales[static_cast<std::size_t>(n * groups + k / p.group_size)];
    }
  return wd;
}

// The weight-only operators' documented order, with scalars: each group's
// products of x and the integer weights summed, then scaled into the chain.
std::vector<float> float_model(const Problem& p, const Data& d) {
  const int64_t groups = p.in / p.group_size;
  std::vector<float> y(static_cast<std::size_t>(p.tokens * p.out));
  for (int64_t t = 0; t < p.tokens; ++t)
    for (int64_t n = 0; n < p.out; ++n) {
      float acc = 0.0f;
      for (int64_t g = 0; g < groups; ++g) {
        float sum = 0.0f;
        for (int64_t k = g * p.group_size; k < (g + 1) * p.group_size; ++k)
          sum = sum + d.x[static_cast<std::size_t>(t * p.in + k)] *
                          static_cast<float>(d.w[static_cast<std::size_t>(n * p.in + k)]);
        acc = acc + sum * d.scales[static_cast<std::size_t>(n * groups + g)];
      }
      if (p.with_bias) acc = acc + d.bias[static_cast<std::size_t>(n)];
      y[static_cast<std::size_t>(t * p.out + n)] = acc;
    }
  return y;
}

const Problem kProblems[] = {
    {1, 64, 16, 32, true, false},  {3, 96, 7, 32, true, true},    {5, 128, 9, 64, true, true},
    {2, 40, 5, 8, true, false},    {1, 64, 16, 64, false, true},  {4, 200, 11, 200, false, false},
    {1, 768, 8, 32, true, true},   {17, 256, 3, 128, true, false}, {2, 36, 33, 12, true, true},
    {3, 30, 40, 30, false, true},  {2, 256, 48, 32, true, false},
    // The kernels' tile remainders: tokens 1 to 17 against tiles of 2 to 8
    // tokens (6 against two blocks at once with VNNI), 8 blocks against the
    // weight-only decode's tiles of 2 to 6 blocks (N = 117: a part block),
    // groups padded to whole chunks.
    {1, 36, 117, 12, true, true},  {2, 30, 117, 10, true, true},  {7, 24, 117, 12, true, false},
    {5, 48, 70, 24, true, true},   {9, 64, 37, 16, true, true},   {1, 14, 117, 14, false, false},
    {3, 30, 117, 30, false, true}, {9, 64, 37, 64, false, true},  {17, 20, 21, 20, false, false},
    // More whole blocks than one call of the kernel takes (64), in pairs
    // with VNNI and enough tokens, and a part block.
    {7, 32, 1049, 32, true, true},  {13, 32, 1040, 32, false, false},
};

TEST_CASE("linear_8da4w / 8da8w: the documented order bit for bit, the same bytes on every target", "[lowbit]") {
  auto rng = et_ops::test::seeded_rng(8);
  for (const Problem& p : kProblems) {
    INFO("T " << p.tokens << " K " << p.in << " N " << p.out << " group " << p.group_size << " int4 " << p.four_bit);
    const Data d = random_data(p, rng);
    const std::vector<float> expected = model(p, d);
    for_each_target_and_vnni([&] {
      CHECK(mismatches(run(p, d), expected) == 0);
      CHECK(mismatches(run(p, d, Activation::Dynamic, 2), expected) == 0);
    });
  }
}

TEST_CASE("linear_8da4w / 8da8w: extreme weights and activations over long groups, bit for bit on every target",
          "[lowbit]") {
  const Problem problems[] = {{3, 2048, 20, 1024, true, false},
                              {3, 2048, 20, 2048, false, true},
                              {6, 512, 17, 512, true, true},
                              {6, 520, 17, 520, false, false}};
  auto rng = et_ops::test::seeded_rng(9);
  for (const Problem& p : problems) {
    INFO("T " << p.tokens << " K " << p.in << " N " << p.out << " group " << p.group_size << " int4 " << p.four_bit);
    const Data d = extreme_data(p, rng);
    const std::vector<float> expected = model(p, d);
    for_each_target_and_vnni([&] { CHECK(mismatches(run(p, d), expected) == 0); });
  }
}

TEST_CASE("linear_int4 / int8: the documented order bit for bit, the same bytes on every target and thread count",
          "[lowbit]") {
  auto rng = et_ops::test::seeded_rng(10);
  for (const Problem& p : kProblems) {
    INFO("T " << p.tokens << " K " << p.in << " N " << p.out << " group " << p.group_size << " int4 " << p.four_bit);
    const Data d = random_data(p, rng);
    const std::vector<float> expected = float_model(p, d);
    for_each_target_and_vnni([&] {
      CHECK(mismatches(run(p, d, Activation::Float), expected) == 0);
      CHECK(mismatches(run(p, d, Activation::Float, 2), expected) == 0);
    });
  }
}

// One or two tokens take the decode kernels, which form a product from
// the weight's field in place times x scaled by a power of two where that
// scaling is exact, and shift the field out where it is not (|x| below
// 2^-98): tokens with such activations (tiny normals, subnormals, zeros of
// both signs, infinities) keep the documented bits, and so do group counts
// that leave a remainder after the groups summed at once.
TEST_CASE("linear_int4 / int8 decode: tiny, zero and infinite activations, and group remainders, bit for bit",
          "[lowbit]") {
  const Problem problems[] = {{1, 7 * 32, 40, 32, true, true},  {2, 5 * 24, 33, 24, true, false},
                              {1, 3 * 20, 17, 20, true, true},  {2, 96, 50, 96, false, true},
                              {1, 36, 49, 36, false, false}};
  const float specials[] = {0x1.fffffep-99f, -0x1.234567p-110f, 0x1.8p-140f, -0x1p-149f,
                            0.0f,           -0.0f,             0x1p-98f,    -0x1.fffffep-98f};
  auto rng = et_ops::test::seeded_rng(11);
  for (const Problem& p : problems)
    for (const bool tiny : {false, true}) {
      INFO("T " << p.tokens << " K " << p.in << " N " << p.out << " group " << p.group_size << " int4 "
                << p.four_bit << " tiny " << tiny);
      Data d = random_data(p, rng);
      // tiny: the first token's activations all tiny or zero (its sums
      // stay that small), the second's sprinkled; otherwise a few zeros
      // and an infinity.
      for (std::size_t i = 0; i < d.x.size(); ++i)
        if (tiny && i < static_cast<std::size_t>(p.in))
          d.x[i] = i % 9 == 8 ? specials[i % 8] : std::ldexp(d.x[i], -100 - static_cast<int>(i % 41));
        else if (i % 5 == 0)
          d.x[i] = tiny ? specials[(i / 5) % 8] : specials[4 + i % 2];
      if (!tiny) d.x[3] = -std::numeric_limits<float>::infinity();
      const std::vector<float> expected = float_model(p, d);
      for_each_target_and_vnni([&] {
        CHECK(mismatches(run(p, d, Activation::Float), expected) == 0);
        CHECK(mismatches(run(p, d, Activation::Float, 2), expected) == 0);
      });
    }
}

// dequantize -> float linear, summed in binary64: the kernel's roundings
// (a product, the group's chain, its scaling, the groups' chain and the
// bias: group_size + groups + 2 at most) and the reference's dequantized
// weight (one) bound the difference (docs/kernels-quantized.md).
TEST_CASE("linear_int4 / int8: within the documented bound of dequantize -> linear", "[lowbit]") {
  auto rng = et_ops::test::seeded_rng(11);
  for (const Problem& p : kProblems) {
    const Data d = random_data(p, rng);
    const std::vector<float> wd = dequantized(p, d);
    const std::vector<float> got = run(p, d, Activation::Float);
    const double u = std::ldexp(1.0, -24);
    for (int64_t t = 0; t < p.tokens; ++t)
      for (int64_t n = 0; n < p.out; ++n) {
        double sum = p.with_bias ? d.bias[static_cast<std::size_t>(n)] : 0.0, magnitude = std::fabs(sum);
        for (int64_t k = 0; k < p.in; ++k) {
          const double product = static_cast<double>(d.x[static_cast<std::size_t>(t * p.in + k)]) *
                                 wd[static_cast<std::size_t>(n * p.in + k)];
          sum += product;
          magnitude += std::fabs(product);
        }
        const double bound = static_cast<double>(p.group_size + p.in / p.group_size + 4) * u * magnitude;
        const double error = std::fabs(got[static_cast<std::size_t>(t * p.out + n)] - sum);
        INFO("t " << t << " n " << n << " error " << error << " bound " << bound);
        CHECK(error <= bound);
      }
  }
}

// The reference chain with the library's kernels, the linear summed in
// binary64 (the chain's float32 linear has no order of its own to match).
// The bound (docs/kernels-quantized.md): the kernel's G + 2 roundings of
// each scaled product P_g and of each scaled weight sum, on the magnitude
// M = s * sum |w[k]| * ws * (|q[k]| + |z|) that bounds both, the chain's two
// roundings of its dequantized values (at most 2u of M too), and the last
// three roundings (subtraction, token scale, bias) of the result.
TEST_CASE("linear_8da4w / 8da8w: within the documented bound of the decomposed reference chain", "[lowbit]") {
  auto rng = et_ops::test::seeded_rng(9);
  for (const Problem& p : kProblems) {
    const Data d = random_data(p, rng);
    std::vector<int8_t> qx;
    std::vector<double> s;
    std::vector<int64_t> zp;
    quantize_tokens(p, d, qx, s, zp);
    // dequantize_per_token (f64 scales) and the weights' dequantize, as the chain does.
    Owned<int8_t> qt({p.tokens, p.in}, qx);
    Owned<double> st({p.tokens, 1}, s);
    Owned<int64_t> zt({p.tokens, 1}, zp);
    Owned<float> xd({p.tokens, p.in}, std::vector<float>(d.x.size()));
    KernelContext ctx;
    REQUIRE(q::dequantize_per_token_out(ctx, qt, st, zt, -128, 127, DType::Int8, DType::Float32, xd));
    Owned<int8_t> w({p.out, p.in}, d.w);
    Owned<float> ws({p.out, p.in / p.group_size}, d.scales);
    Owned<float> wd({p.out, p.in}, std::vector<float>(d.w.size()));
    REQUIRE(q::dequantize_per_channel_group_out(ctx, w, ws, std::nullopt, -128, 127, DType::Int8, p.group_size,
                                                DType::Float32, wd));
    const std::vector<float> got = run(p, d);
    const double u = std::ldexp(1.0, -24);
    const int64_t groups = p.in / p.group_size;
    for (int64_t t = 0; t < p.tokens; ++t)
      for (int64_t n = 0; n < p.out; ++n) {
        const auto ti = static_cast<std::size_t>(t);
        double sum = 0.0, magnitude = 0.0;
        for (int64_t k = 0; k < p.in; ++k) {
          const auto wi = static_cast<std::size_t>(n * p.in + k);
          sum += static_cast<double>(xd.values[static_cast<std::size_t>(t * p.in + k)]) * wd.values[wi];
          magnitude += s[ti] * std::abs(d.w[wi]) * d.scales[static_cast<std::size_t>(n * groups + k / p.group_size)] *
                       static_cast<double>(std::abs(qx[static_cast<std::size_t>(t * p.in + k)]) + std::abs(zp[ti]));
        }
        const double bias = p.with_bias ? d.bias[static_cast<std::size_t>(n)] : 0.0;
        const double reference = sum + bias;
        const double bound = (static_cast<double>(groups) + 6.0) * u * magnitude + 4.0 * u * std::fabs(reference);
        const double error = std::fabs(got[static_cast<std::size_t>(t * p.out + n)] - reference);
        INFO("t " << t << " n " << n << " error " << error << " bound " << bound);
        CHECK(error <= bound);
      }
  }
}

TEST_CASE("linear_8da4w: leading batch dims, and an empty batch", "[lowbit]") {
  Owned<float> x({2, 1, 4}, {1, -2, 3, 0.5f, -1, 0, 2, 4});
  Owned<uint8_t> w({2, 2}, {0x9F, 0x80, 0x80, 0x7A});  // [1, 7, 0, -8], [0, -8, -1, 2]
  Owned<float> ws({2, 2}, {0.5f, 0.25f, 1.0f, 2.0f});
  Owned<float> out({2, 1, 2}, Owned<float>::filled({2, 1, 2}, 0.0f));
  KernelContext ctx;
  REQUIRE(q::linear_8da4w_out(ctx, x, w, ws, 2, std::nullopt, out));
  // Each output within a few quantization steps of the float product.
  const float exact[] = {1 * 0.5f - 2 * 7 * 0.5f + 3 * 0 * 0.25f + 0.5f * -8 * 0.25f,
                         1 * 0 * 1.0f - 2 * -8 * 1.0f + 3 * -1 * 2.0f + 0.5f * 2 * 2.0f,
                         -1 * 0.5f + 0 + 2 * 0 + 4 * -8 * 0.25f, -1 * 0 + 0 + 2 * -1 * 2.0f + 4 * 2 * 2.0f};
  for (int i = 0; i < 4; ++i) CHECK(std::fabs(out.values[static_cast<std::size_t>(i)] - exact[i]) < 0.2f);
  Owned<float> none({0, 4}, {});
  Owned<float> none_out({0, 2}, {});
  CHECK(q::linear_8da4w_out(ctx, none, w, ws, 2, std::nullopt, none_out));
}

TEST_CASE("linear_8da4w / 8da8w: every error names its argument", "[lowbit][errors]") {
  Owned<float> x({2, 4}, Owned<float>::filled({2, 4}, 1.0f));
  Owned<uint8_t> w4({3, 2}, Owned<uint8_t>::filled({3, 2}, 0x88));
  Owned<int8_t> w8({3, 4}, Owned<int8_t>::filled({3, 4}, 1));
  Owned<float> ws({3, 2}, Owned<float>::filled({3, 2}, 1.0f));
  Owned<float> ws1({3}, Owned<float>::filled({3}, 1.0f));
  Owned<float> out({2, 3}, Owned<float>::filled({2, 3}, 0.0f));
  auto expect_4w = [&](TensorRef input, TensorRef weight, TensorRef scales, int64_t group, std::optional<TensorRef> bias,
                       TensorRef o, std::initializer_list<std::string_view> fragments) {
    KernelContext ctx;
    CHECK_FALSE(q::linear_8da4w_out(ctx, input, weight, scales, group, bias, o));
    require_error(ctx, fragments);
  };
  Owned<double> x64({2, 4}, std::vector<double>(8, 1.0));
  expect_4w(x64, w4, ws, 2, std::nullopt, out, {"input", "float64"});
  expect_4w(x, w8, ws, 2, std::nullopt, out, {"weight", "int8"});
  Owned<uint8_t> w_wide({3, 4}, Owned<uint8_t>::filled({3, 4}, 0x88));
  expect_4w(x, w_wide, ws, 2, std::nullopt, out, {"weight must be [N, 2]"});
  expect_4w(x, w4, ws, 3, std::nullopt, out, {"group_size 3"});
  expect_4w(x, w4, ws, 4, std::nullopt, out, {"weight_scales has 6 elements"});
  Owned<float> bad_scales({3, 2}, {1, 1, 1, 0, 1, 1});
  expect_4w(x, w4, bad_scales, 2, std::nullopt, out, {"weight_scales[3] must be finite and > 0"});
  Owned<float> short_bias({2}, {0, 0});
  expect_4w(x, w4, ws, 2, short_bias.ref(), out, {"bias has shape [2], expected [3]"});
  Owned<float> wrong_out({2, 4}, Owned<float>::filled({2, 4}, 0.0f));
  expect_4w(x, w4, ws, 2, std::nullopt, wrong_out, {"out has shape [2, 4]"});
  Owned<float> transposed({2, 4}, Owned<float>::filled({2, 4}, 1.0f), {1, 0});
  expect_4w(transposed, w4, ws, 2, std::nullopt, out, {"input must be contiguous"});
  Owned<float> nan_x({2, 4}, {1, 2, std::numeric_limits<float>::quiet_NaN(), 0, 0, 0, 0, 0});
  expect_4w(nan_x, w4, ws, 2, std::nullopt, out, {"NaN"});
  KernelContext ctx;
  CHECK_FALSE(q::linear_8da8w_out(ctx, x, w4, ws1, std::nullopt, out));
  require_error(ctx, {"weight", "uint8"});
  KernelContext ok_ctx;
  CHECK(q::linear_8da8w_out(ok_ctx, x, w8, ws1, std::nullopt, out));
  KernelContext int4_ctx;
  CHECK_FALSE(q::linear_int4_out(int4_ctx, x, w4, ws, 3, std::nullopt, out));
  require_error(int4_ctx, {"et_quantized::linear_int4.out", "group_size 3"});
  KernelContext int8_ctx;
  CHECK_FALSE(q::linear_int8_out(int8_ctx, x, w8, bad_scales, std::nullopt, out));
  require_error(int8_ctx, {"et_quantized::linear_int8.out", "weight_scales has 6 elements"});
  // The registered kernels repack constant weights: a weight with no data
  // (an input of the program) is refused when the program loads.
  Owned<uint8_t> no_data({3, 2}, {});
  no_data.tensor.raw()->data = nullptr;
  KernelContext load_ctx;
  CHECK_FALSE(q::linear_8da4w_out(load_ctx, x, no_data, ws, 2, std::nullopt, out));
  require_error(load_ctx, {"weight and weight_scales must be constants"});
}

}  // namespace
