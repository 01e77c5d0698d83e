// aten::view_copy.out, permute_copy.out, slice_copy.Tensor_out,
// select_copy.int_out and expand_copy.out: element copies for every dtype
// (bytes are moved, never converted), in any dense layout; and aten::copy.out,
// which broadcasts and converts between dtypes as PyTorch's x86 build does
// (float16 and bfloat16 through float32, as c10's Half and BFloat16 do:
// widening is exact, narrowing rounds to nearest even once from float32).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "checks.h"
#include "et_ops/half.h"
#include "et_ops/kernels/portable.h"
#include "float16_simd.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Shape;


bool check_list(KernelContext& ctx, const char* op, const char* name, IntList list) {
  if (!detail::check_int_list(ctx, op, name, list)) return false;
  if (list.size() > ET_OPS_MAX_DIMS)
    return detail::fail(ctx, op, "{} has {} entries; at most {} dimensions are supported", name, list.size(),
                        ET_OPS_MAX_DIMS);
  return true;
}

// The shape `size` asks for, with its one -1 (if any) inferred from numel,
// as aten's infer_size.
bool resolve_view_shape(KernelContext& ctx, IntList size, int64_t numel, Shape& shape) {
  const char* op = op_name::view_copy_out;
  if (!check_list(ctx, op, "size", size)) return false;
  int64_t inferred = -1;
  int64_t known = 1;
  shape.dim = size.size();
  for (int64_t i = 0; i < size.size(); ++i) {
    const int64_t value = size[i];
    shape.sizes[i] = value;
    if (value == -1) {
      if (inferred >= 0) return detail::fail(ctx, op, "size {} has more than one -1", detail::list_string(size));
      inferred = i;
      continue;
    }
    if (value < 0)
      return detail::fail(ctx, op, "size {} has an invalid entry {} at index {}", detail::list_string(size), value, i);
    if (value > 1 && known > INT64_MAX / value)
      return detail::fail(ctx, op, "size {} has a product that overflows", detail::list_string(size));
    known *= value;
  }
  if (inferred < 0) {
    if (known == numel) return true;
    return detail::fail(ctx, op, "size {} holds {} elements, but self has {}", detail::list_string(size), known,
                        numel);
  }
  if (known == 0)
    return detail::fail(ctx, op, "size {} is ambiguous: the -1 could be any value when the other sizes multiply to 0",
                        detail::list_string(size));
  if (numel % known != 0)
    return detail::fail(ctx, op, "size {} is invalid for self with {} elements", detail::list_string(size), numel);
  shape.sizes[inferred] = numel / known;
  return true;
}

// Copies self into out element by element in logical (row-major) order;
// the two may have different shapes of equal numel.
template <std::size_t N>
void copy_logical(TensorRef self, TensorRef out) {
  const auto* src = static_cast<const unsigned char*>(self.data());
  auto* dst = static_cast<unsigned char*>(out.data());
  detail::LogicalCursor from(self);
  detail::LogicalCursor to(out);
  for (int64_t i = 0; i < self.numel(); ++i) {
    std::memcpy(dst + to.offset() * N, src + from.offset() * N, N);
    from.next();
    to.next();
  }
}

// The permutation `dims` describes, each entry wrapped into [0, rank).
bool resolve_permutation(KernelContext& ctx, TensorRef self, IntList dims, int64_t* permutation) {
  const char* op = op_name::permute_copy_out;
  if (!check_list(ctx, op, "dims", dims)) return false;
  if (dims.size() != self.dim())
    return detail::fail(ctx, op, "dims {} has {} entries, but self is {}-D", detail::list_string(dims), dims.size(),
                        self.dim());
  bool seen[ET_OPS_MAX_DIMS] = {};
  for (int64_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -self.dim() || dims[i] >= self.dim())
      return detail::fail(ctx, op, "dims {} has entry {} out of range for a {}-D self", detail::list_string(dims),
                          dims[i], self.dim());
    permutation[i] = dims[i] < 0 ? dims[i] + self.dim() : dims[i];
    if (seen[permutation[i]])
      return detail::fail(ctx, op, "dims {} repeats dimension {}", detail::list_string(dims), permutation[i]);
    seen[permutation[i]] = true;
  }
  return true;
}

