// _et_ops: the native half of the et_ops Python package (python/et_ops).
//
// It links libet_ops.so and the project's kernel libraries dynamically, never
// a private copy of any kernel, so a process that also links the libraries
// from C++ holds one copy of each. Importing it registers the project's
// kernel sets. Errors that a user can cause (a bad program file, a failing
// run, a library that will not load) come back as structured results, and
// the pure-Python layer turns them into its exception classes; this layer
// raises only when it is called with arguments of the wrong kind.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/diagnostics.h"
#include "et_ops/dtype.h"
#include "et_ops/generate.h"
#include "et_ops/library_loader.h"
#include "et_ops/profile.h"
#include "et_ops/program.h"
#include "et_ops/registry.h"
#include "et_ops/tensor.h"
#include "built_kernel_sets.h"

namespace py = pybind11;

namespace et_ops::python {
namespace {

// The NumPy dtype of a tensor's elements (et_ops/dtypes.def; bfloat16: its raw bits, uint16).
py::dtype numpy_dtype(DType dtype) { return py::dtype(std::string(dtype_npy_descr(dtype))); }

// Kind and size identify the element type whatever NumPy's type number
// (int64 is both NPY_LONG and NPY_LONGLONG on Linux).
bool same_element_type(const py::dtype& a, const py::dtype& b) {
  return a.kind() == b.kind() && a.itemsize() == b.itemsize() && a.byteorder() != '>';
}

py::dict spec_dict(const TensorSpec& spec) {
  py::dict d;
  d["dtype"] = std::string(dtype_name(spec.dtype));
  d["shape"] = py::tuple(py::cast(spec.sizes));
  d["dim_order"] = py::tuple(py::cast(std::vector<int>(spec.dim_order.begin(), spec.dim_order.end())));
  return d;
}

// Copies a tensor's elements to or from a C-order buffer, for tensors whose
// dim order is not row-major (a contiguous tensor takes one memcpy).
enum class Direction { IntoTensor, FromTensor };

void copy_logical(TensorRef tensor, std::byte* buffer, Direction direction) {
  const std::size_t item = dtype_size(tensor.dtype());
  auto* base = static_cast<std::byte*>(tensor.data());
  if (tensor.numel() == 0) return;  // an empty tensor may have no memory at all
  if (tensor.is_contiguous()) {
    if (direction == Direction::IntoTensor) std::memcpy(base, buffer, tensor.nbytes());
    else std::memcpy(buffer, base, tensor.nbytes());
    return;
  }
  std::vector<int64_t> index(static_cast<std::size_t>(tensor.dim()), 0);
  for (int64_t n = 0; n < tensor.numel(); ++n) {
    int64_t offset = 0;
    for (int64_t d = 0; d < tensor.dim(); ++d) offset += index[d] * tensor.stride(d);
    std::byte* element = base + offset * static_cast<int64_t>(item);
    std::byte* logical = buffer + n * static_cast<int64_t>(item);
    if (direction == Direction::IntoTensor) std::memcpy(element, logical, item);
    else std::memcpy(logical, element, item);
    for (int64_t d = tensor.dim() - 1; d >= 0; --d) {
      if (++index[d] < tensor.size(d)) break;
      index[d] = 0;
    }
  }
}

// Run states are reused across runs (a run must not allocate), and each
// concurrent run needs its own: a run takes a free state, or makes one when
// every state is busy, and gives it back afterwards.
class RunStatePool {
 public:
  explicit RunStatePool(std::shared_ptr<const Program> program) : program_(std::move(program)) {}

  class Lease {
   public:
    explicit Lease(RunStatePool& pool) : pool_(pool), state_(pool.take()) {}
    ~Lease() {
      if (state_) pool_.give_back(*std::move(state_));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    // Why there is no state (a new one could not be made), or ok.
    Status status() const { return state_ ? Status() : state_.status(); }
    RunState& operator*() { return **state_; }
    RunState* operator->() { return state_->get(); }

   private:
    RunStatePool& pool_;
    Result<std::unique_ptr<RunState>> state_;
  };

 private:
  Result<std::unique_ptr<RunState>> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        auto state = std::move(free_.back());
        free_.pop_back();
        return Result<std::unique_ptr<RunState>>(std::move(state));
      }
    }
    Result<RunState> made = program_->make_state();
    if (!made) return made.status();
    return std::make_unique<RunState>(*std::move(made));
  }
  void give_back(std::unique_ptr<RunState> state) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(state));
  }

  std::shared_ptr<const Program> program_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<RunState>> free_;
};

