// Where a run's time goes: per-instruction records of profiled runs
// (Program::run with timings), as a Chrome trace-event file (Perfetto,
// chrome://tracing) and as a per-operator summary table.
#ifndef ET_OPS_PROFILE_H
#define ET_OPS_PROFILE_H

#include <cstddef>
#include <string>
#include <vector>

#include "et_ops/export.h"
#include "et_ops/program.h"

namespace et_ops {

// One instruction of one profiled run.
struct ProfileRecord {
  std::size_t run = 0;  // which of the profiled runs
  std::string phase;    // what the run was, when its caller says: generate() says "prefill" or "decode"
  std::size_t instruction = 0;
  std::string op;
  std::string component;  // the kernel library that ran it
  std::vector<TensorSpec> tensors;  // its tensor arguments, in argument order
  double start_us = 0.0;  // from the start of the first profiled run
  double duration_us = 0.0;
};

// Collects the records of successive profiled runs of one program.
class ET_OPS_API Profiler {
 public:
  explicit Profiler(const Program& program);
  // Adds one run's timings (of this profiler's program); `run_start_us` is
  // the run's start, measured from the start of the first run; `phase`
  // labels its records. Their tensors have the largest sizes the program
  // plans for.
  void add_run(const std::vector<InstructionTiming>& timings, double run_start_us, const std::string& phase = {});
  // The same for the run `state` has just made (the program must still be
  // alive): the tensors have that run's sizes, which differ from the largest
  // in a program with symbols.
  void add_run(const RunState& state, const std::vector<InstructionTiming>& timings, double run_start_us,
               const std::string& phase = {});
  const std::vector<ProfileRecord>& records() const { return records_; }
  // Whether it was made for `program` (compares identity only).
  bool profiles(const Program& program) const { return &program == program_; }

 private:
  const Program* program_;
  std::vector<InstructionInfo> infos_;
  std::vector<ProfileRecord> records_;
  std::size_t runs_ = 0;
};

// "int8[1,64,56,56]"; shapes of several tensors joined by ", ".
ET_OPS_API std::string tensor_shapes_text(const std::vector<TensorSpec>& tensors);

// The Chrome trace-event JSON of the records: one complete ("X") event per
// instruction, named by its operator, with its shapes, kernel library, run
// and (when labelled) phase.
ET_OPS_API std::string chrome_trace_json(const std::vector<ProfileRecord>& records, const std::string& program_name);

// A table with one row per operator and kernel library, slowest first:
// calls, total time, mean time and share of the whole.
ET_OPS_API std::string profile_summary(const std::vector<ProfileRecord>& records);

}  // namespace et_ops

#endif  // ET_OPS_PROFILE_H