// The elements a slice keeps along its dimension: the first and how many,
// with start and end as aten's slice resolves them (negative values count
// from the end, then both are clamped to [0, size], an end before the
// start keeps nothing).
struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
};

SliceRange resolve_slice(int64_t size, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  int64_t first = start.value_or(0);
  int64_t last = end.value_or(std::numeric_limits<int64_t>::max());
  if (first < 0) first += size;
  if (last < 0) last += size;
  first = std::clamp<int64_t>(first, 0, size);
  last = std::clamp<int64_t>(last, first, size);
  const int64_t length = last - first;
  return SliceRange{first, length == 0 ? 0 : (length - 1) / step + 1};
}

// The shape `size` asks expand for: -1 keeps self's size; self's sizes of
// 1 may grow; new leading dimensions take any non-negative size.
bool resolve_expand_shape(KernelContext& ctx, TensorRef self, IntList size, Shape& shape) {
  const char* op = op_name::expand_copy_out;
  if (!check_list(ctx, op, "size", size)) return false;
  if (size.size() < self.dim())
    return detail::fail(ctx, op, "size {} has {} entries, fewer than self's {} dimensions (shape {})",
                        detail::list_string(size), size.size(), self.dim(), detail::shape_string(self));
  shape.dim = size.size();
  const int64_t leading = size.size() - self.dim();
  for (int64_t i = 0; i < size.size(); ++i) {
    const int64_t have = i >= leading ? self.size(i - leading) : -1;
    int64_t want = size[i];
    if (want == -1 && have >= 0) want = have;
    if (want < 0 || (have >= 0 && have != 1 && have != want))
      return detail::fail(ctx, op, "size {} cannot expand self of shape {}: entry {} is {}{}", detail::list_string(size),
                          detail::shape_string(self), i, size[i],
                          have < 0 ? " (a new leading dimension needs a size of at least 0)"
                                   : " (only a size of 1 can change)");
    shape.sizes[i] = want;
  }
  return true;
}

// Converts an element as PyTorch's CPU kernels do on x86-64: a floating
// value that an integer cannot hold (NaN, infinities, out of range) gives
// what cvttss2si / cvttsd2si give (the lowest value of int32, or of int64
// for int64), never undefined behaviour; narrower integers take int32's
// low bits; anything to bool is `!= 0`.
template <typename To, typename From>
To convert_element(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != From(0);
  } else if constexpr (std::is_floating_point_v<From> && !std::is_floating_point_v<To>) {
    using Wide = std::conditional_t<std::is_same_v<To, int64_t>, int64_t, int32_t>;
    constexpr double kLimit = std::is_same_v<Wide, int64_t> ? 9223372036854775808.0 : 2147483648.0;
    const double v = static_cast<double>(value);
    const Wide wide = (v > -kLimit - 1.0 && v < kLimit) ? static_cast<Wide>(v) : std::numeric_limits<Wide>::min();
    return static_cast<To>(static_cast<std::make_unsigned_t<Wide>>(wide));
  } else if constexpr (!std::is_floating_point_v<To>) {
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(static_cast<uint64_t>(static_cast<int64_t>(value))));
  } else {
    return static_cast<To>(value);
  }
}

template <typename T>
constexpr bool kSixteenBitFloat = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// convert_element, with the 16-bit floats going through float32.
template <typename To, typename From>
To convert_any(From value) {
  if constexpr (kSixteenBitFloat<From>) return convert_any<To>(value.to_float());
  else if constexpr (kSixteenBitFloat<To>) return To::from_float(convert_element<float>(value));
  else return convert_element<To>(value);
}