py::list profile_records(const Program& program, const std::vector<InstructionTiming>& timings) {
  Profiler profiler(program);
  profiler.add_run(timings, 0.0);
  py::list records;
  for (const ProfileRecord& r : profiler.records()) {
    py::list shapes, dtypes;
    for (const TensorSpec& t : r.tensors) {
      shapes.append(py::tuple(py::cast(t.sizes)));
      dtypes.append(std::string(dtype_name(t.dtype)));
    }
    py::dict record;
    record["instruction"] = r.instruction;
    record["op"] = r.op;
    record["kernel_set"] = r.component;
    record["shapes"] = shapes;
    record["dtypes"] = dtypes;
    record["start_us"] = r.start_us;
    record["duration_us"] = r.duration_us;
    records.append(record);
  }
  return records;
}

// An output copied out of a run state, in logical order, with its shape.
struct HostOutput {
  std::vector<std::byte> bytes;
  std::vector<int64_t> shape;
};

class NativeProgram {
 public:
  explicit NativeProgram(std::shared_ptr<const Program> program) : program_(program), pool_(std::move(program)) {}

  const Program& program() const { return *program_; }

  py::list input_specs() const {
    py::list specs;
    for (std::size_t i = 0; i < program_->input_count(); ++i) specs.append(spec_dict(program_->input_spec(i)));
    return specs;
  }

  py::list output_specs() const {
    py::list specs;
    for (std::size_t i = 0; i < program_->output_count(); ++i) specs.append(spec_dict(program_->output_spec(i)));
    return specs;
  }

  // (outputs, "", records) on success, (None, message, None) when a kernel
  // reports an error, a dynamic input's shape is outside its bounds or a run
  // state cannot be made. Inputs must already match the input specs (dtype,
  // rank, C order; the Python layer says what is wrong in user terms); a
  // mismatch here is a ValueError. With `profile`, records lists one
  // record per instruction (et_ops::ProfileRecord as a dict); else it is None.
  py::tuple run(const py::list& inputs, std::size_t threads, bool profile) {
    if (threads == 0) throw py::value_error("threads must be at least 1, got 0");
    const std::vector<py::array> arrays = checked_inputs(inputs);
    std::vector<InstructionTiming> timings;
    Status threaded;
    RunResult result;
    std::vector<HostOutput> outputs;
    {
      py::gil_scoped_release release;
      RunStatePool::Lease state(pool_);
      if (result = state.status(); result.ok() && (threaded = state->set_threads(threads)).ok())
        result = run_on_state(*state, arrays, profile ? &timings : nullptr, outputs);
    }
    if (!threaded) throw py::value_error("threads: " + threaded.message());
    return outcome(result, outputs, profile ? &timings : nullptr);
  }

