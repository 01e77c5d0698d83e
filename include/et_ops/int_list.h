// IntList: a non-owning view of an int list argument (sizes, strides, dims).
#ifndef ET_OPS_INT_LIST_H
#define ET_OPS_INT_LIST_H

#include <cstdint>
#include <vector>

#include "et_ops/abi.h"

namespace et_ops {

// The elements must outlive the call the list is passed to.
class IntList {
 public:
  constexpr IntList() = default;
  constexpr IntList(const int64_t* data, int64_t size) : data_(data), size_(size) {}
  IntList(const std::vector<int64_t>& values)  // NOLINT: a vector is usable wherever a view is
      : data_(values.data()), size_(static_cast<int64_t>(values.size())) {}
  constexpr IntList(et_ops_int_list raw) : data_(raw.data), size_(raw.size) {}  // NOLINT

  constexpr int64_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const int64_t* data() const { return data_; }
  constexpr int64_t operator[](int64_t i) const { return data_[i]; }
  constexpr const int64_t* begin() const { return data_; }
  constexpr const int64_t* end() const { return data_ + size_; }

 private:
  const int64_t* data_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace et_ops

#endif  // ET_OPS_INT_LIST_H
