// Fuzz targets: one call of a kernel through the registry, for each kernel
// library (quantized_kernels, portable_kernels, xnnpack_kernels). The bytes name the
// operator (its name, aten::add.out say, and a NUL byte; a name the library does not have
// picks one of its operators by the next byte), then each argument in
// schema order: its kind (usually the schema's, sometimes none or another
// kind), a tensor's dtype, shape, dim order and elements, an int list, or a
// scalar from values that sit on the edges of the kernels' checks. Kernels
// may refuse anything, but must say why, must not touch memory outside the
// tensors (AddressSanitizer), must not overflow (UBSan) and must not change
// their input tensors.
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "et_ops/half.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/kernels/xnnpack.h"
#include "et_ops/registry.h"
#include "et_ops/schema.h"
#include "et_ops/value.h"
#include "fuzz_input.h"
#include "fuzz_targets.h"

namespace et_ops::fuzz {
namespace {

constexpr std::size_t kMaxRank = 4;
constexpr int64_t kMaxSize = 4;

// The first seven are the quantized schemas' kinds, in the order its
// corpus was written for; the portable schemas use them all.
enum class Kind {
  Tensor,
  OptionalTensor,
  OutTensor,
  Int,
  Float,
  ScalarType,
  OptionalScalarType,
  Bool,
  Scalar,
  IntList,
  OptionalInt,
  OptionalFloat,
  OptionalScalar,
  OptionalIntList,
  TensorList,
  // Not drawn as wrong kinds (kKindCount stays), so earlier seeds decode as before.
  String,
  OptionalTensorList,
};
constexpr std::size_t kKindCount = 15;

// How a target reads its bytes. The quantized target keeps the decoding its
// corpus and regression inputs were written in (any dtype equally likely, a
// wrong kind among its schemas' seven); the portable target favours float32,
// which the aten kernels compute in, and the xnnpack target int8, the dtype
// of its operators, so calls get past their dtype checks often enough to
// reach the arithmetic; both draw wrong kinds among them all.
struct Decoding {
  std::optional<DType> favoured;
  std::size_t kinds;
};
const Decoding kQuantizedDecoding{std::nullopt, 7};
const Decoding kPortableDecoding{DType::Float32, kKindCount};
const Decoding kXnnpackDecoding{DType::Int8, kKindCount};
const Decoding kIndexDecoding{DType::Int64, kKindCount};

// The argument kinds of a schema, read with the registry's schema reader.
std::vector<Kind> argument_kinds(const char* target, std::string_view schema) {
  std::vector<Kind> kinds;
  SchemaReader reader(schema);
  SchemaArgument argument;
  while (reader.next(argument)) {
    switch (argument.kind) {
      case ArgumentKind::Tensor: kinds.push_back(argument.written ? Kind::OutTensor : Kind::Tensor); break;
      case ArgumentKind::OptionalTensor: kinds.push_back(Kind::OptionalTensor); break;
      case ArgumentKind::TensorList: kinds.push_back(Kind::TensorList); break;
      case ArgumentKind::Int: kinds.push_back(Kind::Int); break;
      case ArgumentKind::OptionalInt: kinds.push_back(Kind::OptionalInt); break;
      case ArgumentKind::IntList: kinds.push_back(Kind::IntList); break;
      case ArgumentKind::OptionalIntList: kinds.push_back(Kind::OptionalIntList); break;
      case ArgumentKind::Bool: kinds.push_back(Kind::Bool); break;
      case ArgumentKind::Scalar: kinds.push_back(Kind::Scalar); break;
      case ArgumentKind::OptionalScalar: kinds.push_back(Kind::OptionalScalar); break;
      case ArgumentKind::Float: kinds.push_back(Kind::Float); break;
      case ArgumentKind::OptionalFloat: kinds.push_back(Kind::OptionalFloat); break;
      case ArgumentKind::ScalarType: kinds.push_back(Kind::ScalarType); break;
      case ArgumentKind::OptionalScalarType: kinds.push_back(Kind::OptionalScalarType); break;
      case ArgumentKind::String: kinds.push_back(Kind::String); break;
      case ArgumentKind::OptionalTensorList: kinds.push_back(Kind::OptionalTensorList); break;
      default:
        target_failure(target, ("an argument type the target does not know: " + std::string(argument.type)).c_str());
    }
  }
  if (!reader.ok()) target_failure(target, reader.error());
  return kinds;
}

// Scalars on the edges of dtype bounds, quantization ranges and axes.
constexpr int64_t kInterestingInts[] = {0, 1, -1, 2, 3, -2, 7, 8, 15, 127, -128, 128, -129, 255, 256, 32767,
                                        -32768, 65535, 65536, std::numeric_limits<int32_t>::max(),
                                        std::numeric_limits<int32_t>::min(), std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
constexpr double kInterestingDoubles[] = {1.0, 0.5, 0.1, 1e-3, 1e-7, 1.0 / 3.0, 2.0, 255.0, 0.0, -0.0, -1.0,
                                          1e-30, 1e30, 1e-45, 3.4e38, 1e300, 5e-324,
                                          std::numeric_limits<double>::infinity(),
                                          -std::numeric_limits<double>::infinity(),
                                          std::numeric_limits<double>::quiet_NaN()};

int64_t fuzz_int(FuzzInput& in) {
  if (in.chance(32)) return in.raw<int64_t>();
  return in.pick(kInterestingInts);
}

double fuzz_double(FuzzInput& in) {
  if (in.chance(32)) return in.raw<double>();
  return in.pick(kInterestingDoubles);
}

// A tensor that owns its metadata and elements. Elements live in a vector
// of exactly nbytes, so a kernel that reads or writes one byte outside
// them is caught by AddressSanitizer.
struct FuzzTensor {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::vector<uint8_t> dim_order;
  std::vector<uint8_t> bytes;
  et_ops_tensor raw{};
  bool output = false;
};

std::vector<int64_t> fuzz_shape(FuzzInput& in) {
  std::vector<int64_t> sizes(in.below(kMaxRank + 1));
  for (int64_t& s : sizes) s = static_cast<int64_t>(in.below(kMaxSize + 1));
  return sizes;
}

// Shapes the tensors of one call share, so arguments that must agree
// (input and out, scales and zero points) often do.
struct ShapePool {
  std::array<std::vector<int64_t>, 2> shapes;

  std::vector<int64_t> draw(FuzzInput& in) const {
    switch (in.below(8)) {
      case 0: case 1: case 2: return shapes[0];
      case 3: case 4: return shapes[1];
      case 5: {  // shapes[0] with one more (or one fewer) dimension
        std::vector<int64_t> sizes = shapes[0];
        if (in.chance(128) && !sizes.empty()) sizes.pop_back();
        else if (sizes.size() < kMaxRank) sizes.push_back(static_cast<int64_t>(in.below(kMaxSize + 1)));
        return sizes;
      }
      case 6: return {static_cast<int64_t>(in.below(kMaxSize + 1))};
      default: return fuzz_shape(in);
    }
  }
};

std::vector<uint8_t> fuzz_dim_order(FuzzInput& in, std::size_t rank) {
  std::vector<uint8_t> order(rank);
  for (std::size_t d = 0; d < rank; ++d) order[d] = static_cast<uint8_t>(d);
  if (in.chance(48))  // a permutation: Fisher-Yates driven by the bytes
    for (std::size_t d = rank; d > 1; --d) std::swap(order[d - 1], order[in.below(d)]);
  return order;
}

// Writes the small integer `v` as one element of `dtype`.
void store_small(DType dtype, int v, uint8_t* element) {
  const auto f = static_cast<float>(v);
  switch (dtype) {
    case DType::Float32: std::memcpy(element, &f, sizeof f); break;
    case DType::Float64: {
      const double d = v;
      std::memcpy(element, &d, sizeof d);
      break;
    }
    case DType::Float16: {
      const Half h = Half::from_float(f);
      std::memcpy(element, &h, sizeof h);
      break;
    }
    case DType::BFloat16: {
      const BFloat16 b = BFloat16::from_float(f);
      std::memcpy(element, &b, sizeof b);
      break;
    }
    default: {  // integers and bool: the value's low bytes (little-endian), sign-extended
      const int64_t i = v;
      std::memcpy(element, &i, dtype_size(dtype));
    }
  }
}

// Element values: raw bytes reach NaNs, infinities and huge integers;
// small integers keep indices in range and scales positive often enough.
void fill_elements(FuzzInput& in, DType dtype, std::vector<uint8_t>& bytes) {
  const std::size_t element = dtype_size(dtype);
  const std::size_t mode = in.below(4);
  for (std::size_t at = 0; at < bytes.size(); at += element) {
    if (mode == 0) {
      for (std::size_t b = 0; b < element; ++b) bytes[at + b] = in.byte();
      continue;
    }
    const int small = mode == 1 ? static_cast<int>(in.below(6)) - 1 : mode == 2 ? 1 : 0;
    store_small(dtype, small, &bytes[at]);
  }
}

// Breaks one structural promise of the tensor (numel, a size, a stride,
// the data pointer), which every kernel must detect before reading.
void break_structure(FuzzInput& in, FuzzTensor& t) {
  switch (in.below(5)) {
    case 0: t.raw.numel += in.chance(128) ? 1 : -1; break;
    case 1:
      if (!t.sizes.empty()) t.sizes[in.below(t.sizes.size())] = -static_cast<int64_t>(in.below(3)) - 1;
      break;
    case 2:
      if (!t.strides.empty()) t.strides[in.below(t.strides.size())] += static_cast<int64_t>(in.below(3)) + 1;
      break;
    case 3: t.raw.data = nullptr; break;
    // Invalid codes only: a valid one would lie about the storage size,
    // which no kernel can detect.
    default: t.raw.dtype = in.chance(128) ? -1 : kDTypeCount; break;
  }
}

std::unique_ptr<FuzzTensor> fuzz_tensor(FuzzInput& in, const ShapePool& pool, bool output, const Decoding& decoding) {
  auto t = std::make_unique<FuzzTensor>();
  const auto dtype =
      decoding.favoured && in.chance(128) ? *decoding.favoured : static_cast<DType>(in.below(kDTypeCount));
  t->output = output;
  t->sizes = pool.draw(in);
  t->dim_order = fuzz_dim_order(in, t->sizes.size());
  t->strides = detail::strides_for(t->sizes, t->dim_order);
  int64_t numel = 1;
  for (int64_t s : t->sizes) numel *= s;
  t->bytes.resize(static_cast<std::size_t>(numel) * dtype_size(dtype));
  fill_elements(in, dtype, t->bytes);
  // An empty tensor may come without data (the chance is only drawn then).
  t->raw.data = t->bytes.empty() && in.chance(128) ? nullptr : t->bytes.data();
  t->raw.numel = numel;
  t->raw.dtype = static_cast<int32_t>(dtype);
  t->raw.dim = static_cast<int32_t>(t->sizes.size());
  if (in.chance(16)) break_structure(in, *t);
  t->raw.sizes = t->sizes.data();
  t->raw.strides = t->strides.data();
  t->raw.dim_order = t->dim_order.data();
  return t;
}

// One call: the argument values plus the tensors they point to.
class Call {
 public:
  Call(FuzzInput& in, const Decoding& decoding) : in_(in), decoding_(decoding) {
    pool_.shapes[0] = fuzz_shape(in);
    pool_.shapes[1] = fuzz_shape(in);
  }

  void add(Kind kind) {
    // The schema position decides what the kernel may write, whatever kind
    // the argument is given.
    const bool written = kind == Kind::OutTensor;
    if (in_.chance(8)) kind = static_cast<Kind>(in_.below(decoding_.kinds));  // a wrong kind now and then
    switch (kind) {
      case Kind::OptionalTensor:
        if (in_.chance(96)) return add_value(none_value());
        [[fallthrough]];
      case Kind::Tensor:
      case Kind::OutTensor: return add_tensor(written);
      case Kind::OptionalInt:
        if (in_.chance(96)) return add_value(none_value());
        [[fallthrough]];
      case Kind::Int: return add_value(int_value(fuzz_int(in_)));
      case Kind::OptionalFloat:
        if (in_.chance(96)) return add_value(none_value());
        [[fallthrough]];
      case Kind::Float: return add_value(in_.chance(16) ? int_value(fuzz_int(in_)) : double_value(fuzz_double(in_)));
      case Kind::OptionalScalar:
        if (in_.chance(96)) return add_value(none_value());
        [[fallthrough]];
      case Kind::Scalar: return add_value(in_.chance(64) ? int_value(fuzz_int(in_)) : double_value(fuzz_double(in_)));
      case Kind::Bool: return add_value(bool_value(in_.chance(128)));
      case Kind::OptionalIntList:
        if (in_.chance(96)) return add_value(none_value());
        [[fallthrough]];
      case Kind::IntList: return add_int_list();
      case Kind::TensorList: return add_tensor_list(false);
      case Kind::OptionalTensorList: return add_tensor_list(true);
      case Kind::String: return add_string();
      case Kind::OptionalScalarType:
        if (in_.chance(96)) return add_value(none_value());
        [[fallthrough]];
      case Kind::ScalarType: {
        const int64_t code = in_.chance(8) ? fuzz_int(in_) : static_cast<int64_t>(in_.below(kDTypeCount));
        et_ops_value v = scalar_type_value(DType::Float32);
        v.u.scalar_type = code;
        return add_value(v);
      }
    }
  }

  // Appends an extra argument or drops the last one (a wrong count).
  void miscount() {
    if (in_.chance(128) && !values_.empty()) values_.pop_back();
    else add_value(int_value(0));
  }

  std::vector<et_ops_value>& values() { return values_; }

  // The tensor arguments in argument order, as the registry's key matching wants them.
  std::vector<const et_ops_tensor*> tensor_arguments() const {
    std::vector<const et_ops_tensor*> tensors;
    for (const et_ops_value& v : values_)
      if (v.tag == ET_OPS_VALUE_TENSOR && v.u.tensor != nullptr) tensors.push_back(v.u.tensor);
    return tensors;
  }

  // Copies of every input tensor's elements, to prove the call left them alone.
  std::vector<std::vector<uint8_t>> snapshot_inputs() const {
    std::vector<std::vector<uint8_t>> copies;
    for (const auto& t : tensors_) copies.push_back(t->output ? std::vector<uint8_t>() : t->bytes);
    return copies;
  }
  bool inputs_unchanged(const std::vector<std::vector<uint8_t>>& copies) const {
    for (std::size_t i = 0; i < tensors_.size(); ++i)
      if (!tensors_[i]->output && tensors_[i]->bytes != copies[i]) return false;
    return true;
  }

 private:
  void add_value(const et_ops_value& v) { values_.push_back(v); }

  // Mostly small values (sizes, strides, paddings, dims), sometimes an edge.
  void add_int_list() {
    auto list = std::make_unique<std::vector<int64_t>>(in_.below(kMaxRank + 1));
    for (int64_t& v : *list) v = in_.chance(224) ? static_cast<int64_t>(in_.below(5)) - 1 : fuzz_int(in_);
    add_value(int_list_value(list->data(), static_cast<int64_t>(list->size())));
    int_lists_.push_back(std::move(list));
  }

  // A known choice (gelu's) or a few arbitrary bytes.
  void add_string() {
    static const char* const kKnown[] = {"none", "tanh"};
    auto text = std::make_unique<std::string>(in_.chance(192) ? kKnown[in_.below(2)] : "");
    if (text->empty())
      for (std::size_t n = in_.below(5); n > 0; --n) text->push_back(static_cast<char>(in_.byte()));
    add_value(string_value(*text));
    strings_.push_back(std::move(text));
  }

  // Up to four tensors (now and then a null one: None in an optional list),
  // read only by the kernel; index tensors are int64 half of the time.
  void add_tensor_list(bool optional) {
    auto list = std::make_unique<std::vector<et_ops_tensor*>>(in_.below(5));
    for (et_ops_tensor*& element : *list) {
      if (in_.chance(2)) continue;  // stays null
      tensors_.push_back(fuzz_tensor(in_, pool_, false, optional && in_.chance(128) ? kIndexDecoding : decoding_));
      element = &tensors_.back()->raw;
    }
    const et_ops_value value = tensor_list_value(list->data(), static_cast<int64_t>(list->size()));
    add_value(optional ? optional_tensor_list_value(value.u.tensor_list.data, value.u.tensor_list.size) : value);
    tensor_lists_.push_back(std::move(list));
  }

  void add_tensor(bool output) {
    if (in_.chance(2)) return add_value(tensor_value(static_cast<et_ops_tensor*>(nullptr)));
    tensors_.push_back(fuzz_tensor(in_, pool_, output, decoding_));
    add_value(tensor_value(&tensors_.back()->raw));
  }

  FuzzInput& in_;
  const Decoding& decoding_;
  ShapePool pool_;
  std::vector<std::unique_ptr<FuzzTensor>> tensors_;  // stable addresses: values point into them
  std::vector<std::unique_ptr<std::vector<int64_t>>> int_lists_;  // what int list values point to
  std::vector<std::unique_ptr<std::vector<et_ops_tensor*>>> tensor_lists_;  // what tensor list values point to
  std::vector<std::unique_ptr<std::string>> strings_;                       // what string values point to
  std::vector<et_ops_value> values_;
};

struct Operator {
  const char* name;
  std::vector<Kind> kinds;
};

// The operators of a kernel library, registered (`registered` is the
// library's register_kernels() result).
std::vector<Operator> library_operators(const char* target, bool registered, const et_ops_manifest& manifest) {
  if (!registered) target_failure(target, "registering the kernel library failed");
  std::vector<Operator> operators;
  for (std::size_t i = 0; i < manifest.record_count; ++i) {
    const et_ops_kernel_record& record = *et_ops_manifest_record(&manifest, i);
    operators.push_back({record.op, argument_kinds(target, record.schema)});
  }
  return operators;
}

// The operator the input names: by name, so that a seed keeps calling its
// operator whatever the library's table adds.
const Operator& chosen_operator(FuzzInput& in, const std::vector<Operator>& operators) {
  const std::string name = in.name();
  for (const Operator& op : operators)
    if (name == op.name) return op;
  return operators[in.below(operators.size())];
}

int fuzz_kernel_call(const char* target, const std::vector<Operator>& operators, const Decoding& decoding,
                     const uint8_t* data, std::size_t size) {
  FuzzInput in(data, size);
  const Operator& op = chosen_operator(in, operators);
  Call call(in, decoding);
  for (Kind kind : op.kinds) call.add(kind);
  if (in.chance(4)) call.miscount();
  const std::vector<const et_ops_tensor*> tensors = call.tensor_arguments();
  const et_ops_kernel_fn fn = lookup(op.name, tensors.data(), tensors.size());
  if (fn == nullptr) target_failure(target, "a registered operator has no kernel for these arguments");
  const auto before = call.snapshot_inputs();
  const KernelContext context = call_kernel(fn, call.values());
  if (!context.ok() && context.message().empty()) target_failure(target, "a failing kernel gave no message");
  if (!call.inputs_unchanged(before)) target_failure(target, "a kernel changed one of its input tensors");
  return 0;
}

}  // namespace

int fuzz_quantized_kernels(const uint8_t* data, std::size_t size) {
  static const std::vector<Operator> operators = library_operators(
      "quantized_kernels", kernels::quantized::register_kernels().ok(), kernels::quantized::manifest());
  return fuzz_kernel_call("quantized_kernels", operators, kQuantizedDecoding, data, size);
}

int fuzz_portable_kernels(const uint8_t* data, std::size_t size) {
  static const std::vector<Operator> operators = library_operators(
      "portable_kernels", kernels::portable::register_kernels().ok(), kernels::portable::manifest());
  return fuzz_kernel_call("portable_kernels", operators, kPortableDecoding, data, size);
}

int fuzz_xnnpack_kernels(const uint8_t* data, std::size_t size) {
  static const std::vector<Operator> operators = library_operators(
      "xnnpack_kernels", kernels::xnnpack::register_kernels().ok(), kernels::xnnpack::manifest());
  return fuzz_kernel_call("xnnpack_kernels", operators, kXnnpackDecoding, data, size);
}

}  // namespace et_ops::fuzz