  // One run on `state` (the GIL released by the caller): inputs copied in
  // (dynamic inputs resized to the arrays' shapes), outputs copied out in
  // logical order into `outputs` with their shapes.
  RunResult run_on_state(RunState& state, const std::vector<py::array>& arrays, std::vector<InstructionTiming>* timings,
                         std::vector<HostOutput>& outputs) const {
    for (std::size_t i = 0; i < arrays.size(); ++i) {
      const std::vector<int64_t> shape(arrays[i].shape(), arrays[i].shape() + arrays[i].ndim());
      if (Status resized = state.resize_input(i, shape); !resized) return resized;
      copy_logical(state.input(i), static_cast<std::byte*>(const_cast<void*>(arrays[i].data())), Direction::IntoTensor);
    }
    RunResult result = timings != nullptr ? program_->run(state, *timings) : program_->run(state);
    if (!result) return result;
    outputs.resize(program_->output_count());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const TensorRef out = state.output(i);
      outputs[i].bytes.resize(out.nbytes());
      outputs[i].shape.assign(out.sizes(), out.sizes() + out.dim());
      copy_logical(out, outputs[i].bytes.data(), Direction::FromTensor);
    }
    return result;
  }

  // (arrays, "", records or None), or (None, error, None).
  py::tuple outcome(const RunResult& result, const std::vector<HostOutput>& outputs,
                    const std::vector<InstructionTiming>* timings) const {
    if (!result) return py::make_tuple(py::none(), result.message(), py::none());
    py::list arrays;
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      const TensorSpec& spec = program_->output_spec(i);
      py::array out(numpy_dtype(spec.dtype), std::vector<py::ssize_t>(outputs[i].shape.begin(), outputs[i].shape.end()));
      if (!outputs[i].bytes.empty()) std::memcpy(out.mutable_data(), outputs[i].bytes.data(), outputs[i].bytes.size());
      arrays.append(out);
    }
    return py::make_tuple(arrays, std::string(),
                          timings ? py::object(profile_records(*program_, *timings)) : py::object(py::none()));
  }

  std::shared_ptr<const Program> shared() const { return program_; }

  py::list input_bounds() const {
    py::list all;
    for (std::size_t i = 0; i < program_->input_count(); ++i) {
      py::list bounds;
      for (const SizeBounds& b : program_->input_bounds(i)) bounds.append(py::make_tuple(b.min, b.max));
      all.append(bounds);
    }
    return all;
  }

  std::vector<py::array> checked_inputs(const py::list& inputs) const {
    if (inputs.size() != program_->input_count())
      throw py::value_error("expected " + std::to_string(program_->input_count()) + " inputs, got " +
                            std::to_string(inputs.size()));
    std::vector<py::array> arrays;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (!py::isinstance<py::array>(inputs[i])) throw py::type_error("input " + std::to_string(i) + " is not an ndarray");
      auto a = py::reinterpret_borrow<py::array>(inputs[i]);
      const TensorSpec& spec = program_->input_spec(i);
      bool rank_ok = static_cast<std::size_t>(a.ndim()) == spec.sizes.size();
      const std::vector<SizeBounds> bounds = program_->input_bounds(i);
      for (std::size_t d = 0; rank_ok && d < bounds.size(); ++d)
        rank_ok = a.shape(static_cast<py::ssize_t>(d)) >= bounds[d].min && a.shape(static_cast<py::ssize_t>(d)) <= bounds[d].max;
      const bool contiguous = (a.flags() & py::array::c_style) != 0;
      if (!same_element_type(a.dtype(), numpy_dtype(spec.dtype)) || !rank_ok || !contiguous)
        throw py::value_error("input " + std::to_string(i) + " does not match the program's input spec " +
                              "(dtype, shape within its bounds, C order)");
      arrays.push_back(a);
    }
    return arrays;
  }

 private:
  std::shared_ptr<const Program> program_;
  RunStatePool pool_;
};

// A run state of its own: state kept from run to run, reset() restores it.
// Not for concurrent use (the Python layer holds one per session). When the
// state cannot be made, error() says why and run() returns it.
class NativeSession {
 public:
  NativeSession(const NativeProgram& program, std::size_t threads) : program_(program), state_(program.program().make_state()) {
    if (!state_) return;
    if (const Status threaded = state_->set_threads(threads); !threaded) throw py::value_error("threads: " + threaded.message());
  }

  std::string error() const { return state_ ? std::string() : state_.status().message(); }

  py::tuple run(const py::list& inputs) {
    const std::vector<py::array> arrays = program_.checked_inputs(inputs);
    std::vector<HostOutput> outputs;
    RunResult result = state_ ? Status() : state_.status();
    if (result) {
      py::gil_scoped_release release;
      result = program_.run_on_state(*state_, arrays, nullptr, outputs);
    }
    return program_.outcome(result, outputs, nullptr);
  }

  void reset() {
    if (state_) state_->reset();
  }

 private:
  const NativeProgram& program_;  // kept alive by the Python session's reference to its Program
  Result<RunState> state_;
};

// {"ok", "code" (status_code_name), "error", "tokens", timings...}.
py::dict generate_tokens(const NativeProgram& program, const std::vector<int64_t>& prompt, std::size_t max_new_tokens,
                         double temperature, std::size_t top_k, uint64_t seed, std::size_t threads,
                         const std::vector<int64_t>& stop_tokens) {
  GenerateOptions options;
  options.max_new_tokens = max_new_tokens;
  options.temperature = temperature;
  options.top_k = top_k;
  options.seed = seed;
  options.stop_tokens = stop_tokens;
  std::optional<Result<Generation>> result;
  {
    py::gil_scoped_release release;
    Result<RunState> state = program.program().make_state();
    if (!state) result.emplace(state.status());
    else if (Status threaded = state->set_threads(threads); !threaded) result.emplace(threaded.prefixed("threads"));
    else result.emplace(generate(program.program(), *state, prompt, options));
  }
  const Generation none;
  const Generation& generation = *result ? **result : none;
  py::dict d;
  d["ok"] = result->ok();
  d["code"] = std::string(status_code_name(result->status().code()));
  d["error"] = result->status().message();
  d["tokens"] = generation.tokens;
  d["prefill_tokens"] = generation.timings.prefill_tokens;
  d["prefill_seconds"] = generation.timings.prefill_seconds;
  d["decode_tokens"] = generation.timings.decode_tokens;
  d["decode_seconds"] = generation.timings.decode_seconds;
  return d;
}

