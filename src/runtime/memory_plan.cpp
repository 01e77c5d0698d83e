// Lifetime-based memory planning. A tensor lives from the first instruction
// that names it (directly, or as an element of a tensor_list) to the last; inputs, outputs and tensors no instruction
// names live through the whole run (inputs must survive repeated runs, and
// outputs are read after it); state tensors live for the run state's whole
// life. A tensor with symbolic sizes is planned at its largest. Walking the instructions in order, tensors are
// placed best-fit into freed blocks when they start and released after their
// last use; two tensors named by the same instruction never share bytes, but
// for a view_copy whose contiguous input ends there: its output takes the
// input's bytes (views_in_place), and copying them onto themselves is free.
#include "runtime/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "et_ops/kernels/portable_operators.h"  // op_name::view_copy_out: aten's name, whoever provides it
#include "runtime/load_errors.h"

namespace et_ops::runtime {
namespace {

// Hands out offsets in a growing arena, reusing released blocks best-fit and
// merging neighbours on release.
class OffsetAllocator {
 public:
  uint64_t allocate(uint64_t bytes) {
    if (bytes == 0) return 0;
    auto fit = free_by_size_.lower_bound({bytes, 0});
    if (fit != free_by_size_.end()) return take(fit->second, fit->first, bytes);
    return grow(bytes);
  }

  void release(uint64_t offset, uint64_t bytes) {
    if (bytes == 0) return;
    auto next = free_by_offset_.lower_bound(offset);
    if (next != free_by_offset_.end() && offset + bytes == next->first) {
      bytes += next->second;
      erase_block(next->first, next->second);
    }
    auto previous = free_by_offset_.lower_bound(offset);
    if (previous != free_by_offset_.begin()) {
      --previous;
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        bytes += previous->second;
        erase_block(previous->first, previous->second);
      }
    }
    insert_block(offset, bytes);
  }

  uint64_t end() const { return end_; }

 private:
  uint64_t take(uint64_t offset, uint64_t size, uint64_t bytes) {
    erase_block(offset, size);
    if (size > bytes) insert_block(offset + bytes, size - bytes);
    return offset;
  }

  // No free block is large enough: extend the arena, absorbing a free block
  // that ends where the arena ends.
  uint64_t grow(uint64_t bytes) {
    uint64_t offset = end_;
    if (!free_by_offset_.empty()) {
      auto last = std::prev(free_by_offset_.end());
      if (last->first + last->second == end_) {
        offset = last->first;
        erase_block(last->first, last->second);
      }
    }
    if (bytes > UINT64_MAX - offset) throw FormatError("the memory plan overflows 64 bits");
    end_ = offset + bytes;
    return offset;
  }

  void insert_block(uint64_t offset, uint64_t size) {
    free_by_offset_.emplace(offset, size);
    free_by_size_.emplace(size, offset);
  }
  void erase_block(uint64_t offset, uint64_t size) {
    free_by_offset_.erase(offset);
    free_by_size_.erase({size, offset});
  }

