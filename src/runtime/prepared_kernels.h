// The load-time state of a program's prepared kernels (see et_ops/abi.h):
// made by each kernel's prepare function when the program loads, released
// by the same library when the program is destroyed.
#ifndef ET_OPS_SRC_RUNTIME_PREPARED_KERNELS_H
#define ET_OPS_SRC_RUNTIME_PREPARED_KERNELS_H

#include <vector>

#include "et_ops/abi.h"

namespace et_ops::runtime {

class PreparedStates {
 public:
  PreparedStates() = default;
  ~PreparedStates() {
    for (auto it = states_.rbegin(); it != states_.rend(); ++it) it->release(it->state);
  }
  PreparedStates(const PreparedStates&) = delete;
  PreparedStates& operator=(const PreparedStates&) = delete;

  // Takes ownership of `state` (reserve() first: adding never throws then).
  void add(et_ops_release_fn release, void* state) { states_.push_back({release, state}); }
  void reserve(std::size_t n) { states_.reserve(n); }

 private:
  struct Owned {
    et_ops_release_fn release;
    void* state;
  };
  std::vector<Owned> states_;
};

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_PREPARED_KERNELS_H
