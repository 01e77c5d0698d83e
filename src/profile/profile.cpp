// Profile records, their Chrome trace-event JSON and the summary table.
#include "et_ops/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

namespace et_ops {

Profiler::Profiler(const Program& program) : program_(&program), infos_(program.describe_instructions()) {}

void Profiler::add_run(const std::vector<InstructionTiming>& timings, double run_start_us, const std::string& phase) {
  for (const InstructionTiming& t : timings) {
    const InstructionInfo& info = infos_.at(t.instruction);
    records_.push_back(ProfileRecord{runs_, phase, t.instruction, info.op, info.component, info.tensors,
                                     run_start_us + t.start_us, t.duration_us});
  }
  ++runs_;
}

void Profiler::add_run(const RunState& state, const std::vector<InstructionTiming>& timings, double run_start_us,
                       const std::string& phase) {
  const std::size_t first = records_.size();
  add_run(timings, run_start_us, phase);
  for (std::size_t r = first; r < records_.size(); ++r) {
    std::vector<TensorSpec>& tensors = records_[r].tensors;
    std::vector<std::vector<int64_t>> sizes = program_->instruction_sizes(state, records_[r].instruction);
    for (std::size_t t = 0; t < tensors.size() && t < sizes.size(); ++t) tensors[t].sizes = std::move(sizes[t]);
  }
}

std::string tensor_shapes_text(const std::vector<TensorSpec>& tensors) {
  std::string text;
  for (const TensorSpec& t : tensors) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{}[{}]", dtype_name(t.dtype), fmt::join(t.sizes, ","));
  }
  return text;
}

std::string chrome_trace_json(const std::vector<ProfileRecord>& records, const std::string& program_name) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 1},
                    {"args", {{"name", "et_ops program " + program_name}}}});
  for (const ProfileRecord& r : records) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const TensorSpec& t : r.tensors) shapes.push_back(t.sizes);
    nlohmann::json dtypes = nlohmann::json::array();
    for (const TensorSpec& t : r.tensors) dtypes.push_back(std::string(dtype_name(t.dtype)));
    nlohmann::json args{{"instruction", r.instruction}, {"run", r.run}, {"kernel_set", r.component},
                        {"shapes", shapes}, {"dtypes", dtypes}};
    if (!r.phase.empty()) args["phase"] = r.phase;
    events.push_back({{"name", r.op},
                      {"cat", r.component.empty() ? std::string("unknown") : r.component},
                      {"ph", "X"},
                      {"ts", r.start_us},
                      {"dur", r.duration_us},
                      {"pid", 1},
                      {"tid", 1},
                      {"args", args}});
  }
  nlohmann::json trace{{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return trace.dump(1) + "\n";
}

std::string profile_summary(const std::vector<ProfileRecord>& records) {
  struct Row {
    std::size_t calls = 0;
    double total_us = 0.0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;
  double total = 0.0;
  for (const ProfileRecord& r : records) {
    Row& row = rows[{r.op, r.component}];
    ++row.calls;
    row.total_us += r.duration_us;
    total += r.duration_us;
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Row>> sorted(rows.begin(), rows.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second.total_us > b.second.total_us; });
  std::size_t op_width = 8, set_width = 10;
  for (const auto& [key, row] : sorted) {
    op_width = std::max(op_width, key.first.size());
    set_width = std::max(set_width, key.second.size());
  }
  std::string text = fmt::format("{:<{}}  {:<{}}  {:>6}  {:>11}  {:>10}  {:>6}\n", "operator", op_width,
                                 "kernel set", set_width, "calls", "total (ms)", "mean (us)", "share");
  for (const auto& [key, row] : sorted)
    text += fmt::format("{:<{}}  {:<{}}  {:>6}  {:>11.3f}  {:>10.1f}  {:>5.1f}%\n", key.first, op_width, key.second,
                        set_width, row.calls, row.total_us / 1000.0, row.total_us / row.calls,
                        total > 0 ? 100.0 * row.total_us / total : 0.0);
  text += fmt::format("{:<{}}  {:<{}}  {:>6}  {:>11.3f}\n", "total", op_width, "", set_width, records.size(),
                      total / 1000.0);
  return text;
}

}  // namespace et_ops
