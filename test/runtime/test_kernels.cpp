// The runtime tests' own kernels (see test_kernels.h).
#include "test_kernels.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "et_ops/kernel_context.h"
#include "et_ops/registry.h"
#include "et_ops/tensor.h"

namespace et_ops::test {
namespace {

bool expect_args(et_ops_kernel_context* c, et_ops_value* const* args, std::size_t count, std::size_t expected) {
  if (count != expected) {
    KernelContext::from(c).fail("wrong argument count");
    return false;
  }
  for (std::size_t i = 0; i < count; ++i)
    if (args[i] == nullptr) {
      KernelContext::from(c).fail("null argument");
      return false;
    }
  return true;
}

bool float_tensors(et_ops_kernel_context* c, std::initializer_list<const et_ops_value*> values, int64_t numel) {
  for (const et_ops_value* v : values)
    if (v->tag != ET_OPS_VALUE_TENSOR || v->u.tensor->dtype != ET_OPS_DTYPE_FLOAT32 || v->u.tensor->numel != numel) {
      KernelContext::from(c).fail("expected float32 tensors of equal size");
      return false;
    }
  return true;
}

void add(et_ops_kernel_context* c, et_ops_value* const* args, std::size_t count) {
  if (!expect_args(c, args, count, 3) || args[0]->tag != ET_OPS_VALUE_TENSOR) return;
  const int64_t n = args[0]->u.tensor->numel;
  if (!float_tensors(c, {args[0], args[1], args[2]}, n)) return;
  const auto* a = static_cast<const float*>(args[0]->u.tensor->data);
  const auto* b = static_cast<const float*>(args[1]->u.tensor->data);
  auto* out = static_cast<float*>(args[2]->u.tensor->data);
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void scale(et_ops_kernel_context* c, et_ops_value* const* args, std::size_t count) {
  if (!expect_args(c, args, count, 3) || args[0]->tag != ET_OPS_VALUE_TENSOR) return;
  const int64_t n = args[0]->u.tensor->numel;
  if (!float_tensors(c, {args[0], args[2]}, n)) return;
  if (args[1]->tag != ET_OPS_VALUE_DOUBLE && args[1]->tag != ET_OPS_VALUE_INT) {
    KernelContext::from(c).fail("factor must be a number");
    return;
  }
  const double factor = args[1]->tag == ET_OPS_VALUE_DOUBLE ? args[1]->u.d : static_cast<double>(args[1]->u.i);
  const auto* a = static_cast<const float*>(args[0]->u.tensor->data);
  auto* out = static_cast<float*>(args[2]->u.tensor->data);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(a[i] * factor);
}

void copy(et_ops_kernel_context* c, et_ops_value* const* args, std::size_t count) {
  if (!expect_args(c, args, count, 2)) return;
  if (args[0]->tag != ET_OPS_VALUE_TENSOR || args[1]->tag != ET_OPS_VALUE_TENSOR) return KernelContext::from(c).fail("tensors expected");
  TensorRef in(*args[0]->u.tensor), out(*args[1]->u.tensor);
  if (in.dtype() != out.dtype() || in.nbytes() != out.nbytes()) return KernelContext::from(c).fail("size mismatch");
  if (in.nbytes() > 0) std::memcpy(out.data(), in.data(), in.nbytes());
}

void fail(et_ops_kernel_context* c, et_ops_value* const*, std::size_t) {
  KernelContext::from(c).fail("deliberate failure");
}

int64_t payload(const et_ops_value& v) {
  switch (v.tag) {
    case ET_OPS_VALUE_INT: return v.u.i;
    case ET_OPS_VALUE_DOUBLE: return static_cast<int64_t>(v.u.d * 1000.0);
    case ET_OPS_VALUE_BOOL: return v.u.b;
    case ET_OPS_VALUE_SCALAR_TYPE: return v.u.scalar_type;
    case ET_OPS_VALUE_INT_LIST: {
      int64_t sum = 0;
      for (int64_t i = 0; i < v.u.int_list.size; ++i) sum += v.u.int_list.data[i];
      return v.u.int_list.size * 1000 + sum;
    }
    case ET_OPS_VALUE_TENSOR: return v.u.tensor->numel;
    case ET_OPS_VALUE_TENSOR_LIST: {
      int64_t numel = 0;
      for (int64_t i = 0; i < v.u.tensor_list.size; ++i) numel += v.u.tensor_list.data[i]->numel;
      return v.u.tensor_list.size * 1000 + numel;
    }
    default: return -1;
  }
}

void describe(et_ops_kernel_context* c, et_ops_value* const* args, std::size_t count) {
  if (count == 0 || args[count - 1]->tag != ET_OPS_VALUE_TENSOR) return KernelContext::from(c).fail("no out tensor");
  TensorRef out(*args[count - 1]->u.tensor);
  if (out.dtype() != DType::Int64 || out.numel() < static_cast<int64_t>(2 * (count - 1)))
    return KernelContext::from(c).fail("out must be int64 with two elements per argument");
  auto* o = out.data_as<int64_t>();
  for (std::size_t i = 0; i + 1 < count; ++i) {
    o[2 * i] = args[i]->tag;
    o[2 * i + 1] = payload(*args[i]);
  }
}

// out = the elementwise sum of the float32 tensors of a tensor list.
void sum_list(et_ops_kernel_context* c, et_ops_value* const* args, std::size_t count) {
  if (!expect_args(c, args, count, 2) || args[0]->tag != ET_OPS_VALUE_TENSOR_LIST) return KernelContext::from(c).fail("a tensor list expected");
  const int64_t n = args[1]->u.tensor->numel;
  if (!float_tensors(c, {args[1]}, n)) return;
  auto* out = static_cast<float*>(args[1]->u.tensor->data);
  for (int64_t i = 0; i < n; ++i) out[i] = 0.0f;
  const et_ops_tensor_list& list = args[0]->u.tensor_list;
  for (int64_t e = 0; e < list.size; ++e) {
    const et_ops_tensor* t = list.data[e];
    if (t->dtype != ET_OPS_DTYPE_FLOAT32 || t->numel != n) return KernelContext::from(c).fail("list elements must match out");
    for (int64_t i = 0; i < n; ++i) out[i] += static_cast<const float*>(t->data)[i];
  }
}

// Writes 1.0 into the first element of every tensor of its list.
void fill_list(et_ops_kernel_context*, et_ops_value* const* args, std::size_t) {
  const et_ops_tensor_list& list = args[0]->u.tensor_list;
  for (int64_t e = 0; e < list.size; ++e) *static_cast<float*>(list.data[e]->data) = 1.0f;
}

void poke(et_ops_kernel_context*, et_ops_value* const* args, std::size_t) {
  *static_cast<volatile uint8_t*>(args[0]->u.tensor->data) = 1;
}

void which_fallback(et_ops_kernel_context*, et_ops_value* const* args, std::size_t) {
  *static_cast<int64_t*>(args[1]->u.tensor->data) = 0;
}
void which_int8(et_ops_kernel_context*, et_ops_value* const* args, std::size_t) {
  *static_cast<int64_t*>(args[1]->u.tensor->data) = 1;
}

constexpr const char* kFingerprint = "00000000000000000000000000000001";

const et_ops_kernel_record kRecords[] = {
    {"et_test_rt::add.out", "", &add, "et_test_rt::add.out(Tensor a, Tensor b, *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
    {"et_test_rt::scale.out", "", &scale, "et_test_rt::scale.out(Tensor a, float factor, *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
    {"et_test_rt::copy.out", "", &copy, "et_test_rt::copy.out(Tensor a, *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
    {"et_test_rt::fail.out", "", &fail, "et_test_rt::fail.out(Tensor a, *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
    {"et_test_rt::describe.out", "", &describe, "et_test_rt::describe.out(..., *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
    {"et_test_rt::poke.out", "", &poke, "et_test_rt::poke.out(Tensor a) -> ()", kFingerprint},
    {"et_test_rt::sum_list.out", "", &sum_list, "et_test_rt::sum_list.out(Tensor[] tensors, *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
    {"et_test_rt::fill_list.out", "", &fill_list, "et_test_rt::fill_list.out(*, Tensor(a!)[] out) -> ()", kFingerprint},
    {"et_test_rt::which.out", "", &which_fallback, "et_test_rt::which.out(Tensor a, *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
    {"et_test_rt::which.out", "v1/4;|9;", &which_int8, "et_test_rt::which.out(Tensor a, *, Tensor(a!) out) -> Tensor(a!)", kFingerprint},
};

}  // namespace

void register_test_kernels() {
  static const et_ops_manifest manifest{ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record), kTestComponent, "1.0",
                                        kRecords, sizeof(kRecords) / sizeof(kRecords[0])};
  RegistrationResult result = register_manifest(manifest);
  if (!result) {
    std::fprintf(stderr, "registering the runtime test kernels failed: %s\n", result.status().message().c_str());
    std::abort();
  }
}

}  // namespace et_ops::test
