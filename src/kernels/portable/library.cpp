// The library face of libet_kernels_portable.so: C-ABI kernels that unpack
// their arguments (schema order, out arguments last) and call the typed
// entry points, the manifest, explicit registration and the
// loadable-library entry point.
#include <iterator>

#include "common/args.h"
#include "common/library.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/version.h"
#include "portable_fingerprint.h"

namespace et_ops::kernels::portable {
namespace {

using kernels::detail::ArgReader;

// An aten Scalar arrives as an int or a double value; which one matters
// (integral tensors reject a floating alpha), so it is kept.
Scalar scalar_arg(ArgReader& a, et_ops_value* const* v, std::size_t n, std::size_t i, const char* name) {
  const bool is_int = i < n && v[i] != nullptr && v[i]->tag == ET_OPS_VALUE_INT;
  return is_int ? Scalar(a.integer(i, name)) : Scalar(a.floating(i, name));
}

void add_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::add.out", v, n, 4);
  auto self = a.tensor(0, "self");
  auto other = a.tensor(1, "other");
  auto alpha = scalar_arg(a, v, n, 2, "alpha");
  auto out = a.tensor(3, "out");
  if (a.ok()) add_out(a.context(), self, other, alpha, out);
}

void mul_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::mul.out", v, n, 3);
  auto self = a.tensor(0, "self");
  auto other = a.tensor(1, "other");
  auto out = a.tensor(2, "out");
  if (a.ok()) mul_out(a.context(), self, other, out);
}

void mm_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::mm.out", v, n, 3);
  auto self = a.tensor(0, "self");
  auto mat2 = a.tensor(1, "mat2");
  auto out = a.tensor(2, "out");
  if (a.ok()) mm_out(a.context(), self, mat2, out);
}

void addmm_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::addmm.out", v, n, 6);
  auto self = a.tensor(0, "self");
  auto mat1 = a.tensor(1, "mat1");
  auto mat2 = a.tensor(2, "mat2");
  auto beta = scalar_arg(a, v, n, 3, "beta");
  auto alpha = scalar_arg(a, v, n, 4, "alpha");
  auto out = a.tensor(5, "out");
  if (a.ok()) addmm_out(a.context(), self, mat1, mat2, beta, alpha, out);
}

void relu_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::relu.out", v, n, 2);
  auto self = a.tensor(0, "self");
  auto out = a.tensor(1, "out");
  if (a.ok()) relu_out(a.context(), self, out);
}

void view_copy_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::view_copy.out", v, n, 3);
  auto self = a.tensor(0, "self");
  auto size = a.int_list(1, "size");
  auto out = a.tensor(2, "out");
  if (a.ok()) view_copy_out(a.context(), self, size, out);
}

void permute_copy_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::permute_copy.out", v, n, 3);
  auto self = a.tensor(0, "self");
  auto dims = a.int_list(1, "dims");
  auto out = a.tensor(2, "out");
  if (a.ok()) permute_copy_out(a.context(), self, dims, out);
}

void convolution_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::convolution.out", v, n, 10);
  auto input = a.tensor(0, "input");
  auto weight = a.tensor(1, "weight");
  auto bias = a.optional_tensor(2, "bias");
  auto stride = a.int_list(3, "stride");
  auto padding = a.int_list(4, "padding");
  auto dilation = a.int_list(5, "dilation");
  auto transposed = a.boolean(6, "transposed");
  auto output_padding = a.int_list(7, "output_padding");
  auto groups = a.integer(8, "groups");
  auto out = a.tensor(9, "out");
  if (a.ok())
    convolution_out(a.context(), input, weight, bias, stride, padding, dilation, transposed, output_padding, groups,
                    out);
}

void max_pool2d_with_indices_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::max_pool2d_with_indices.out", v, n, 8);
  auto self = a.tensor(0, "self");
  auto kernel_size = a.int_list(1, "kernel_size");
  auto stride = a.int_list(2, "stride");
  auto padding = a.int_list(3, "padding");
  auto dilation = a.int_list(4, "dilation");
  auto ceil_mode = a.boolean(5, "ceil_mode");
  auto out = a.tensor(6, "out");
  auto indices = a.tensor(7, "indices");
  if (a.ok())
    max_pool2d_with_indices_out(a.context(), self, kernel_size, stride, padding, dilation, ceil_mode, out, indices);
}

void softmax_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "aten::_softmax.out", v, n, 4);
  auto self = a.tensor(0, "self");
  auto dim = a.integer(1, "dim");
  auto half_to_float = a.boolean(2, "half_to_float");
  auto out = a.tensor(3, "out");
  if (a.ok()) softmax_out(a.context(), self, dim, half_to_float, out);
}

constexpr kernels::detail::OperatorEntry kOperators[] = {
#define ET_OPS_OPERATOR(function, name, schema) {name, schema, &function##_abi},
#include "operators.def"
#undef ET_OPS_OPERATOR
};

}  // namespace

const et_ops_manifest& manifest() {
  static const kernels::detail::StaticManifest instance(kComponent, ET_OPS_VERSION, ET_OPS_PORTABLE_DIGEST,
                                                        kOperators, std::size(kOperators));
  return instance.manifest();
}

RegistrationResult register_kernels() { return register_manifest(manifest()); }

}  // namespace et_ops::kernels::portable

#if !defined(ET_OPS_STATIC_KERNELS)
// The loadable-library entry point (see et_ops/abi.h). A private static copy
// of these kernels does not export it.
extern "C" ET_OPS_VISIBLE const et_ops_manifest* et_ops_kernel_library_manifest(void) {
  return &et_ops::kernels::portable::manifest();
}
#endif