py::list missing_operators(const Status& status) {
  py::list missing;
  for (const MissingOperator& m : status.missing_operators()) {
    py::dict entry;
    entry["op"] = m.op;
    entry["component"] = m.component ? py::cast(m.component->name) : py::none();
    entry["pkg_config"] = m.component ? py::cast(m.component->pkg_config) : py::none();
    missing.append(entry);
  }
  return missing;
}

py::dict load(const std::string& path) {
  std::optional<LoadResult> result;
  {
    py::gil_scoped_release release;
    result = Program::load(path);
  }
  py::dict outcome;
  outcome["program"] = *result ? py::cast(std::make_unique<NativeProgram>(**result)) : py::none();
  outcome["kind"] = std::string(*result ? "none" : status_code_name(result->status().code()));
  outcome["error"] = result->status().message();
  outcome["missing"] = missing_operators(result->status());
  return outcome;
}

py::list registered_operators() {
  py::list records;
  for (const RecordInfo& r : registered_records()) {
    py::dict d;
    d["op"] = r.op;
    d["key"] = r.key;
    d["component"] = r.origin.component;
    d["version"] = r.origin.version;
    d["library"] = r.origin.library_path;
    d["fingerprint"] = r.fingerprint;
    d["schema"] = r.schema;
    d["active"] = r.active;
    records.append(d);
  }
  return records;
}

py::dict counters_dict() {
  const Counters c = counters();
  py::dict d;
  d["registered"] = c.registered;
  d["deduplicated"] = c.deduplicated;
  d["conflicts"] = c.conflicts;
  d["unregistered"] = c.unregistered;
  return d;
}

void set_policy(const std::string& name) {
  const Result<DuplicatePolicy> policy = parse_duplicate_policy(name);
  if (!policy) throw py::value_error("invalid duplicate policy '" + name + "': valid values are 'fatal' and 'first-wins'");
  set_duplicate_policy(*policy);
}

py::dict policy_dict() {
  const Result<PolicyChoice> choice = effective_duplicate_policy();
  py::dict d;
  // An invalid ET_OPS_DUPLICATE_POLICY: its source, and the error.
  d["policy"] = std::string(duplicate_policy_name(choice ? choice->policy : DuplicatePolicy::Fatal));
  d["source"] = choice ? choice->source : std::string(kDuplicatePolicyVariable);
  d["error"] = choice.status().message();
  return d;
}

py::dict registration_dict(const RegistrationResult& r) {
  const Registration counts = r ? *r : Registration{};
  py::dict d;
  d["status"] = std::string(status_code_name(r.status().code()));
  d["message"] = r.status().message();
  d["registered"] = counts.registered;
  d["deduplicated"] = counts.deduplicated;
  d["unchanged"] = counts.unchanged;
  return d;
}

// et_ops.LibraryError's reason: 'open', 'entry_point', or the registry's
// status ('conflict', 'invalid', 'policy', 'no_memory').
std::string library_error_reason(StatusCode code) {
  return code == StatusCode::LibraryOpen ? "open" : std::string(status_code_name(code));
}

// Libraries loaded by path stay registered and loaded until
// unregister_library() names them (or the process ends).
std::vector<LoadedKernelLibrary>& loaded_libraries() {
  static std::vector<LoadedKernelLibrary> libraries;
  return libraries;
}

// What `et-ops --load-library` does: et_ops::load_kernel_library.
py::dict load_library(const std::string& path) {
  Result<LoadedKernelLibrary> library = load_kernel_library(path);
  if (!library) {
    py::dict outcome = registration_dict(library.status());
    outcome["status"] = library_error_reason(library.status().code());
    return outcome;
  }
  py::dict outcome = registration_dict(library->registration());
  outcome["library"] = library->library_path();
  outcome["component"] = library->manifest()->component ? library->manifest()->component : "";
  loaded_libraries().push_back(*std::move(library));
  return outcome;
}

