// Building a run state (the one place a state allocates), binding its
// symbols and evaluating its dynamic shapes, and running it.
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include "runtime/memory_plan.h"
#include "runtime/program_impl.h"
#include "runtime/run_state_impl.h"
#include "runtime/symbols.h"

namespace et_ops {

RunState::Impl::Impl(const Program::Impl& owner) : program(&owner) {
  // Touch every page now, so the first run does not pay for page faults and
  // tensors start zeroed.
  const std::size_t bytes = owner.planned_bytes > 0 ? owner.planned_bytes : runtime::kTensorAlignment;
  arena.reset(static_cast<uint8_t*>(std::aligned_alloc(runtime::kTensorAlignment, bytes)));
  if (!arena) throw std::bad_alloc();
  std::memset(arena.get(), 0, bytes);
  place_tensors();
  reset_state();
  arguments.link(owner, tensors);
  link_dynamic_shapes();
  link_calls();
  link_inputs_outputs();
}

RunState::Impl::~Impl() { release_instances(); }

namespace {

// Sizes, strides and element count of a dynamic tensor whose sizes were just written.
void refresh_layout(et_ops_tensor& tensor, int64_t* sizes, int64_t* strides) {
  int64_t running = 1;
  for (int32_t i = tensor.dim; i-- > 0;) {
    strides[tensor.dim_order[i]] = running;
    running *= sizes[tensor.dim_order[i]];
  }
  tensor.numel = running;
}

std::string size_bounds_text(const runtime::ValueModel& input, std::size_t d, const std::vector<Symbol>& symbols) {
  const std::vector<SymbolicInt>& symbolic = input.tensor.symbolic_sizes;
  if (symbolic.empty() || symbolic[d].symbol < 0) return fmt::format("it must be {}", input.tensor.spec.sizes[d]);
  const SizeBounds bounds = runtime::bounds_of(symbolic[d], symbols);
  const Symbol& symbol = symbols[static_cast<std::size_t>(symbolic[d].symbol)];
  return fmt::format("it must be {} with {} from {} to {} ({} to {})", symbolic_text(symbolic[d], symbols),
                     symbol.name, symbol.min, symbol.max, bounds.min, bounds.max);
}

// Whether `size` is e's value for a symbol value inside the symbol's bounds.
bool reachable(const SymbolicInt& e, int64_t size, const std::vector<Symbol>& symbols) {
  if (e.symbol < 0) return size == e.add;
  const Symbol& symbol = symbols[static_cast<std::size_t>(e.symbol)];
  const SizeBounds bounds = runtime::bounds_of(e, symbols);
  if (size < bounds.min || size > bounds.max || (size - e.add) % e.mul != 0) return false;
  const int64_t value = (size - e.add) / e.mul;
  return value >= symbol.min && value <= symbol.max;
}

}  // namespace

void RunState::Impl::link_dynamic_shapes() {
  const runtime::ProgramModel& model = program->model;
  std::size_t dims = 0, list_elements = 0;
  for (const auto& dynamic : program->dynamic_tensors) dims += 2 * model.values[dynamic.value].tensor.spec.sizes.size();
  for (uint32_t v : program->dynamic_values) list_elements += model.values[v].list.size();
  dynamic_dims.assign(dims, 0);
  dynamic_lists.assign(list_elements, 0);
  std::size_t offset = 0;
  for (const auto& dynamic : program->dynamic_tensors) {
    et_ops_tensor& tensor = tensors[dynamic.slot];
    tensor.sizes = dynamic_dims.data() + offset;
    tensor.strides = dynamic_dims.data() + offset + tensor.dim;
    offset += 2 * static_cast<std::size_t>(tensor.dim);
  }
  offset = 0;
  for (uint32_t v : program->dynamic_values) {
    if (model.values[v].kind != runtime::ValueKind::IntList) continue;
    arguments.values[v].u.int_list.data = dynamic_lists.data() + offset;
    offset += model.values[v].list.size();
  }
  input_sizes.assign(model.inputs.size(), nullptr);
  for (std::size_t i = 0; i < model.inputs.size(); ++i)
    if (!model.values[model.inputs[i]].tensor.symbolic_sizes.empty())
      input_sizes[i] = const_cast<int64_t*>(tensors[static_cast<std::size_t>(program->slot_of_value[model.inputs[i]])].sizes);
  // Until inputs are resized, every symbol is at its largest: the declared sizes.
  symbol_values.resize(model.symbols.size());
  for (std::size_t s = 0; s < model.symbols.size(); ++s) symbol_values[s] = model.symbols[s].max;
  evaluate_symbolic();
}

Status RunState::Impl::resize_input(std::size_t i, const std::vector<int64_t>& sizes) {
  const runtime::ProgramModel& model = program->model;
  if (i >= inputs.size())
    return Status(StatusCode::Invalid, fmt::format("input {} does not exist: the program has {} inputs", i, inputs.size()));
  const runtime::ValueModel& input = model.values[model.inputs[i]];
  const std::vector<int64_t>& declared = input.tensor.spec.sizes;
  if (sizes.size() != declared.size())
    return Status(StatusCode::Invalid,
                  fmt::format("input {} has {} dimensions, got {}", i, declared.size(), sizes.size()));
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const bool ok = input_sizes[i] == nullptr ? sizes[d] == declared[d]
                                              : reachable(input.tensor.symbolic_sizes[d], sizes[d], model.symbols);
    if (!ok)
      return Status(StatusCode::Invalid, fmt::format("input {} dimension {} is {}: {}", i, d, sizes[d],
                                                     size_bounds_text(input, d, model.symbols)));
  }
  if (input_sizes[i] == nullptr) return Status();
  et_ops_tensor& tensor = *inputs[i];
  std::copy(sizes.begin(), sizes.end(), input_sizes[i]);
  refresh_layout(tensor, input_sizes[i], input_sizes[i] + tensor.dim);
  return Status();
}

