// et_xnnpack::convert_layout.out: copies a tensor into one of the same
// dtype and sizes in another dim order (contiguous <-> channels-last at the
// edges of an int8 region of a program). Those two changes are transposes
// of two blocks of dimensions (C against H * W), done in tiles across the
// run state's threads; any other dim order is copied element by element.
#include <pthreadpool.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "kernels.h"

namespace et_ops::kernels::xnnpack {
namespace {

bool check_layout_tensors(KernelContext& ctx, TensorRef self, TensorRef out) {
  using namespace detail;
  if (out.dtype() != self.dtype())
    return fail(ctx, op_name::convert_layout_kernel, "out must have self's dtype {}, got {}", dtype_name(self.dtype()), dtype_name(out.dtype()));
  if (!self.same_shape(out))
    return fail(ctx, op_name::convert_layout_kernel, "out has sizes {}, but self has {}", shape_string(out), shape_string(self));
  if (!kernels::detail::is_dense(self) || !kernels::detail::is_dense(out))
    return fail(ctx, op_name::convert_layout_kernel, "self and out must be dense layouts, got strides {} and {}",
                kernels::detail::list_string(self.strides(), self.dim()),
                kernels::detail::list_string(out.strides(), out.dim()));
  return true;
}

// Copies the elements of self to out's layout, the innermost dimension in
// a tight loop.
template <typename T>
void copy_strided(TensorRef self, TensorRef out) {
  const int64_t dims = self.dim();
  if (self.numel() == 0) return;
  if (dims == 0) {
    *out.data_as<T>() = *self.data_as<const T>();
    return;
  }
  const int64_t inner = self.size(dims - 1), in_step = self.stride(dims - 1), out_step = out.stride(dims - 1);
  int64_t index[ET_OPS_MAX_DIMS] = {};
  const T* in = self.data_as<const T>();
  T* dst = out.data_as<T>();
  for (int64_t n = 0; n < self.numel(); n += inner) {
    int64_t from = 0, to = 0;
    for (int64_t d = 0; d + 1 < dims; ++d) from += index[d] * self.stride(d), to += index[d] * out.stride(d);
    for (int64_t i = 0; i < inner; ++i) dst[to + i * out_step] = in[from + i * in_step];
    for (int64_t d = dims - 1; d-- > 0;) {
      if (++index[d] < self.size(d)) break;
      index[d] = 0;
    }
  }
}

// f(T{}) with T the unsigned integer of self's element size: a layout
// change moves bytes, whatever they mean.
template <typename F>
void by_element_size(TensorRef self, const F& f) {
  switch (dtype_size(self.dtype())) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

// self's memory seen as [outer, rows, cols] and out's as [outer, cols, rows].
struct Transpose {
  int64_t outer = 1, rows = 1, cols = 1;
};

// The transpose that takes self's memory order P X Y (P shared, X and Y
// blocks of dimensions, so rows and cols above 1) to out's P Y X, if out's
// order is that; a layout that is self's own is one with a single row.
// (Size-1 dimensions move no element: memory_order leaves them out.)
std::optional<Transpose> as_transpose(TensorRef self, TensorRef out) {
  const std::vector<int64_t> from = detail::memory_order(self), to = detail::memory_order(out);
  const auto size_of = [&](auto first, auto last) {
    int64_t n = 1;
    for (auto d = first; d != last; ++d) n *= self.size(*d);
    return n;
  };
  std::size_t shared = 0;
  while (shared < from.size() && from[shared] == to[shared]) ++shared;
  if (shared == from.size()) return Transpose{1, 1, self.numel()};
  for (std::size_t split = shared + 1; split < from.size(); ++split) {
    const std::size_t y_size = from.size() - split;
    if (std::equal(from.begin() + split, from.end(), to.begin() + shared) &&
        std::equal(from.begin() + shared, from.begin() + split, to.begin() + shared + y_size))
      return Transpose{size_of(from.begin(), from.begin() + shared), size_of(from.begin() + shared, from.begin() + split),
                       size_of(from.begin() + split, from.end())};
  }
  return std::nullopt;
}

// Columns of one task, and the square tiles a task goes through (rows
// read and columns written within the caches).
constexpr int64_t kTile = 32;
constexpr int64_t kTaskColumns = 8 * kTile;

template <typename T>
struct TransposeTasks {
  const T* in;
  T* out;
  Transpose t;
  int64_t tasks_per_block() const { return (t.cols + kTaskColumns - 1) / kTaskColumns; }
  int64_t count() const { return t.outer * tasks_per_block(); }
  // Columns [first, last) of R rows: each column's R elements stored side
  // by side (an image's 3 or 4 channels, the loop the compiler vectorises).
  template <int R>
  static void few_rows(const T* from, T* to, int64_t cols, int64_t first, int64_t last) {
    for (int64_t c = first; c < last; ++c)
      for (int r = 0; r < R; ++r) to[c * R + r] = from[r * cols + c];
  }
  void run(int64_t task) const {
    const int64_t block = task / tasks_per_block(), first = task % tasks_per_block() * kTaskColumns;
    const int64_t last = std::min(first + kTaskColumns, t.cols);
    const T* from = in + block * t.rows * t.cols;
    T* to = out + block * t.rows * t.cols;
    switch (t.rows) {
      case 2: return few_rows<2>(from, to, t.cols, first, last);
      case 3: return few_rows<3>(from, to, t.cols, first, last);
      case 4: return few_rows<4>(from, to, t.cols, first, last);
      default: break;
    }
    for (int64_t c0 = first; c0 < last; c0 += kTile) {
      const int64_t c1 = std::min(c0 + kTile, last);
      for (int64_t r0 = 0; r0 < t.rows; r0 += kTile) {
        const int64_t r1 = std::min(r0 + kTile, t.rows);
        for (int64_t c = c0; c < c1; ++c)
          for (int64_t r = r0; r < r1; ++r) to[c * t.rows + r] = from[r * t.cols + c];
      }
    }
  }
};

// Tensors below this many bytes are transposed on the calling thread.
constexpr int64_t kThreadedBytes = int64_t{1} << 16;

template <typename T>
void transpose(TensorRef self, TensorRef out, const Transpose& t, const RunEnvironment& env) {
  const TransposeTasks<T> tasks{self.data_as<const T>(), out.data_as<T>(), t};
  const bool threaded = env.threadpool != nullptr && env.thread_count > 1 &&
                        self.numel() * int64_t{sizeof(T)} >= kThreadedBytes && tasks.count() > 1;
  if (!threaded) {
    for (int64_t i = 0; i < tasks.count(); ++i) tasks.run(i);
    return;
  }
  pthreadpool_parallelize_1d(
      static_cast<pthreadpool_t>(env.threadpool),
      [](void* context, std::size_t i) { static_cast<const TransposeTasks<T>*>(context)->run(int64_t(i)); },
      const_cast<TransposeTasks<T>*>(&tasks), static_cast<std::size_t>(tasks.count()), 0);
}

void convert(TensorRef self, TensorRef out, const RunEnvironment& env) {
  if (self.numel() == 0) return;
  const std::optional<Transpose> t = as_transpose(self, out);
  if (t && t->rows == 1) {  // self's own memory order: the bytes as they are
    std::memcpy(out.data(), self.data(), std::size_t(self.numel()) * dtype_size(self.dtype()));
    return;
  }
  by_element_size(self, [&](auto element) {
    using T = decltype(element);
    if (t)
      transpose<T>(self, out, *t, env);
    else
      copy_strided<T>(self, out);
  });
}

}  // namespace

std::unique_ptr<LayoutState> convert_layout_prepare(KernelContext& ctx, TensorRef self, TensorRef out) {
  if (!check_layout_tensors(ctx, self, out)) return nullptr;
  auto state = std::make_unique<LayoutState>();
  state->numel = self.numel();
  return state;
}

bool convert_layout_run(KernelContext& ctx, const LayoutState& state, const RunEnvironment& env, TensorRef self,
                        TensorRef out) {
  if (!detail::check_tensor(ctx, op_name::convert_layout_kernel, "self", self) || !detail::check_tensor(ctx, op_name::convert_layout_kernel, "out", out) ||
      !check_layout_tensors(ctx, self, out))
    return false;
  if (self.numel() != state.numel)
    return detail::fail(ctx, op_name::convert_layout_kernel, "self is not the tensor the kernel was prepared for");
  convert(self, out, env);
  return true;
}

}  // namespace et_ops::kernels::xnnpack
