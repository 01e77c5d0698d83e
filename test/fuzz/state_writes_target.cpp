// State writes: the operators that update a program's state in place
// (index_put.out, index_copy.out, copy.out, and an elementwise add.out),
// called with a state buffer as both `self` and `out`, as a cache update is,
// with random shapes, dims, indices (in and out of range) and positions. The
// buffer sits between guard bytes: a kernel must write only inside it (an
// index outside is an error naming it), and a failing kernel must say why.
// The bytes name the operator first (its name and a NUL byte, as the kernel
// targets do; another name picks one by the next byte). An operator that is
// not registered in this build is skipped.
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "et_ops/registry.h"
#include "et_ops/tensor.h"
#include "et_ops/value.h"
#include "fuzz_input.h"
#include "fuzz_targets.h"

namespace et_ops::fuzz {
namespace {

constexpr std::size_t kGuardBytes = 64;
constexpr uint8_t kGuard = 0xA5;

// A float32 or int64 buffer with guard bytes on both sides.
struct Guarded {
  std::vector<uint8_t> bytes;
  Tensor tensor;
  Guarded(DType dtype, std::vector<int64_t> sizes, FuzzInput& in)
      : bytes(2 * kGuardBytes + numel_of(sizes) * dtype_size(dtype), kGuard),
        tensor(dtype, bytes.data() + kGuardBytes, std::move(sizes)) {
    for (std::size_t i = kGuardBytes; i < bytes.size() - kGuardBytes; ++i) bytes[i] = in.byte();
  }
  bool guards_intact() const {
    for (std::size_t i = 0; i < kGuardBytes; ++i)
      if (bytes[i] != kGuard || bytes[bytes.size() - 1 - i] != kGuard) return false;
    return true;
  }
  static std::size_t numel_of(const std::vector<int64_t>& sizes) {
    std::size_t n = 1;
    for (int64_t s : sizes) n *= static_cast<std::size_t>(s);
    return n;
  }
};

// Mostly valid positions, sometimes negative or past the end.
int64_t position(FuzzInput& in, int64_t extent) {
  if (in.chance(24)) return static_cast<int64_t>(in.raw<int16_t>());
  return static_cast<int64_t>(in.below(static_cast<std::size_t>(extent) + 1));
}

std::vector<int64_t> random_sizes(FuzzInput& in, std::size_t dims) {
  std::vector<int64_t> sizes;
  for (std::size_t d = 0; d < dims; ++d) sizes.push_back(static_cast<int64_t>(in.below(5)));
  return sizes;
}

namespace op_name = kernels::portable::op_name;

// The operators this target calls, chosen by name so that a seed keeps its operator.
enum class Update { IndexCopy, IndexPut, Copy, Add };
struct NamedUpdate {
  const char* name;
  Update update;
};
constexpr NamedUpdate kUpdates[] = {{op_name::index_copy_out, Update::IndexCopy},
                                    {op_name::index_put_out, Update::IndexPut},
                                    {op_name::copy_out, Update::Copy},
                                    {op_name::add_out, Update::Add}};

Update chosen_update(FuzzInput& in) {
  const std::string name = in.name();
  for (const NamedUpdate& u : kUpdates)
    if (name == u.name) return u.update;
  return kUpdates[in.below(std::size(kUpdates))].update;
}

void call(const char* op, std::vector<et_ops_value>& args, const std::vector<const et_ops_tensor*>& tensors,
          const Guarded& state) {
  const ResolvedKernel kernel = lookup_kernel(op, tensors.data(), tensors.size());
  if (kernel.fn == nullptr) return;  // not in this build
  const KernelContext context = call_kernel(kernel.fn, args);
  if (!context.ok() && context.message().empty()) target_failure("state_writes", "a failing kernel gave no message");
  if (!state.guards_intact()) target_failure("state_writes", "a kernel wrote outside the state buffer");
}

}  // namespace

int fuzz_state_writes(const uint8_t* data, std::size_t size) {
  static const bool registered = kernels::portable::register_kernels().ok();
  if (!registered) target_failure("state_writes", "registering the portable kernels failed");
  FuzzInput in(data, size);
  const Update update = chosen_update(in);
  // The cache: [layers or heads, positions, width].
  std::vector<int64_t> cache_sizes = {1 + static_cast<int64_t>(in.below(3)), 1 + static_cast<int64_t>(in.below(16)),
                                      1 + static_cast<int64_t>(in.below(6))};
  Guarded state(DType::Float32, cache_sizes, in);
  const int64_t dim = in.chance(16) ? static_cast<int64_t>(in.raw<int8_t>()) : static_cast<int64_t>(in.below(3));
  const int64_t count = static_cast<int64_t>(in.below(5));
  std::vector<int64_t> index_values;
  for (int64_t i = 0; i < count; ++i) index_values.push_back(position(in, cache_sizes[1]));
  std::vector<int64_t> source_sizes = in.chance(200) ? cache_sizes : random_sizes(in, 1 + in.below(3));
  if (dim >= 0 && dim < 3 && source_sizes.size() == 3) source_sizes[static_cast<std::size_t>(dim)] = count;
  Guarded index(DType::Int64, {count}, in);
  if (!index_values.empty())  // an empty vector's data() may be null, which memcpy must not get
    std::memcpy(index.tensor.raw()->data, index_values.data(), index_values.size() * sizeof(int64_t));
  Guarded source(DType::Float32, source_sizes, in);
  et_ops_tensor* self = state.tensor.raw();
  switch (update) {
    case Update::IndexCopy: {  // index_copy.out(self, dim, index, source, *, out)
      std::vector<et_ops_value> args = {tensor_value(self), int_value(dim), tensor_value(index.tensor),
                                        tensor_value(source.tensor), tensor_value(self)};
      call(op_name::index_copy_out, args, {self, index.tensor.raw(), source.tensor.raw(), self}, state);
      break;
    }
    case Update::IndexPut: {  // index_put.out(self, indices, values, accumulate, *, out): positions along dim 1 after a full dim 0
      et_ops_tensor* indices[] = {index.tensor.raw()};
      std::vector<et_ops_value> args = {tensor_value(self), tensor_list_value(indices, 1),
                                        tensor_value(source.tensor), bool_value(in.chance(64)), tensor_value(self)};
      call(op_name::index_put_out, args, {self, index.tensor.raw(), source.tensor.raw(), self}, state);
      break;
    }
    case Update::Copy: {  // copy.out(self, src, non_blocking, *, out)
      std::vector<et_ops_value> args = {tensor_value(self), tensor_value(source.tensor), bool_value(false),
                                        tensor_value(self)};
      call(op_name::copy_out, args, {self, source.tensor.raw(), self}, state);
      break;
    }
    case Update::Add: {  // add.out(self, other, alpha, *, out): an elementwise update in place
      std::vector<et_ops_value> args = {tensor_value(self), tensor_value(source.tensor), int_value(1),
                                        tensor_value(self)};
      call(op_name::add_out, args, {self, source.tensor.raw(), self}, state);
      break;
    }
  }
  return 0;
}

}  // namespace et_ops::fuzz