constexpr const char* kCopyDtypes = "float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64, bool";

// dispatch_comparable, and float16 and bfloat16.
template <typename F>
bool dispatch_copyable(DType t, F&& f) {
  if (t == DType::Float16) {
    f(detail::Tag<Half>{});
    return true;
  }
  if (t == DType::BFloat16) {
    f(detail::Tag<BFloat16>{});
    return true;
  }
  return detail::dispatch_comparable(t, f);
}

bool check_copyable_dtype(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  if (dispatch_copyable(t.dtype(), [](auto) {})) return true;
  return detail::fail(ctx, op, "{} has dtype {}, which is not supported; expected one of {}", name,
                      dtype_name(t.dtype()), kCopyDtypes);
}

// float32 to or from float16 or bfloat16 (a 16-bit cache written and read)
// in rows contiguous in both tensors, through the vectorised loops (the
// same bits as convert_any). False for other dtypes or layouts, which
// convert_strided converts an element at a time.
bool convert_16_bit_rows(const detail::StridedLoop<2>& loop, TensorRef out, TensorRef src) {
  using RowLoop = void (*)(const void*, void*, std::size_t);
  RowLoop row_loop = nullptr;
  const DType to = out.dtype(), from = src.dtype();
  if (from == DType::Float32 && to == DType::Float16)
    row_loop = [](const void* i, void* o, std::size_t n) {
      simd::narrow_to_float16(static_cast<const float*>(i), static_cast<uint16_t*>(o), n);
    };
  else if (from == DType::Float32 && to == DType::BFloat16)
    row_loop = [](const void* i, void* o, std::size_t n) {
      simd::narrow_to_bfloat16(static_cast<const float*>(i), static_cast<uint16_t*>(o), n);
    };
  else if (from == DType::Float16 && to == DType::Float32)
    row_loop = [](const void* i, void* o, std::size_t n) {
      simd::widen_float16(static_cast<const uint16_t*>(i), static_cast<float*>(o), n);
    };
  else if (from == DType::BFloat16 && to == DType::Float32)
    row_loop = [](const void* i, void* o, std::size_t n) {
      simd::widen_bfloat16(static_cast<const uint16_t*>(i), static_cast<float*>(o), n);
    };
  const bool contiguous_rows = loop.dim == 0 || (loop.strides[0][loop.dim - 1] == 1 && loop.strides[1][loop.dim - 1] == 1);
  if (row_loop == nullptr || !contiguous_rows) return false;
  auto* o = static_cast<unsigned char*>(out.data());
  const auto* i = static_cast<const unsigned char*>(src.data());
  const int64_t out_size = static_cast<int64_t>(dtype_size(to)), src_size = static_cast<int64_t>(dtype_size(from));
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t*) {
    row_loop(i + offset[1] * src_size, o + offset[0] * out_size, static_cast<std::size_t>(length));
  });
  return true;
}

template <typename To, typename From>
void convert_strided(const detail::StridedLoop<2>& loop, To* out, const From* in) {
  detail::for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t j = 0; j < length; ++j)
      out[offset[0] + j * step[0]] = convert_any<To>(detail::load(in + offset[1] + j * step[1]));
  });
}

}  // namespace

bool view_copy_out(KernelContext& ctx, TensorRef self, IntList size, TensorRef out) {
  const char* op = op_name::view_copy_out;
  Shape shape;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                     resolve_view_shape(ctx, size, self.numel(), shape) &&
                     detail::check_out_shape(ctx, op, "out", out, shape, "size, with -1 inferred");
  if (!valid) return false;
  const bool both_contiguous = self.is_contiguous() && out.is_contiguous();
  // Contiguous memory is logical order: one memmove, which also makes
  // out == self (same data) a harmless no-op.
  if (both_contiguous && (!detail::overlaps(out, self) || out.data() == self.data())) {
    if (self.numel() > 0 && out.data() != self.data()) std::memmove(out.data(), self.data(), self.nbytes());
    return ctx.ok();
  }
  if (!detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden)) return false;
  detail::dispatch_element_size(dtype_size(self.dtype()), [&](auto size_tag) { copy_logical<decltype(size_tag)::value>(self, out); });
  return ctx.ok();
}

