// Calling the xnnpack kernel set's operators in tests: tensors with the
// padding XNNPACK may read past an input, argument lists in schema order,
// the one-call C-ABI kernel of each record (prepare, run, release) or its
// prepared functions on a thread pool, the reference's rounding, and the
// comparison of the bytes written on 1 and 2 threads and on every engine
// and microkernel path.
#ifndef ET_OPS_TEST_KERNELS_XNNPACK_TEST_UTIL_H
#define ET_OPS_TEST_KERNELS_XNNPACK_TEST_UTIL_H

#include <catch2/catch.hpp>
#include <pthreadpool.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "et_ops/kernel_context.h"
#include "et_ops/kernels/xnnpack.h"
#include "et_ops/registry.h"
#include "et_ops/tensor.h"
#include "et_ops/value.h"

namespace et_ops::test {

// A tensor over its own bytes, 64 spare bytes after them (XNNPACK reads up
// to XNN_EXTRA_BYTES past an input).
struct OwnedTensor {
  std::vector<uint8_t> bytes;
  std::unique_ptr<Tensor> tensor;
  OwnedTensor(DType dtype, std::vector<int64_t> sizes, std::vector<uint8_t> dim_order = {}) {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    bytes.assign(static_cast<std::size_t>(n) * dtype_size(dtype) + 64, 0);
    tensor = std::make_unique<Tensor>(dtype, bytes.data(), std::move(sizes), std::move(dim_order));
  }
  template <typename T>
  T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <typename T>
  const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
  // The tensor's own bytes (not the spare ones).
  std::vector<uint8_t> contents() const { return {bytes.begin(), bytes.end() - 64}; }
};

// The dim order of a channels-last [N, C, H, W] tensor.
inline const std::vector<uint8_t> kChannelsLast{0, 2, 3, 1};

// Builds the argument list of one call, in schema order.
class Call {
 public:
  Call& tensor(OwnedTensor& t) { return add(tensor_value(*t.tensor)); }
  Call& real(double v) { return add(double_value(v)); }
  Call& integer(int64_t v) { return add(int_value(v)); }
  Call& boolean(bool v) { return add(bool_value(v)); }
  Call& list(std::vector<int64_t> v) {
    lists_.push_back(std::move(v));
    return add(int_list_value(lists_.back().data(), static_cast<int64_t>(lists_.back().size())));
  }
  Call& none() { return add(none_value()); }
  Call& tensors(const std::vector<OwnedTensor*>& ts) {
    std::vector<et_ops_tensor*> raw;
    for (OwnedTensor* t : ts) raw.push_back(const_cast<et_ops_tensor*>(t->tensor->raw()));
    tensor_lists_.push_back(std::move(raw));
    return add(tensor_list_value(tensor_lists_.back().data(), static_cast<int64_t>(tensor_lists_.back().size())));
  }

  // Runs `op`'s registered kernel: on one thread its plain C-ABI kernel
  // (prepare, run and release in one call), on more its prepared functions
  // with a thread pool of that many threads. Returns the context.
  KernelContext run(const char* op, std::size_t threads = 1) {
    std::vector<et_ops_value*> args = arguments();
    KernelContext ctx;
    if (threads == 1) {
      kernel_of(op).fn(ctx.raw(), args.data(), args.size());
      return ctx;
    }
    return run_prepared(op, threads, 1, [](int) {}, [](int) {});
  }

  // Prepares `op` once and runs one instance of it `runs` times on a pool of
  // `threads` threads, calling before(i) and after(i) around run i (which
  // may change the tensors' contents); stops at the first failure.
  template <typename Before, typename After>
  KernelContext run_prepared(const char* op, std::size_t threads, int runs, Before before, After after) {
    std::vector<et_ops_value*> args = arguments();
    const ResolvedKernel kernel = kernel_of(op);
    REQUIRE(kernel.prepared != nullptr);
    const std::unique_ptr<pthreadpool, void (*)(pthreadpool_t)> pool(pthreadpool_create(threads), pthreadpool_destroy);
    REQUIRE(pool != nullptr);
    const et_ops_prepared_kernel& f = *kernel.prepared;
    KernelContext ctx;
    void* state = f.prepare(ctx.raw(), args.data(), args.size());
    if (!ctx.ok()) return ctx;
    void* instance = f.instantiate ? f.instantiate(ctx.raw(), state, args.data(), args.size()) : nullptr;
    const et_ops_run_environment env{sizeof(et_ops_run_environment), uint32_t(threads), pool.get()};
    for (int i = 0; i < runs && ctx.ok(); ++i) {
      before(i);
      f.run(ctx.raw(), state, instance, &env, args.data(), args.size());
      if (ctx.ok()) after(i);
    }
    if (instance != nullptr) f.release_instance(instance);
    f.release_prepared(state);
    return ctx;
  }

