// Tensors: TensorRef is a non-owning view of an et_ops_tensor (what kernels
// receive); Tensor owns the shape metadata of a tensor over caller-owned
// elements (what C++ code builds to call a kernel directly).
#ifndef ET_OPS_TENSOR_H
#define ET_OPS_TENSOR_H

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"

namespace et_ops {

class TensorRef {
 public:
  explicit TensorRef(const et_ops_tensor& t) : t_(&t) {}

  DType dtype() const { return static_cast<DType>(t_->dtype); }
  int64_t dim() const { return t_->dim; }
  int64_t numel() const { return t_->numel; }
  int64_t size(int64_t d) const { return t_->sizes[d]; }
  int64_t stride(int64_t d) const { return t_->strides[d]; }
  const int64_t* sizes() const { return t_->sizes; }
  const int64_t* strides() const { return t_->strides; }
  const uint8_t* dim_order() const { return t_->dim_order; }
  void* data() const { return t_->data; }
  template <typename T>
  T* data_as() const { return static_cast<T*>(t_->data); }
  std::size_t nbytes() const { return static_cast<std::size_t>(t_->numel) * dtype_size(dtype()); }
  const et_ops_tensor& raw() const { return *t_; }

  // True when the elements are laid out in row-major (logical) order.
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int64_t d = dim() - 1; d >= 0; --d) {
      if (size(d) != 1 && stride(d) != expected) return false;
      expected *= size(d);
    }
    return true;
  }

  bool same_shape(const TensorRef& other) const {
    if (dim() != other.dim()) return false;
    for (int64_t d = 0; d < dim(); ++d)
      if (size(d) != other.size(d)) return false;
    return true;
  }

 private:
  const et_ops_tensor* t_;
};

// A non-owning view of a `Tensor[]` argument: the tensors of one operator
// call, in order. Its elements outlive the call it is passed to.
class TensorList {
 public:
  TensorList() = default;
  explicit TensorList(et_ops_tensor_list raw) : raw_(raw) {}
  int64_t size() const { return raw_.size; }
  bool empty() const { return raw_.size == 0; }
  TensorRef operator[](int64_t i) const { return TensorRef(*raw_.data[i]); }
  const et_ops_tensor_list& raw() const { return raw_; }

 private:
  et_ops_tensor_list raw_{nullptr, 0};
};

// A non-owning view of a `Tensor?[]` argument (aten::index's indices): each
// element a tensor or None.
class OptionalTensorList {
 public:
  OptionalTensorList() = default;
  explicit OptionalTensorList(et_ops_tensor_list raw) : raw_(raw) {}
  int64_t size() const { return raw_.size; }
  bool empty() const { return raw_.size == 0; }
  std::optional<TensorRef> operator[](int64_t i) const {
    if (raw_.data[i] == nullptr) return std::nullopt;
    return TensorRef(*raw_.data[i]);
  }
  const et_ops_tensor_list& raw() const { return raw_; }

 private:
  et_ops_tensor_list raw_{nullptr, 0};
};

namespace detail {
// Element strides for `sizes` laid out in `dim_order` (outermost first).
inline std::vector<int64_t> strides_for(const std::vector<int64_t>& sizes,
                                        const std::vector<uint8_t>& dim_order) {
  std::vector<int64_t> strides(sizes.size(), 1);
  int64_t running = 1;
  for (std::size_t i = dim_order.size(); i-- > 0;) {
    strides[dim_order[i]] = running;
    running *= sizes[dim_order[i]];
  }
  return strides;
}
}  // namespace detail

// Shape metadata plus a pointer to elements that the caller owns.
class Tensor {
 public:
  Tensor(DType dtype, void* data, std::vector<int64_t> sizes, std::vector<uint8_t> dim_order = {})
      : sizes_(std::move(sizes)), dim_order_(std::move(dim_order)) {
    if (sizes_.size() > ET_OPS_MAX_DIMS) throw std::invalid_argument("et_ops::Tensor: too many dimensions");
    if (dim_order_.empty())
      for (std::size_t d = 0; d < sizes_.size(); ++d) dim_order_.push_back(static_cast<uint8_t>(d));
    if (dim_order_.size() != sizes_.size()) throw std::invalid_argument("et_ops::Tensor: dim_order has the wrong length");
    std::vector<bool> seen(sizes_.size(), false);
    for (uint8_t d : dim_order_) {
      if (d >= sizes_.size() || seen[d]) throw std::invalid_argument("et_ops::Tensor: dim_order is not a permutation");
      seen[d] = true;
    }
    for (int64_t s : sizes_)
      if (s < 0) throw std::invalid_argument("et_ops::Tensor: negative size");
    strides_ = detail::strides_for(sizes_, dim_order_);
    int64_t numel = 1;
    for (int64_t s : sizes_) numel *= s;
    raw_.data = data;
    raw_.numel = numel;
    raw_.dtype = static_cast<int32_t>(dtype);
    raw_.dim = static_cast<int32_t>(sizes_.size());
    point_raw();
  }
  Tensor(const Tensor& o) : sizes_(o.sizes_), strides_(o.strides_), dim_order_(o.dim_order_), raw_(o.raw_) {
    point_raw();
  }
  Tensor& operator=(const Tensor& o) {
    sizes_ = o.sizes_;
    strides_ = o.strides_;
    dim_order_ = o.dim_order_;
    raw_ = o.raw_;
    point_raw();
    return *this;
  }
  Tensor(Tensor&& o) noexcept : Tensor(static_cast<const Tensor&>(o)) {}
  Tensor& operator=(Tensor&& o) noexcept { return *this = static_cast<const Tensor&>(o); }

  TensorRef ref() const { return TensorRef(raw_); }
  operator TensorRef() const { return ref(); }  // NOLINT: a Tensor is usable wherever a view is
  et_ops_tensor* raw() { return &raw_; }
  const et_ops_tensor* raw() const { return &raw_; }
  DType dtype() const { return static_cast<DType>(raw_.dtype); }
  int64_t numel() const { return raw_.numel; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  void* data() const { return raw_.data; }

 private:
  void point_raw() {
    raw_.sizes = sizes_.data();
    raw_.strides = strides_.data();
    raw_.dim_order = dim_order_.data();
  }
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  std::vector<uint8_t> dim_order_;
  et_ops_tensor raw_{};
};

}  // namespace et_ops

#endif  // ET_OPS_TENSOR_H