bool permute_copy_out(KernelContext& ctx, TensorRef self, IntList dims, TensorRef out) {
  const char* op = op_name::permute_copy_out;
  int64_t permutation[ET_OPS_MAX_DIMS] = {};
  const bool structure_ok = detail::check_tensor(ctx, op, "self", self) &&
                            detail::check_tensor(ctx, op, "out", out) &&
                            detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                            resolve_permutation(ctx, self, dims, permutation);
  if (!structure_ok) return false;
  detail::StridedLoop<2> loop;
  Shape shape;
  shape.dim = loop.dim = self.dim();
  for (int64_t i = 0; i < self.dim(); ++i) {
    shape.sizes[i] = loop.sizes[i] = self.size(permutation[i]);
    loop.strides[0][i] = out.dim() == self.dim() ? out.stride(i) : 0;
    loop.strides[1][i] = self.stride(permutation[i]);
  }
  const bool valid = detail::check_out_shape(ctx, op, "out", out, shape, "self's sizes in the order of dims") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  loop.coalesce();
  detail::dispatch_element_size(dtype_size(self.dtype()),
                        [&](auto size_tag) { detail::copy_strided<decltype(size_tag)::value>(loop, out.data(), self.data()); });
  return ctx.ok();
}

bool slice_copy_out(KernelContext& ctx, TensorRef self, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step, TensorRef out) {
  const char* op = op_name::slice_copy_out;
  int64_t wrapped = 0;
  const bool args_ok = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                       detail::check_same_dtype(ctx, op, "out", out, "self", self);
  if (!args_ok) return false;
  if (self.dim() == 0) return detail::fail(ctx, op, "self is 0-dim; a slice needs a dimension to slice");
  if (!detail::wrap_dim(ctx, op, "dim", dim, self.dim(), wrapped)) return false;
  if (step <= 0) return detail::fail(ctx, op, "step = {} must be positive", step);
  const SliceRange range = resolve_slice(self.size(wrapped), start, end, step);
  Shape shape = detail::shape_of(self);
  shape.sizes[wrapped] = range.count;
  const bool valid = detail::check_out_shape(ctx, op, "out", out, shape, "self's shape with the sliced length") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  if (out.numel() == 0) return true;
  detail::StridedLoop<2> loop;
  loop.dim = self.dim();
  for (int64_t d = 0; d < self.dim(); ++d) {
    loop.sizes[d] = shape.sizes[d];
    loop.strides[0][d] = out.stride(d);
    loop.strides[1][d] = self.stride(d);
  }
  // With two or more elements kept, step < size, so the product fits; with
  // fewer the stride is never stepped.
  loop.strides[1][wrapped] = range.count > 1 ? self.stride(wrapped) * step : 0;
  loop.coalesce();
  const std::size_t element = dtype_size(self.dtype());
  const auto* first =
      static_cast<const unsigned char*>(self.data()) + range.start * self.stride(wrapped) * static_cast<int64_t>(element);
  detail::dispatch_element_size(element, [&](auto size_tag) {
    detail::copy_strided<decltype(size_tag)::value>(loop, out.data(), first);
  });
  return ctx.ok();
}

