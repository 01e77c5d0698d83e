// Building a run state (the one place a state allocates) and running it.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "runtime/memory_plan.h"
#include "runtime/program_impl.h"
#include "runtime/run_state_impl.h"

namespace et_ops {

RunState::Impl::Impl(const Program::Impl& owner) : program(&owner) {
  // Touch every page now, so the first run does not pay for page faults and
  // tensors start zeroed.
  const std::size_t bytes = owner.planned_bytes > 0 ? owner.planned_bytes : runtime::kTensorAlignment;
  arena.reset(static_cast<uint8_t*>(std::aligned_alloc(runtime::kTensorAlignment, bytes)));
  if (!arena) throw std::bad_alloc();
  std::memset(arena.get(), 0, bytes);
  place_tensors();
  arguments.link(owner, tensors);
  link_calls();
  link_inputs_outputs();
}

RunState::Impl::~Impl() { release_instances(); }

void RunState::Impl::place_tensors() {
  tensors.reserve(program->tensor_slots.size());
  for (const Program::Impl::TensorSlot& slot : program->tensor_slots) {
    tensors.push_back(slot.prototype);
    if (!slot.constant) tensors.back().data = arena.get() + slot.arena_offset;
  }
}

// Prepared kernels with a per-run-state part make it now, from this
// state's arguments; a failure is the state's construction error.
void RunState::Impl::link_calls() {
  calls.reserve(program->instructions.size());
  for (std::size_t i = 0; i < program->instructions.size(); ++i) {
    const Program::Impl::Instruction& instruction = program->instructions[i];
    Call c{instruction.fn, nullptr, nullptr, nullptr, arguments.of(instruction), instruction.arg_count};
    if (const et_ops_prepared_kernel* prepared = instruction.prepared) {
      c.run = prepared->run;
      c.prepared = instruction.prepared_state;
      if (prepared->instantiate != nullptr) {
        context.reset();
        c.instance = prepared->instantiate(context.raw(), c.prepared, c.args, c.arg_count);
        if (!context.ok() || c.instance == nullptr) {
          if (c.instance != nullptr) prepared->release_instance(c.instance);
          const std::string message = fmt::format(
              "{}: instruction {} ({}): the run state cannot be made: {}", program->path, i,
              program->model.instructions[i].op,
              context.ok() ? std::string_view("its instantiate function returned nothing") : context.message());
          release_instances();
          throw std::runtime_error(message);
        }
      }
    }
    calls.push_back(c);
  }
}

void RunState::Impl::release_instances() {
  for (std::size_t i = calls.size(); i-- > 0;)
    if (calls[i].instance != nullptr) program->instructions[i].prepared->release_instance(calls[i].instance);
  calls.clear();
}

Status RunState::Impl::set_threads(std::size_t count) {
  if (count == 0 || count > 1024)
    return Status(StatusCode::Invalid, fmt::format("thread count {} is out of range (1 to 1024)", count));
  if (count == environment.thread_count) return Status();
  std::unique_ptr<pthreadpool, PoolDeleter> next;
  if (count > 1) {
    next.reset(pthreadpool_create(count));
    if (!next) return Status(StatusCode::NoMemory, fmt::format("cannot start a pool of {} threads", count));
  }
  pool = std::move(next);
  environment.thread_count = static_cast<uint32_t>(count);
  environment.threadpool = pool.get();
  return Status();
}

void RunState::Impl::link_inputs_outputs() {
  const auto& model = program->model;
  for (uint32_t v : model.inputs) inputs.push_back(&tensors[static_cast<std::size_t>(program->slot_of_value[v])]);
  for (std::size_t i = 0; i < model.outputs.size(); ++i) {
    const int32_t slot = program->slot_of_value[model.outputs[i]];
    outputs.push_back(slot >= 0 ? &tensors[static_cast<std::size_t>(slot)] : &program->non_tensor_outputs[i].tensor);
  }
}

RunResult RunState::Impl::execute(std::vector<InstructionTiming>* timings) {
  context.reset();
  et_ops_kernel_context* raw = context.raw();
  if (timings == nullptr) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
      call(calls[i], raw);
      if (raw->failed) return failure(i);
    }
    return RunResult{};
  }
  using Clock = std::chrono::steady_clock;
  timings->clear();
  timings->reserve(calls.size());
  const Clock::time_point start = Clock::now();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const Clock::time_point before = Clock::now();
    call(calls[i], raw);
    const Clock::time_point after = Clock::now();
    timings->push_back(InstructionTiming{i, std::chrono::duration<double, std::micro>(before - start).count(),
                                         std::chrono::duration<double, std::micro>(after - before).count()});
    if (raw->failed) return failure(i);
  }
  return RunResult{};
}

RunResult RunState::Impl::failure(std::size_t instruction) {
  et_ops_kernel_context* raw = context.raw();
  raw->message[ET_OPS_MESSAGE_CAPACITY - 1] = '\0';  // a kernel may have filled it without a terminator
  const char* message = raw->message[0] != '\0' ? raw->message : "(the kernel gave no message)";
  return Status(StatusCode::KernelFailed, fmt::format("instruction {} ({}): {}", instruction,
                                                      program->model.instructions[instruction].op, message));
}

RunState::RunState(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RunState::~RunState() = default;
RunState::RunState(RunState&&) noexcept = default;
RunState& RunState::operator=(RunState&&) noexcept = default;

TensorRef RunState::input(std::size_t i) { return TensorRef(*impl_->inputs.at(i)); }

Status RunState::set_input(std::size_t i, const void* data, std::size_t nbytes) {
  if (i >= impl_->inputs.size())
    return Status(StatusCode::Invalid,
                  fmt::format("input {} does not exist: the program has {} inputs", i, impl_->inputs.size()));
  TensorRef input(*impl_->inputs[i]);
  if (nbytes != input.nbytes())
    return Status(StatusCode::Invalid, fmt::format("input {} takes {} bytes, got {}", i, input.nbytes(), nbytes));
  if (nbytes > 0) std::memcpy(input.data(), data, nbytes);
  return Status();
}

TensorRef RunState::output(std::size_t i) const { return TensorRef(*impl_->outputs.at(i)); }

Status RunState::set_threads(std::size_t count) { return impl_->set_threads(count); }

std::size_t RunState::threads() const { return impl_->environment.thread_count; }

}  // namespace et_ops