  std::map<uint64_t, uint64_t> free_by_offset_;
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;  // (size, offset)
  uint64_t end_ = 0;
};

struct Lifetime {
  uint32_t value = 0;
  uint64_t bytes = 0;
  std::size_t first = 0;  // first instruction that needs it
  std::size_t last = 0;   // last instruction that needs it; `never` keeps it for the whole run
};

constexpr std::size_t kNever = SIZE_MAX;

uint64_t aligned_bytes(const TensorSpec& spec, uint64_t max_bytes, uint32_t value) {
  const uint64_t bytes = spec.nbytes();
  if (bytes > max_bytes)
    throw FormatError(fmt::format("values[{}] needs {} bytes, more than the memory limit of {} bytes", value, bytes,
                                  max_bytes));
  return (bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
}

std::vector<Lifetime> lifetimes(const ProgramModel& model, uint64_t max_bytes) {
  std::vector<Lifetime> all(model.values.size());
  std::vector<bool> seen(model.values.size(), false);
  const auto use = [&](uint32_t v, std::size_t i) {
    if (!seen[v]) all[v].first = i;
    all[v].last = i;
    seen[v] = true;
  };
  for (std::size_t i = 0; i < model.instructions.size(); ++i)
    for (uint32_t v : model.instructions[i].args) {
      use(v, i);
      for (uint32_t element : model.values[v].elements)
        if (element != kNoTensor) use(element, i);
    }
  for (uint32_t v : model.inputs) all[v].first = 0;
  for (uint32_t v : model.inputs) all[v].last = kNever;
  for (uint32_t v : model.outputs) all[v].last = kNever;
  std::vector<Lifetime> tensors;
  for (uint32_t v = 0; v < model.values.size(); ++v) {
    const ValueModel& value = model.values[v];
    if (value.kind != ValueKind::Tensor || value.tensor.constant) continue;
    // State keeps its bytes from run to run: it never shares them.
    Lifetime lifetime = seen[v] && !value.tensor.state ? all[v] : Lifetime{v, 0, 0, kNever};
    lifetime.value = v;
    lifetime.bytes = aligned_bytes(value.tensor.spec, max_bytes, v);
    tensors.push_back(lifetime);
  }
  return tensors;
}

bool contiguous(const TensorSpec& spec) {
  for (std::size_t d = 0; d < spec.dim_order.size(); ++d)
    if (spec.dim_order[d] != d) return false;
  return true;
}

// out -> self of every view_copy whose out can take self's bytes: self
// (not an input, output or state) is made before and last needed there, out first needed
// there, both contiguous (so the same bytes in the same order) and of the
// same planned size. The kernel's copy onto itself is then no copy at all.
std::map<uint32_t, uint32_t> views_in_place(const ProgramModel& model, const std::vector<Lifetime>& tensors) {
  std::map<uint32_t, const Lifetime*> by_value;
  for (const Lifetime& t : tensors) by_value[t.value] = &t;
  std::map<uint32_t, uint32_t> in_place;
  for (std::size_t i = 0; i < model.instructions.size(); ++i) {
    const InstructionModel& instruction = model.instructions[i];
    if (instruction.op != kernels::portable::op_name::view_copy_out || instruction.args.size() != 3) continue;
    const auto self = by_value.find(instruction.args[0]);
    const auto out = by_value.find(instruction.args[2]);
    if (self == by_value.end() || out == by_value.end() || self->first == out->first) continue;
    const Lifetime& s = *self->second;
    const Lifetime& o = *out->second;
    const TensorSpec& s_spec = model.values[s.value].tensor.spec;
    const TensorSpec& o_spec = model.values[o.value].tensor.spec;
    if (s.first < i && s.last == i && o.first == i && s.bytes == o.bytes && s_spec.dtype == o_spec.dtype && contiguous(s_spec) &&
        contiguous(o_spec))
      in_place[o.value] = s.value;
  }
  return in_place;
}

// Starts in instruction order; the larger first among tensors that start
// together, which keeps fragmentation down.
void order_by_start(std::vector<Lifetime>& tensors) {
  std::sort(tensors.begin(), tensors.end(), [](const Lifetime& a, const Lifetime& b) {
    if (a.first != b.first) return a.first < b.first;
    if (a.bytes != b.bytes) return a.bytes > b.bytes;
    return a.value < b.value;
  });
}

}  // namespace

MemoryPlan plan_memory(const ProgramModel& model, uint64_t max_bytes) {
  std::vector<Lifetime> tensors = lifetimes(model, max_bytes);
  const std::map<uint32_t, uint32_t> in_place = views_in_place(model, tensors);
  std::set<uint32_t> handed_over;  // views' inputs whose bytes their view now owns
  order_by_start(tensors);
  std::multimap<std::size_t, const Lifetime*> ending;  // last instruction -> tensor
  MemoryPlan plan;
  plan.offsets.assign(model.values.size(), 0);
  OffsetAllocator arena;
  std::size_t next = 0;
  uint64_t live = 0;
  for (std::size_t i = 0; i < model.instructions.size() || next < tensors.size(); ++i) {
    for (; next < tensors.size() && tensors[next].first <= i; ++next) {
      const Lifetime& t = tensors[next];
      if (const auto view = in_place.find(t.value); view != in_place.end()) {
        plan.offsets[t.value] = plan.offsets[view->second];
        handed_over.insert(view->second);
      } else {
        plan.offsets[t.value] = arena.allocate(t.bytes);
        live += t.bytes;
      }
      if (t.last != kNever) ending.emplace(t.last, &t);
    }
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, live);
    for (auto [begin, end] = ending.equal_range(i); begin != end; ++begin) {
      if (handed_over.count(begin->second->value) != 0) continue;
      arena.release(plan.offsets[begin->second->value], begin->second->bytes);
      live -= begin->second->bytes;
    }
  }
  plan.total_bytes = arena.end();
  if (plan.total_bytes > max_bytes)
    throw FormatError(fmt::format("the program needs {} bytes of activation memory, more than the limit of {} bytes",
                                  plan.total_bytes, max_bytes));
  return plan;
}

}  // namespace et_ops::runtime