bool select_copy_int_out(KernelContext& ctx, TensorRef self, int64_t dim, int64_t index, TensorRef out) {
  const char* op = op_name::select_copy_int_out;
  int64_t wrapped = 0;
  const bool args_ok = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                       detail::check_same_dtype(ctx, op, "out", out, "self", self);
  if (!args_ok) return false;
  if (self.dim() == 0) return detail::fail(ctx, op, "self is 0-dim; select needs a dimension");
  if (!detail::wrap_dim(ctx, op, "dim", dim, self.dim(), wrapped)) return false;
  const int64_t size = self.size(wrapped);
  if (index < -size || index >= size)
    return detail::fail(ctx, op, "index = {} is out of range for dimension {} of size {} (expected [{}, {}])", index,
                        wrapped, size, -size, size - 1);
  const int64_t position = index < 0 ? index + size : index;
  Shape shape;
  detail::StridedLoop<2> loop;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == wrapped) continue;
    shape.sizes[shape.dim++] = self.size(d);
  }
  const bool valid = detail::check_out_shape(ctx, op, "out", out, shape, "self's shape without dimension dim") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  if (out.numel() == 0) return true;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d == wrapped) continue;
    loop.sizes[loop.dim] = self.size(d);
    loop.strides[0][loop.dim] = out.stride(loop.dim);
    loop.strides[1][loop.dim++] = self.stride(d);
  }
  loop.coalesce();
  const std::size_t element = dtype_size(self.dtype());
  const auto* first =
      static_cast<const unsigned char*>(self.data()) + position * self.stride(wrapped) * static_cast<int64_t>(element);
  detail::dispatch_element_size(element, [&](auto size_tag) {
    detail::copy_strided<decltype(size_tag)::value>(loop, out.data(), first);
  });
  return ctx.ok();
}

bool expand_copy_out(KernelContext& ctx, TensorRef self, IntList size, bool implicit, TensorRef out) {
  (void)implicit;  // only tells autograd whether the expand was written by the user
  const char* op = op_name::expand_copy_out;
  Shape shape;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                     resolve_expand_shape(ctx, self, size, shape) &&
                     detail::check_out_shape(ctx, op, "out", out, shape, "size, with -1 kept from self") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  const TensorRef operands[2] = {out, self};
  const auto loop = detail::broadcast_loop(shape, operands);
  detail::dispatch_element_size(dtype_size(self.dtype()), [&](auto size_tag) {
    detail::copy_strided<decltype(size_tag)::value>(loop, out.data(), self.data());
  });
  return ctx.ok();
}

// out takes self's shape (self's elements are never read: out may be self,
// a program's state); src broadcasts to it and converts to out's dtype.
bool copy_out(KernelContext& ctx, TensorRef self, TensorRef src, bool non_blocking, TensorRef out) {
  (void)non_blocking;  // a CPU copy is always complete when it returns
  const char* op = op_name::copy_out;
  const Shape shape = detail::shape_of(self);
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "src", src) &&
                     detail::check_tensor(ctx, op, "out", out) &&
                     check_copyable_dtype(ctx, op, "src", src) && check_copyable_dtype(ctx, op, "out", out) &&
                     detail::check_broadcastable_to(ctx, op, "src", src, shape, "self") &&
                     detail::check_out_shape(ctx, op, "out", out, shape, "the shape of self") &&
                     detail::check_no_overlap(ctx, op, "out", out, "src", src, detail::Alias::ExactAllowed);
  if (!valid || out.numel() == 0) return valid;
  if (detail::is_exact_alias(out, src)) return true;
  const TensorRef operands[2] = {out, src};
  const auto loop = detail::broadcast_loop(shape, operands);
  if (src.dtype() == out.dtype()) {
    detail::dispatch_element_size(dtype_size(out.dtype()), [&](auto size_tag) {
      detail::copy_strided<decltype(size_tag)::value>(loop, out.data(), src.data());
    });
    return true;
  }
  if (convert_16_bit_rows(loop, out, src)) return true;
  dispatch_copyable(out.dtype(), [&](auto to) {
    dispatch_copyable(src.dtype(), [&](auto from) {
      using To = typename decltype(to)::type;
      using From = typename decltype(from)::type;
      convert_strided<To, From>(loop, out.data_as<To>(), src.data_as<const From>());
    });
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