 private:
  static ResolvedKernel kernel_of(const char* op) {
    static const bool registered = kernels::xnnpack::register_kernels().ok();
    REQUIRE(registered);
    const ResolvedKernel kernel = lookup_kernel(op);
    REQUIRE(kernel.fn != nullptr);
    return kernel;
  }
  std::vector<et_ops_value*> arguments() {
    std::vector<et_ops_value*> args;
    for (et_ops_value& v : values_) args.push_back(&v);
    return args;
  }
  Call& add(et_ops_value v) {
    values_.push_back(v);
    return *this;
  }
  std::deque<et_ops_value> values_;
  std::deque<std::vector<int64_t>> lists_;
  std::deque<std::vector<et_ops_tensor*>> tensor_lists_;
};

// The arguments of an int8 binary operator (add.out and mul.out share their
// shape) from a fixture's self, other, out and their quantization.
template <typename Fixture>
Call binary_call(Fixture& f) {
  Call call;
  call.tensor(f.self).real(f.self_scale).integer(f.self_zp).tensor(f.other).real(f.other_scale).integer(f.other_zp)
      .real(f.c.out_scale).integer(f.out_zp).integer(f.c.out_min).integer(f.c.out_max).tensor(f.out);
  return call;
}

// Calls f(out_offset, self_offset, other_offset) for every element of out,
// the operands broadcast (a dimension of size 1 repeats); offsets in elements.
template <typename F>
void for_each_broadcast(TensorRef self, TensorRef other, TensorRef out, F f) {
  std::vector<int64_t> index(std::size_t(out.dim()), 0);
  for (int64_t n = 0; n < out.numel(); ++n) {
    int64_t to = 0, a = 0, b = 0;
    for (int64_t d = 0; d < out.dim(); ++d) {
      const int64_t i = index[std::size_t(d)];
      to += i * out.stride(d);
      a += (self.size(d) == 1 ? 0 : i) * self.stride(d);
      b += (other.size(d) == 1 ? 0 : i) * other.stride(d);
    }
    f(to, a, b);
    for (int64_t d = out.dim(); d-- > 0;) {
      if (++index[std::size_t(d)] < out.size(d)) break;
      index[std::size_t(d)] = 0;
    }
  }
}

// Round half to even, then clamp: how the reference requantizes.
inline int8_t requantize(double value, int64_t zero_point, int64_t low = -128, int64_t high = 127) {
  const double q = std::nearbyint(value) + double(zero_point);
  return static_cast<int8_t>(std::fmin(std::fmax(q, double(low)), double(high)));
}

inline void fill_random(int8_t* data, std::size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-128, 127);
  for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<int8_t>(d(rng));
}

// Outputs agree with the reference within one step, and nearly all exactly
// (XNNPACK requantizes in float32; the reference in float64).
inline void check_close(const int8_t* got, const std::vector<int8_t>& expected) {
  std::size_t exact = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::abs(int(got[i]) - int(expected[i])) <= 1);
    exact += got[i] == expected[i];
  }
  CHECK(double(exact) >= 0.99 * double(expected.size()));
}

// Outputs equal the reference's, but where the unrounded value (in output
// steps, before the zero point) lies within 1/1000 step of a tie: there
// one step either way. XNNPACK's add and average pooling requantize in
// fixed point (multipliers of about 21 bits, ties rounded up).
inline void check_exact_but_at_ties(const int8_t* got, const std::vector<int8_t>& expected,
                                    const std::vector<double>& unrounded) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const int difference = int(got[i]) - int(expected[i]);
    if (difference == 0) continue;
    INFO("element " << i << ": got " << int(got[i]) << ", the reference " << int(expected[i]) << " of "
                    << unrounded[i]);
    REQUIRE(std::abs(difference) == 1);
    REQUIRE(std::abs(std::fabs(unrounded[i] - std::trunc(unrounded[i])) - 0.5) < 1e-3);
  }
}

// The expected outputs reach both ends of the clamp [low, high]: the case
// saturates, as it is meant to.
inline void check_saturates(const std::vector<int8_t>& expected, int64_t low, int64_t high) {
  CHECK(std::count(expected.begin(), expected.end(), int8_t(low)) > 0);
  CHECK(std::count(expected.begin(), expected.end(), int8_t(high)) > 0);
}

// The message of a call that fails: a `Fixture` made from `k`, changed by
// `change`, then its call() run as `op`.
template <typename Fixture, typename Case, typename Change>
std::string error_message(const char* op, const Case& k, Change&& change) {
  Fixture fixture(k);
  change(fixture);
  const KernelContext ctx = fixture.call().run(op);
  REQUIRE_FALSE(ctx.ok());
  return std::string(ctx.message());
}