// Removes the records of the shared object at `path`, and closes it when
// load_library opened it.
std::size_t unregister(const std::string& path) {
  const std::size_t removed = et_ops::unregister_library(path);
  const std::string canonical = canonical_library_path(path);
  auto& libraries = loaded_libraries();
  libraries.erase(std::remove_if(libraries.begin(), libraries.end(),
                                 [&](const LoadedKernelLibrary& l) { return l.library_path() == canonical; }),
                  libraries.end());
  return removed;
}

struct ProjectComponent {
  const char* name;
  RegistrationResult (*register_kernels)();
};

// The kernel sets this build makes (the table of kernel sets).
std::vector<ProjectComponent> project_components() {
  std::vector<ProjectComponent> components;
#define ET_OPS_PYTHON_BUILT_SET(set) components.push_back({kernels::set::kComponent, &kernels::set::register_kernels});
  ET_OPS_BUILT_KERNEL_SETS(ET_OPS_PYTHON_BUILT_SET)
#undef ET_OPS_PYTHON_BUILT_SET
  return components;
}

// Registers the kernel sets this module links; an error makes the import fail.
py::list register_project_kernels() {
  py::list outcomes;
  for (const ProjectComponent& component : project_components()) {
    const RegistrationResult result = component.register_kernels();
    if (!result) throw py::import_error(std::string("et_ops: registering ") + component.name + " failed: " + result.status().message());
    py::dict outcome = registration_dict(result);
    outcome["component"] = component.name;
    outcomes.append(outcome);
  }
  return outcomes;
}

}  // namespace
}  // namespace et_ops::python

PYBIND11_MODULE(_et_ops, m) {
  using namespace et_ops::python;
  m.doc() = "Native layer of the et_ops package; use the et_ops package, not this module.";

  py::class_<NativeProgram>(m, "NativeProgram")
      .def_property_readonly("name", [](const NativeProgram& p) { return p.program().name(); })
      .def_property_readonly("path", [](const NativeProgram& p) { return p.program().path(); })
      .def_property_readonly("operators", [](const NativeProgram& p) { return p.program().operators(); })
      .def_property_readonly("instruction_count", [](const NativeProgram& p) { return p.program().instruction_count(); })
      .def_property_readonly("planned_memory_bytes",
                             [](const NativeProgram& p) { return p.program().planned_memory_bytes(); })
      .def_property_readonly("metadata_json", [](const NativeProgram& p) { return p.program().metadata_json(); })
      .def_property_readonly("input_specs", &NativeProgram::input_specs)
      .def_property_readonly("output_specs", &NativeProgram::output_specs)
      .def_property_readonly("input_bounds", &NativeProgram::input_bounds)
      .def_property_readonly("state_count", [](const NativeProgram& p) { return p.program().state_count(); })
      .def("run", &NativeProgram::run, py::arg("inputs"), py::arg("threads") = 1, py::arg("profile") = false);

  py::class_<NativeSession>(m, "NativeSession")
      .def(py::init<const NativeProgram&, std::size_t>(), py::arg("program"), py::arg("threads") = 1,
           py::keep_alive<1, 2>())
      .def_property_readonly("error", &NativeSession::error)
      .def("run", &NativeSession::run, py::arg("inputs"))
      .def("reset", &NativeSession::reset);
  m.def("generate", &generate_tokens, py::arg("program"), py::arg("prompt"), py::arg("max_new_tokens"),
        py::arg("temperature"), py::arg("top_k"), py::arg("seed"), py::arg("threads"), py::arg("stop_tokens"));

  m.def("load", &load, py::arg("path"));
  m.def("registered_operators", &registered_operators);
  m.def("counters", &counters_dict);
  m.def("set_duplicate_policy", &set_policy, py::arg("policy"));
  m.def("clear_duplicate_policy", &et_ops::clear_duplicate_policy);
  m.def("duplicate_policy", &policy_dict);
  m.def("load_library", &load_library, py::arg("path"));
  m.def("unregister_library", &unregister, py::arg("path"));

  py::list components;
  for (const ProjectComponent& c : project_components()) components.append(c.name);
  m.attr("components") = py::tuple(components);
  m.attr("import_registrations") = register_project_kernels();
}
