// .npy inputs into run states, and printable summaries of outputs.
#include "tensor_io.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "et_ops/half.h"

namespace et_ops::tool {
namespace {

// Element offset (in elements) of the logical row-major index `n`.
int64_t element_offset(TensorRef tensor, int64_t n) {
  int64_t offset = 0;
  for (int64_t d = tensor.dim() - 1; d >= 0; --d) {
    offset += (n % tensor.size(d)) * tensor.stride(d);
    n /= tensor.size(d);
  }
  return offset;
}

// Copies C-order bytes into the tensor's own layout (any dim order).
void copy_from_logical_order(TensorRef tensor, const uint8_t* logical) {
  const std::size_t element = dtype_size(tensor.dtype());
  auto* out = static_cast<uint8_t*>(tensor.data());
  for (int64_t n = 0; n < tensor.numel(); ++n)
    std::memcpy(out + static_cast<std::size_t>(element_offset(tensor, n)) * element,
                logical + static_cast<std::size_t>(n) * element, element);
}

// Copies the tensor's elements (any dim order) out in C order.
void copy_to_logical_order(TensorRef tensor, uint8_t* logical) {
  const std::size_t element = dtype_size(tensor.dtype());
  const auto* in = static_cast<const uint8_t*>(tensor.data());
  for (int64_t n = 0; n < tensor.numel(); ++n)
    std::memcpy(logical + static_cast<std::size_t>(n) * element,
                in + static_cast<std::size_t>(element_offset(tensor, n)) * element, element);
}

bool dtype_accepted(DType program, DType file) {
  return program == file || (program == DType::BFloat16 && file == DType::UInt16);
}

std::string shape_text(const std::vector<int64_t>& sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }

// "[2, 4]", or "[1, 1 to 256]" where a dimension is dynamic.
std::string bounds_text(const std::vector<SizeBounds>& bounds) {
  std::vector<std::string> dims;
  for (const SizeBounds& b : bounds)
    dims.push_back(b.min == b.max ? fmt::format("{}", b.min) : fmt::format("{} to {}", b.min, b.max));
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// Whether `shape` (from `first` on) has the input's rank and each size
// within its dimension's bounds; the run state checks the rest (a size a
// symbolic expression can reach, inputs that share a symbol agreeing).
bool within_bounds(const std::vector<int64_t>& shape, std::size_t first, const std::vector<SizeBounds>& bounds) {
  if (shape.size() < first || shape.size() - first != bounds.size()) return false;
  for (std::size_t d = 0; d < bounds.size(); ++d)
    if (shape[first + d] < bounds[d].min || shape[first + d] > bounds[d].max) return false;
  return true;
}

std::string check_array(const Program& program, const NpyArray& array, std::size_t i, const std::string& file) {
  const TensorSpec& spec = program.input_spec(i);
  if (!dtype_accepted(spec.dtype, array.dtype))
    return fmt::format("{}: dtype {} does not match input {} of the program ({})", file, dtype_name(array.dtype), i,
                       dtype_name(spec.dtype));
  const std::vector<SizeBounds> bounds = program.input_bounds(i);
  if (!within_bounds(array.shape, 0, bounds))
    return fmt::format("{}: shape {} does not match input {} of the program ({})", file, shape_text(array.shape), i,
                       bounds_text(bounds));
  return {};
}

// A batch: dtype as above, shape [N, ...an input's shape] with N >= 1.
std::string check_batch(const Program& program, const NpyArray& array, std::size_t i, const std::string& file) {
  const TensorSpec& spec = program.input_spec(i);
  if (!dtype_accepted(spec.dtype, array.dtype))
    return fmt::format("{}: dtype {} does not match input {} of the program ({})", file, dtype_name(array.dtype), i,
                       dtype_name(spec.dtype));
  const std::vector<SizeBounds> bounds = program.input_bounds(i);
  if (!within_bounds(array.shape, 1, bounds))
    return fmt::format("{}: shape {} is not a batch of input {} of the program ([N{}{})", file,
                       shape_text(array.shape), i, bounds.empty() ? "" : ", ", bounds_text(bounds).substr(1));
  if (array.shape[0] == 0) return fmt::format("{}: the batch holds no inputs", file);
  return {};
}

std::string element_text(TensorRef tensor, int64_t n) {
  const auto* p = static_cast<const uint8_t*>(tensor.data()) +
                  static_cast<std::size_t>(element_offset(tensor, n)) * dtype_size(tensor.dtype());
  auto read = [p](auto value) {
    std::memcpy(&value, p, sizeof value);
    return value;
  };
  switch (tensor.dtype()) {
    case DType::Float32: return fmt::format("{}", read(float{}));
    case DType::Float64: return fmt::format("{}", read(double{}));
    case DType::Float16: return fmt::format("{}", Half::from_bits(read(uint16_t{})).to_float());
    case DType::BFloat16: return fmt::format("{}", BFloat16::from_bits(read(uint16_t{})).to_float());
    case DType::Int8: return fmt::format("{}", read(int8_t{}));
    case DType::UInt8: return fmt::format("{}", read(uint8_t{}));
    case DType::Int16: return fmt::format("{}", read(int16_t{}));
    case DType::UInt16: return fmt::format("{}", read(uint16_t{}));
    case DType::Int32: return fmt::format("{}", read(int32_t{}));
    case DType::Int64: return fmt::format("{}", read(int64_t{}));
    case DType::Bool: return read(uint8_t{}) ? "true" : "false";
  }
  return "?";
}

}  // namespace

std::string read_inputs(const Program& program, const std::vector<std::string>& files, bool batched,
                        InputFiles* inputs) {
  if (files.size() != program.input_count())
    return fmt::format("{}: the program takes {} input(s), got {} --input file(s)", program.path(),
                       program.input_count(), files.size());
  inputs->arrays.clear();
  for (std::size_t i = 0; i < files.size(); ++i) {
    Result<NpyArray> read = read_npy(files[i]);
    if (!read) return read.status().message();
    NpyArray& array = *read;
    const auto& check = batched ? check_batch : check_array;
    if (std::string error = check(program, array, i, files[i]); !error.empty()) return error;
    if (batched && i > 0 && array.shape[0] != inputs->count)
      return fmt::format("{}: a batch of {} input(s), but {} holds {}", files[i], array.shape[0], files[0],
                         inputs->count);
    inputs->count = batched ? array.shape[0] : 1;
    inputs->arrays.push_back(std::move(array));
    inputs->files.push_back(files[i]);
  }
  return {};
}

std::string fill_inputs(RunState& state, const InputFiles& inputs, int64_t item, bool batched) {
  for (std::size_t i = 0; i < inputs.arrays.size(); ++i) {
    const std::vector<int64_t>& shape = inputs.arrays[i].shape;
    const std::vector<int64_t> item_shape(shape.begin() + (batched ? 1 : 0), shape.end());
    if (const Status resized = state.resize_input(i, item_shape); !resized)
      return fmt::format("{}: {}", inputs.files[i], resized.message());
    const std::size_t item_bytes = inputs.arrays[i].data.size() / static_cast<std::size_t>(inputs.count);
    copy_from_logical_order(state.input(i), inputs.arrays[i].data.data() + static_cast<std::size_t>(item) * item_bytes);
  }
  return {};
}

std::string OutputStack::check(const Program& program) {
  for (std::size_t i = 0; i < program.output_count(); ++i)
    if (program.output_spec(i).sizes.size() + 1 > ET_OPS_MAX_DIMS)
      return fmt::format("{}: output {} has {} dimensions: a batch of it would have more than {}", program.path(), i,
                         program.output_spec(i).sizes.size(), ET_OPS_MAX_DIMS);
  return {};
}

std::string OutputStack::add(const Program& program, const RunState& state, int64_t item) {
  if (tensors_.empty())
    for (std::size_t i = 0; i < program.output_count(); ++i) {
      const TensorRef output = state.output(i);
      bytes_.emplace_back(static_cast<std::size_t>(count_) * output.nbytes());
      std::vector<int64_t> sizes = {count_};
      sizes.insert(sizes.end(), output.sizes(), output.sizes() + output.dim());
      tensors_.emplace_back(output.dtype(), bytes_.back().data(), std::move(sizes));
    }
  for (std::size_t i = 0; i < tensors_.size(); ++i) {
    const TensorRef output = state.output(i);
    const TensorRef stacked = tensors_[i].ref();
    const bool same = output.dtype() == stacked.dtype() && output.dim() + 1 == stacked.dim() &&
                      std::equal(output.sizes(), output.sizes() + output.dim(), stacked.sizes() + 1);
    if (!same)
      return fmt::format("{}: output {} is {}, but the batch's first input gave {} {}", program.path(), i,
                         describe(output), dtype_name(stacked.dtype()),
                         shape_text(std::vector<int64_t>(stacked.sizes() + 1, stacked.sizes() + stacked.dim())));
    copy_to_logical_order(output, bytes_[i].data() + static_cast<std::size_t>(item) * output.nbytes());
  }
  return {};
}

std::string describe(TensorRef tensor) {
  return fmt::format("{} {}", dtype_name(tensor.dtype()),
                     shape_text(std::vector<int64_t>(tensor.sizes(), tensor.sizes() + tensor.dim())));
}

std::string summarize(TensorRef tensor, std::size_t max_values) {
  std::vector<std::string> values;
  const int64_t shown = std::min<int64_t>(tensor.numel(), static_cast<int64_t>(max_values));
  for (int64_t n = 0; n < shown; ++n) values.push_back(element_text(tensor, n));
  const char* more = tensor.numel() > shown ? ", ..." : "";
  return fmt::format("{}: {}{} ({} values)", describe(tensor), fmt::join(values, ", "), more, tensor.numel());
}

}  // namespace et_ops::tool