// The int32 accumulator units of a float bias: round half to even of
// bias / (input_scale * weight_scale), the scales as float32.
inline int64_t quantized_bias(float bias, double input_scale, float weight_scale) {
  return int64_t(std::nearbyint(double(bias) / (double(float(input_scale)) * double(weight_scale))));
}

// The environment variable naming the file a test run appends its
// operators' outputs to (see check_same_bytes_on_every_isa).
constexpr const char* kOutputsVariable = "ET_OPS_TEST_OUTPUTS";

inline void record_output(const OwnedTensor& out) {
  if (const char* path = std::getenv(kOutputsVariable)) {
    const std::vector<uint8_t> bytes = out.contents();
    std::ofstream(path, std::ios::binary | std::ios::app).write(reinterpret_cast<const char*>(bytes.data()),
                                                                std::streamsize(bytes.size()));
  }
}

// Runs the call on 1 and on 2 threads: both succeed and write the same
// bytes to every element of `out` (it starts from a different filler each
// time); the bytes are recorded for check_same_bytes_on_every_isa.
inline void run_on_one_and_two_threads(Call& call, const char* op, OwnedTensor& out) {
  std::vector<uint8_t> one_thread;
  for (const std::size_t threads : {1, 2}) {
    std::fill(out.bytes.begin(), out.bytes.end(), threads == 1 ? 0x55 : 0xaa);
    const KernelContext ctx = call.run(op, threads);
    INFO(threads << " threads: " << ctx.message());
    REQUIRE(ctx.ok());
    if (threads == 1) one_thread = out.contents();
    else REQUIRE(out.contents() == one_thread);
  }
  record_output(out);
}

// The outputs the test cases matching `spec` record when this executable
// runs them with ET_OPS_XNNPACK_MAX_ISA=`isa` (and ET_OPS_XNNPACK_ONEDNN=0
// unless `onednn`).
inline std::vector<uint8_t> outputs_under_isa(const std::string& isa, const std::string& spec, bool onednn = true) {
  char path[] = "/tmp/et_ops_xnnpack_outputs_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string log = std::string(path) + ".log";
  char self[4096] = {};
  REQUIRE(readlink("/proc/self/exe", self, sizeof self - 1) > 0);
  const std::string command = "ET_OPS_XNNPACK_MAX_ISA=" + isa + (onednn ? "" : " ET_OPS_XNNPACK_ONEDNN=0") + " " +
                              kOutputsVariable + "=" + path + " '" + self + "' '" + spec + "' >" + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream log_file(log);
  INFO(command << "\n" << std::string(std::istreambuf_iterator<char>(log_file), {}));
  std::ifstream file(path, std::ios::binary);
  std::vector<uint8_t> outputs(std::istreambuf_iterator<char>(file), {});
  std::remove(path);
  std::remove(log.c_str());
  REQUIRE(status == 0);
  REQUIRE(!outputs.empty());
  return outputs;
}

// The test cases matching `spec` (a Catch2 test spec) write the same bytes
// on every path: XNNPACK's AVX2 microkernels alone (the bytes the others
// are compared with); the machine's own (convolutions on oneDNN where it
// has int8 dot products, or on 7-bit inputs); an AVX-512 machine's without
// VNNI (oneDNN's AVX-512 kernels on 7-bit inputs, XNNPACK's AVX-512
// microkernels); an AVX2 machine's (oneDNN's AVX2 kernels on 7-bit
// inputs); and an AVX2 machine's with AVX-VNNI (convolutions on oneDNN's
// AVX-VNNI kernels where this CPU has AVX-VNNI, else the same as avx2).
// Each runs in a process of its own, as XNNPACK chooses its microkernels
// once.
inline void check_same_bytes_on_every_isa(const std::string& spec) {
  const std::vector<uint8_t> xnnpack_alone = outputs_under_isa("avx2", spec, false);
  for (const char* isa : {"native", "avx512", "avx2", "avx2vnni"}) {
    const std::vector<uint8_t> capped = outputs_under_isa(isa, spec);
    INFO("ET_OPS_XNNPACK_MAX_ISA=" << isa << " beside XNNPACK's AVX2 microkernels alone");
    REQUIRE(xnnpack_alone.size() == capped.size());
    const auto differ = std::mismatch(xnnpack_alone.begin(), xnnpack_alone.end(), capped.begin());
    INFO("first different byte: " << (differ.first - xnnpack_alone.begin()) << " of " << xnnpack_alone.size());
    CHECK(differ.first == xnnpack_alone.end());
  }
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_XNNPACK_TEST_UTIL_H
