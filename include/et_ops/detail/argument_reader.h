// The kit's reader of a C-ABI call's arguments (et_ops/kernel_library.h):
// declared here, compiled once in libet_ops, so that every kernel library
// shares one copy of the argument checks and their messages.
#ifndef ET_OPS_DETAIL_ARGUMENT_READER_H
#define ET_OPS_DETAIL_ARGUMENT_READER_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/int_list.h"
#include "et_ops/kernel_context.h"
#include "et_ops/scalar.h"
#include "et_ops/tensor.h"

namespace et_ops::detail {

// Reads argument i of a C-ABI call. Every accessor reports a mismatch once,
// through the context, naming the operator and the argument, and returns a
// harmless placeholder; the kernel runs only when every argument was read.
class ET_OPS_API ArgumentReader {
 public:
  // `schema` names the operator and its arguments in messages only; a count
  // other than `expected` is reported at once.
  ArgumentReader(et_ops_kernel_context* ctx, const char* schema, et_ops_value* const* args, std::size_t count,
                 std::size_t expected);

  bool ok() const { return ctx_.ok(); }
  KernelContext& context() { return ctx_; }

  // The tag of argument i, or -1 when it is missing.
  int32_t tag(std::size_t i) const { return i < count_ && args_[i] != nullptr ? args_[i]->tag : -1; }
  bool is_none(std::size_t i) const { return tag(i) == ET_OPS_VALUE_NONE; }

  TensorRef tensor(std::size_t i);
  int64_t integer(std::size_t i);
  // A schema `float` accepts a double value, or an int value (exact).
  double floating(std::size_t i);
  bool boolean(std::size_t i);
  DType scalar_type(std::size_t i);
  IntList int_list(std::size_t i);
  TensorList tensor_list(std::size_t i);
  // A `Tensor?[]`: like a tensor list, but a null element is None.
  OptionalTensorList optional_tensor_list(std::size_t i);
  std::string_view string(std::size_t i);
  // An aten Scalar arrives as an int or a double value; which one matters.
  Scalar scalar(std::size_t i);

  // Reports argument i as wrong: "<op>: argument <i> ('<name>') <what>".
  void fail(std::size_t i, const std::string& what);

  // Argument i when it is present with the tag expected, else null, and
  // reported once.
  const et_ops_value* value(std::size_t i, int32_t expected_tag);

  // The schema the messages name the operator and arguments from ("" if none).
  const char* schema() const { return schema_; }

 private:
  KernelContext& ctx_;
  const char* schema_;
  et_ops_value* const* args_;
  std::size_t count_;
  et_ops_tensor placeholder_{nullptr, nullptr, nullptr, nullptr, 0, ET_OPS_DTYPE_FLOAT32, 0};
};

}  // namespace et_ops::detail

#endif  // ET_OPS_DETAIL_ARGUMENT_READER_H