// Each symbol takes its value from the first input dimension that carries
// it; every other dimension that carries it must agree.
Status RunState::Impl::bind_symbols() {
  const std::vector<Symbol>& symbols = program->model.symbols;
  std::fill(symbol_values.begin(), symbol_values.end(), -1);
  std::vector<const Program::Impl::SymbolSource*> bound_by(symbols.size(), nullptr);
  for (const Program::Impl::SymbolSource& source : program->symbol_sources) {
    const int64_t size = inputs[source.input]->sizes[source.dim];
    const std::size_t s = static_cast<std::size_t>(source.size.symbol);
    if (bound_by[s] == nullptr) {
      // resize_input checked that the size is reachable inside the bounds.
      symbol_values[s] = (size - source.size.add) / source.size.mul;
      bound_by[s] = &source;
    } else if (runtime::evaluate(source.size, symbol_values.data()) != size) {
      return Status(StatusCode::Invalid,
                    fmt::format("input {} dimension {} is {}, but input {} dimension {} makes {} = {}, so it must be {}",
                                source.input, source.dim, size, bound_by[s]->input, bound_by[s]->dim, symbols[s].name,
                                symbol_values[s], runtime::evaluate(source.size, symbol_values.data())));
    }
  }
  return Status();
}

// Every dynamic tensor's sizes and every symbolic int, from the symbols'
// values, so kernels see concrete shapes.
void RunState::Impl::evaluate_symbolic() {
  const runtime::ProgramModel& model = program->model;
  for (const auto& dynamic : program->dynamic_tensors) {
    et_ops_tensor& tensor = tensors[dynamic.slot];
    auto* sizes = const_cast<int64_t*>(tensor.sizes);
    const std::vector<SymbolicInt>& symbolic = model.values[dynamic.value].tensor.symbolic_sizes;
    for (std::size_t d = 0; d < symbolic.size(); ++d) sizes[d] = runtime::evaluate(symbolic[d], symbol_values.data());
    refresh_layout(tensor, sizes, const_cast<int64_t*>(tensor.strides));
  }
  int64_t* list = dynamic_lists.data();
  for (uint32_t v : program->dynamic_values) {
    const std::vector<SymbolicInt>& symbolic = model.values[v].symbolic;
    if (model.values[v].kind == runtime::ValueKind::Int) {
      arguments.values[v].u.i = runtime::evaluate(symbolic[0], symbol_values.data());
      continue;
    }
    for (const SymbolicInt& e : symbolic) *list++ = runtime::evaluate(e, symbol_values.data());
  }
}

void RunState::Impl::reset_state() {
  for (const Program::Impl::StateTensor& state : program->state_tensors)
    if (state.nbytes > 0) std::memcpy(tensors[state.slot].data, state.initial, state.nbytes);
}

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
  if (!program->symbol_sources.empty()) {
    if (Status bound = bind_symbols(); !bound.ok()) return bound;
    evaluate_symbolic();
  }
  context.reset();
  context.set_run_environment(&environment);
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

Status RunState::resize_input(std::size_t i, const std::vector<int64_t>& sizes) {
  return impl_->resize_input(i, sizes);
}

void RunState::reset() { impl_->reset_state(); }

Status RunState::set_threads(std::size_t count) { return impl_->set_threads(count); }

std::size_t RunState::threads() const { return impl_->environment.thread_count; }

}  // namespace et_ops
