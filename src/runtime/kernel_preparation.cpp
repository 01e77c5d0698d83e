// Linking instruction arguments to a set of tensors, and the load-time
// step of prepared kernels.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <utility>

#include "et_ops/kernel_context.h"
#include "registry/fault_injection.h"
#include "runtime/load_errors.h"
#include "runtime/program_impl.h"

namespace et_ops::runtime {

void LinkedArguments::link(const Program::Impl& program, std::vector<et_ops_tensor>& tensors) {
  auto tensor_of = [&](uint32_t v) { return &tensors[static_cast<std::size_t>(program.slot_of_value[v])]; };
  values = program.value_templates;
  const auto& model = program.model;
  std::size_t element_count = 0;
  for (const auto& value : model.values) element_count += value.elements.size();
  list_elements.clear();
  list_elements.reserve(element_count);  // never reallocated: lists point into it
  for (std::size_t v = 0; v < values.size(); ++v) {
    if (program.slot_of_value[v] >= 0) values[v].u.tensor = tensor_of(static_cast<uint32_t>(v));
    if (model.values[v].kind != ValueKind::TensorList && model.values[v].kind != ValueKind::OptionalTensorList)
      continue;
    values[v].u.tensor_list.data = list_elements.data() + list_elements.size();
    for (uint32_t element : model.values[v].elements)
      list_elements.push_back(element == kNoTensor ? nullptr : tensor_of(element));
  }
  arg_pointers.clear();
  arg_pointers.reserve(program.arg_values.size());
  for (uint32_t v : program.arg_values) arg_pointers.push_back(&values[v]);
}

namespace {

// Calls f(v) for each tensor value instruction i reads or writes: its
// tensor arguments and the elements of its tensor lists.
template <typename F>
void for_each_tensor_of(const Program::Impl& program, std::size_t i, const F& f) {
  const Program::Impl::Instruction& instruction = program.instructions[i];
  for (std::size_t a = 0; a < instruction.arg_count; ++a) {
    const uint32_t v = program.arg_values[instruction.first_arg + a];
    const ValueModel& value = program.model.values[v];
    if (value.kind == ValueKind::TensorList || value.kind == ValueKind::OptionalTensorList) {
      for (uint32_t element : value.elements)
        if (element != kNoTensor) f(element);
    } else if (program.slot_of_value[v] >= 0) {
      f(v);
    }
  }
}

// The mapped bytes of constant value v, or an empty range for any other value.
std::pair<const uint8_t*, std::size_t> constant_bytes(const Program::Impl& program, uint32_t v) {
  const int32_t slot = program.slot_of_value[v];
  if (slot < 0 || !program.tensor_slots[static_cast<std::size_t>(slot)].constant) return {nullptr, 0};
  return {static_cast<const uint8_t*>(program.tensor_slots[static_cast<std::size_t>(slot)].prototype.data),
          program.model.values[v].tensor.spec.nbytes()};
}

// A prepared kernel keeps what it needs of its constants in its own
// layout, so the program's pages of a constant that only prepared kernels
// read leave the resident set once the last of them is prepared: a loaded
// program is not resident twice. Constants anything else reads (a plain
// kernel, an output of the program) keep theirs, and so do pages they
// share. Dropping a page never changes a byte: a prepared kernel that
// still reads the constant faults it back in from the file.
class ConstantRelease {
 public:
  explicit ConstantRelease(const Program::Impl& program) : program_(program) {
    const std::size_t values = program.model.values.size();
    last_prepare_.assign(values, kKept);
    std::vector<bool> read_elsewhere(values, false);
    for (uint32_t v : program.model.outputs) read_elsewhere[v] = true;
    for (std::size_t i = 0; i < program.instructions.size(); ++i) {
      const bool prepared = program.instructions[i].prepared != nullptr;
      for_each_tensor_of(program, i, [&](uint32_t v) {
        if (prepared) last_prepare_[v] = i;
        else read_elsewhere[v] = true;
      });
    }
    for (uint32_t v = 0; v < values; ++v) {
      if (constant_bytes(program, v).first == nullptr) last_prepare_[v] = kKept;
      if (read_elsewhere[v] || last_prepare_[v] == kKept) {
        last_prepare_[v] = kKept;
        if (const auto [data, size] = constant_bytes(program, v); data != nullptr && size > 0)
          kept_.emplace_back(data, data + size);
      }
    }
  }

  // After instruction i's prepare: releases the constants it was the last
  // to need, but for the pages they share with kept constants.
  void after_prepare(std::size_t i) const {
    for_each_tensor_of(program_, i, [&](uint32_t v) {
      if (last_prepare_[v] != i) return;
      const auto [data, size] = constant_bytes(program_, v);
      release_outside_kept(data, data + size);
    });
  }

 private:
  static constexpr std::size_t kKept = static_cast<std::size_t>(-1);

  // Releases the pages of [begin, end) that hold no kept byte.
  void release_outside_kept(const uint8_t* begin, const uint8_t* end) const {
    const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto page_start = [&](const uint8_t* p) { return reinterpret_cast<uintptr_t>(p) / page * page; };
    std::vector<std::pair<uintptr_t, uintptr_t>> held;  // kept pages within the range
    for (const auto& [k_begin, k_end] : kept_)
      if (k_begin < end && begin < k_end) held.emplace_back(page_start(k_begin), page_start(k_end - 1) + page);
    std::sort(held.begin(), held.end());
    const uint8_t* from = begin;
    for (const auto& [h_begin, h_end] : held) {
      const auto* gap_end = reinterpret_cast<const uint8_t*>(h_begin);
      if (from < gap_end) program_.file.release_pages(from, static_cast<std::size_t>(gap_end - from));
      from = std::max(from, reinterpret_cast<const uint8_t*>(h_end));
    }
    if (from < end) program_.file.release_pages(from, static_cast<std::size_t>(end - from));
  }

  const Program::Impl& program_;
  std::vector<std::size_t> last_prepare_;  // per value: the last prepared instruction reading it, or kKept
  std::vector<std::pair<const uint8_t*, const uint8_t*>> kept_;
};

}  // namespace

void prepare_kernels(Program::Impl& program) {
  std::size_t prepared_count = 0;
  for (const Program::Impl::Instruction& instruction : program.instructions)
    prepared_count += instruction.prepared != nullptr;
  if (prepared_count == 0) return;
  program.prepared_states.reserve(prepared_count);
  // What prepare sees: constants with their data, other tensors with data null.
  std::vector<et_ops_tensor> tensors;
  tensors.reserve(program.tensor_slots.size());
  for (const Program::Impl::TensorSlot& slot : program.tensor_slots) tensors.push_back(slot.prototype);
  LinkedArguments arguments;
  arguments.link(program, tensors);
  KernelContext context;
  const ConstantRelease release(program);
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    Program::Impl::Instruction& instruction = program.instructions[i];
    if (instruction.prepared == nullptr) continue;
    context.reset();
    void* state = instruction.prepared->prepare(context.raw(), arguments.of(instruction), instruction.arg_count);
    if (!context.ok() || state == nullptr) {
      if (state != nullptr) instruction.prepared->release_prepared(state);
      const std::string_view message = context.ok() ? "its prepare function returned no state" : context.message();
      throw FormatError(fmt::format("{}: instruction {} ({}) cannot be prepared: {}", program.path, i,
                                    program.model.instructions[i].op, message));
    }
    program.prepared_states.add(instruction.prepared->release_prepared, state);
    instruction.prepared_state = state;
    detail::maybe_fail_load_allocation();  // after the add: a failed load must release it
    release.after_prepare(i);
  }
}

}  // namespace et_ops::runtime
