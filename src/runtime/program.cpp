// Program's accessors, run-state creation and the run itself.
#include "et_ops/program.h"

#include "runtime/program_impl.h"
#include "runtime/run_state_impl.h"

namespace et_ops {

const std::string& Program::name() const { return impl_->model.name; }
const std::string& Program::path() const { return impl_->path; }
std::size_t Program::instruction_count() const { return impl_->instructions.size(); }
const std::vector<std::string>& Program::operators() const { return impl_->operators; }
std::size_t Program::input_count() const { return impl_->input_specs.size(); }
std::size_t Program::output_count() const { return impl_->output_specs.size(); }
const TensorSpec& Program::input_spec(std::size_t i) const { return impl_->input_specs.at(i); }
const TensorSpec& Program::output_spec(std::size_t i) const { return impl_->output_specs.at(i); }
std::size_t Program::planned_memory_bytes() const { return impl_->planned_bytes; }
const std::string& Program::metadata_json() const { return impl_->model.metadata_json; }

std::unique_ptr<RunState> Program::make_state() const {
  return std::unique_ptr<RunState>(new RunState(std::make_unique<RunState::Impl>(*impl_)));
}

RunResult Program::run(RunState& state) const {
  if (state.impl_->program != impl_.get()) {
    RunResult mismatch;
    mismatch.ok = false;
    mismatch.error = impl_->path + ": the run state was made by another program";
    return mismatch;
  }
  return state.impl_->execute();
}

}  // namespace et_ops
