// Prepared kernels through the loader and run states: prepare runs once per
// loaded program and sees constants with data and other tensors without;
// each run state gets its own instance; every run gets the prepared state
// and the run state's threads; a prepare failure is a load error naming the
// instruction; the record's plain function still works alone; profiles
// name the instruction's operator and kernel library; a plain kernel sees
// the run state's environment through its context; the mapped pages of
// constants only prepared kernels read leave the resident set after load.
#include <catch2/catch.hpp>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <memory>

#include "et_ops/kernel_library.h"
#include "et_ops/profile.h"
#include "et_ops/program.h"
#include "et_ops/value.h"
#include "etp_writer.h"
#include "temp_dir.h"

namespace {

using et_ops::DType;
using et_ops::KernelContext;
using et_ops::RunEnvironment;
using et_ops::TensorRef;

std::atomic<int> prepares{0}, instances{0}, releases{0};
const float* last_prepared_weights = nullptr;  // where prepare_sum last saw its constant

// out[i] = self[i] * (sum of the constant weights) + the run state's run count.
struct SumState {
  float weight_sum = 0.0f;
  ~SumState() { ++releases; }
};
struct RunCounter {
  float runs = 0.0f;
  uint32_t last_threads = 0;
};

std::unique_ptr<SumState> prepare_sum(KernelContext& ctx, TensorRef self, TensorRef weights, TensorRef out) {
  ++prepares;
  if (weights.data() == nullptr) {
    ctx.fail("acme::scaled.out: weights must be a constant");
    return nullptr;
  }
  if (self.data() != nullptr || out.data() != nullptr) {
    ctx.fail("acme::scaled.out: activations have data at load time");
    return nullptr;
  }
  last_prepared_weights = weights.data_as<const float>();
  auto state = std::make_unique<SumState>();
  for (int64_t i = 0; i < weights.numel(); ++i) state->weight_sum += weights.data_as<const float>()[i];
  return state;
}

bool refuse_instances = false;  // instantiate_sum fails while set

std::unique_ptr<RunCounter> instantiate_sum(KernelContext& ctx, const SumState&, TensorRef self, TensorRef,
                                            TensorRef out) {
  if (self.data() == nullptr || out.data() == nullptr) return nullptr;  // a run state's tensors have data
  if (refuse_instances) {
    ctx.fail("acme::scaled.out: no instance today");
    return nullptr;
  }
  ++instances;
  return std::make_unique<RunCounter>();
}

bool run_sum(KernelContext& ctx, const SumState& state, RunCounter& counter, const RunEnvironment& env, TensorRef self,
             TensorRef, TensorRef out) {
  counter.last_threads = env.thread_count;
  counter.runs += 1.0f;
  for (int64_t i = 0; i < self.numel(); ++i)
    out.data_as<float>()[i] = self.data_as<const float>()[i] * state.weight_sum + counter.runs;
  return ctx.ok();
}

// A prepared kernel without a per-run-state part: out = self + the threads of the run.
std::unique_ptr<int> prepare_threads(KernelContext&, TensorRef, TensorRef) {
  ++prepares;
  return std::make_unique<int>(0);
}
bool run_threads(KernelContext& ctx, const int&, const RunEnvironment& env, TensorRef self, TensorRef out) {
  if ((env.thread_count > 1) != (env.threadpool != nullptr)) ctx.fail("acme::threads.out: pool and count disagree");
  for (int64_t i = 0; i < self.numel(); ++i)
    out.data_as<float>()[i] = self.data_as<const float>()[i] + static_cast<float>(env.thread_count);
  return ctx.ok();
}

// A plain kernel: out = self + the run's thread count (0 outside a run
// state's run) + 100 when the run has a pool.
bool plain_threads(KernelContext& ctx, TensorRef self, TensorRef out) {
  const et_ops_run_environment* env = ctx.run_environment();
  const float seen = env == nullptr ? 0.0f : float(env->thread_count) + (env->threadpool != nullptr ? 100.0f : 0.0f);
  for (int64_t i = 0; i < self.numel(); ++i) out.data_as<float>()[i] = self.data_as<const float>()[i] + seen;
  return ctx.ok();
}

constexpr const char* kScaled = "acme::scaled.out(Tensor self, Tensor weights, *, Tensor(a!) out) -> Tensor(a!)";
constexpr const char* kThreads = "acme::threads.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)";
constexpr const char* kPlainThreads = "acme::plain_threads.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)";

const et_ops::KernelLibrary& library() {
  static const et_ops::KernelLibrary instance("acme_prepared", "1.0", {
      et_ops::prepared_kernel<&prepare_sum, &instantiate_sum, &run_sum>(kScaled),
      et_ops::prepared_kernel<&prepare_threads, &run_threads>(kThreads),
      et_ops::kernel<&plain_threads>(kPlainThreads),
  });
  return instance;
}

void register_once() {
  static const bool registered = library().register_kernels().ok();
  REQUIRE(registered);
}

// input [4] -> scaled (weights constant [3] = 1, 2, 3) -> threads -> output.
std::string write_program(const et_ops::test::TempDir& dir, bool weights_constant = true) {
  et_ops::test::EtpWriter w("prepared");
  const uint32_t input = w.tensor(DType::Float32, {4});
  const std::vector<float> weight_values{1.0f, 2.0f, 3.0f};
  const uint32_t weights =
      weights_constant ? w.constant(DType::Float32, {3}, weight_values) : w.tensor(DType::Float32, {3});
  const uint32_t scaled = w.tensor(DType::Float32, {4});
  const uint32_t out = w.tensor(DType::Float32, {4});
  w.inputs({input});
  w.outputs({out});
  w.instruction("acme::scaled.out", {input, weights, scaled});
  w.instruction("acme::threads.out", {scaled, out});
  return w.write(dir.file("prepared.etp"));
}

std::vector<float> run(const et_ops::Program& program, et_ops::RunState& state) {
  const float in[4] = {1, 2, 3, 4};
  REQUIRE(state.set_input(0, in, sizeof in));
  const et_ops::RunResult result = program.run(state);
  REQUIRE(result.ok());
  const float* out = state.output(0).data_as<const float>();
  return std::vector<float>(out, out + 4);
}


// How many of the pages wholly inside [data, data + bytes) this process has
// mapped in (/proc/self/pagemap: bit 63 of a page's entry).
std::size_t resident_pages(const void* data, std::size_t bytes) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t first = (reinterpret_cast<uintptr_t>(data) + page - 1) / page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) / page;
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::size_t resident = 0;
  for (uintptr_t p = first; p < end; ++p) {
    uint64_t entry = 0;
    REQUIRE(::pread(fd, &entry, sizeof entry, static_cast<off_t>(p * sizeof entry)) == sizeof entry);
    resident += (entry >> 63) & 1;
  }
  ::close(fd);
  return resident;
}

// input [4] -> scaled (weights: a constant of `count` ones) -> threads ->
// output 0; with also_plain, plain_threads(weights) is output 1 as well.
std::string write_large_weights_program(const et_ops::test::TempDir& dir, std::size_t count, bool also_plain) {
  et_ops::test::EtpWriter w("large_weights");
  const uint32_t input = w.tensor(DType::Float32, {4});
  const uint32_t weights = w.constant(DType::Float32, {static_cast<int64_t>(count)}, std::vector<float>(count, 1.0f));
  const uint32_t scaled = w.tensor(DType::Float32, {4});
  const uint32_t out = w.tensor(DType::Float32, {4});
  const uint32_t copy = w.tensor(DType::Float32, {static_cast<int64_t>(count)});
  w.inputs({input});
  w.outputs(also_plain ? std::vector<uint32_t>{out, copy} : std::vector<uint32_t>{out});
  w.instruction("acme::scaled.out", {input, weights, scaled});
  w.instruction("acme::threads.out", {scaled, out});
  if (also_plain) w.instruction("acme::plain_threads.out", {weights, copy});
  return w.write(dir.file(also_plain ? "large_kept.etp" : "large_released.etp"));
}

}  // namespace

TEST_CASE("a library with prepared kernels has a version 2 manifest that says which records are prepared",
          "[prepared]") {
  const et_ops_manifest& m = library().manifest();
  CHECK(m.abi_version == ET_OPS_ABI_VERSION_PREPARED);
  REQUIRE(m.record_size == sizeof(et_ops_kernel_record_v2));
  const auto* records = reinterpret_cast<const et_ops_kernel_record_v2*>(m.records);
  REQUIRE(m.record_count == 3);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(records[i].kind == ET_OPS_KERNEL_PREPARED);
    REQUIRE(records[i].prepared != nullptr);
    CHECK(records[i].prepared->prepare != nullptr);
    CHECK(records[i].prepared->run != nullptr);
  }
  CHECK(records[0].prepared->instantiate != nullptr);
  CHECK(records[1].prepared->instantiate == nullptr);  // no per-run-state part
  CHECK(records[2].kind == ET_OPS_KERNEL_PLAIN);
  CHECK(records[2].prepared == nullptr);
}

TEST_CASE("a plain kernel sees the run state's threads through its context", "[prepared][threads]") {
  register_once();
  et_ops::test::TempDir dir;
  et_ops::test::EtpWriter w("plain_threads");
  const uint32_t input = w.tensor(DType::Float32, {4});
  const uint32_t out = w.tensor(DType::Float32, {4});
  w.inputs({input});
  w.outputs({out});
  w.instruction("acme::plain_threads.out", {input, out});
  const et_ops::LoadResult loaded = et_ops::Program::load(w.write(dir.file("plain_threads.etp")));
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  CHECK(run(*loaded.value(), *state) == std::vector<float>{2, 3, 4, 5});  // one thread, no pool
  REQUIRE(state->set_threads(2));
  CHECK(run(*loaded.value(), *state) == std::vector<float>{103, 104, 105, 106});  // two, with a pool
  // Called alone, outside a run state: no environment.
  float self[1] = {1}, result[1] = {0};
  et_ops::Tensor t_self(DType::Float32, self, {1}), t_out(DType::Float32, result, {1});
  et_ops_value values[2] = {et_ops::tensor_value(t_self), et_ops::tensor_value(t_out)};
  et_ops_value* args[2] = {&values[0], &values[1]};
  KernelContext ctx;
  et_ops::lookup_kernel("acme::plain_threads.out").fn(ctx.raw(), args, 2);
  REQUIRE(ctx.ok());
  CHECK(result[0] == 1.0f);
  // A context from a runtime whose contexts end at the message: the field is not read.
  KernelContext old;
  old.set_run_environment(reinterpret_cast<const et_ops_run_environment*>(&values[0]));  // not to be read
  old.raw()->struct_size = offsetof(et_ops_kernel_context, environment);
  CHECK(old.run_environment() == nullptr);
}

TEST_CASE("prepare runs once per loaded program; each run state has its own instance", "[prepared]") {
  register_once();
  et_ops::test::TempDir dir;
  const int prepared_before = prepares, instances_before = instances, releases_before = releases;
  {
    const et_ops::LoadResult loaded = et_ops::Program::load(write_program(dir));
    REQUIRE(loaded.ok());
    CHECK(prepares - prepared_before == 2);  // one per prepared instruction
    auto first = loaded.value()->make_state();
    auto second = loaded.value()->make_state();
    CHECK(instances - instances_before == 2);  // one per state, for the kernel that has one
    // 6 = 1 + 2 + 3 from the constants; + the state's run count; + 1 thread.
    CHECK(run(*loaded.value(), *first) == std::vector<float>{8, 14, 20, 26});
    CHECK(run(*loaded.value(), *first) == std::vector<float>{9, 15, 21, 27});
    CHECK(run(*loaded.value(), *second) == std::vector<float>{8, 14, 20, 26});  // its own counter
    CHECK(prepares - prepared_before == 2);  // runs never prepare
    REQUIRE(first->set_threads(3));
    CHECK(first->threads() == 3);
    CHECK(run(*loaded.value(), *first) == std::vector<float>{12, 18, 24, 30});
    REQUIRE(first->set_threads(1));
    CHECK(run(*loaded.value(), *first) == std::vector<float>{11, 17, 23, 29});
    const et_ops::Status refused = first->set_threads(0);
    CHECK(refused.code() == et_ops::StatusCode::Invalid);
    CHECK(refused.message().find("thread count 0") != std::string::npos);
  }
  CHECK(releases - releases_before == 1);  // the program's prepared state went with it
}

TEST_CASE("an instantiate failure is make_state's status, naming the instruction and the kernel's message",
          "[prepared]") {
  register_once();
  et_ops::test::TempDir dir;
  const et_ops::LoadResult loaded = et_ops::Program::load(write_program(dir));
  REQUIRE(loaded.ok());
  refuse_instances = true;
  const et_ops::Result<et_ops::RunState> state = loaded.value()->make_state();
  refuse_instances = false;
  REQUIRE_FALSE(state.ok());
  CHECK(state.status().code() == et_ops::StatusCode::KernelFailed);
  CHECK(state.status().message().find("instruction 0 (acme::scaled.out): the run state cannot be made") !=
        std::string::npos);
  CHECK(state.status().message().find("no instance today") != std::string::npos);
  CHECK(loaded.value()->make_state().ok());  // the program is unharmed
}

TEST_CASE("a prepare failure is a load error naming the instruction and the kernel's message", "[prepared]") {
  register_once();
  et_ops::test::TempDir dir;
  const et_ops::LoadResult loaded = et_ops::Program::load(write_program(dir, /*weights_constant=*/false));
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().message().find("instruction 0 (acme::scaled.out) cannot be prepared") != std::string::npos);
  CHECK(loaded.status().message().find("weights must be a constant") != std::string::npos);
}

TEST_CASE("the record's plain function prepares, runs and releases in one call", "[prepared]") {
  register_once();
  const et_ops::ResolvedKernel kernel = et_ops::lookup_kernel("acme::scaled.out");
  REQUIRE(kernel.fn != nullptr);
  REQUIRE(kernel.prepared != nullptr);
  // Called alone, its "activations" have data: prepare refuses them, as it says.
  float self[2] = {1, 2}, weights[2] = {3, 4}, out[2] = {0, 0};
  et_ops::Tensor t_self(DType::Float32, self, {2}), t_weights(DType::Float32, weights, {2}), t_out(DType::Float32, out, {2});
  et_ops_value values[3] = {et_ops::tensor_value(t_self), et_ops::tensor_value(t_weights),
                            et_ops::tensor_value(t_out)};
  et_ops_value* args[3] = {&values[0], &values[1], &values[2]};
  KernelContext ctx;
  kernel.fn(ctx.raw(), args, 3);
  CHECK_FALSE(ctx.ok());
  CHECK(std::string(ctx.message()).find("activations have data") != std::string::npos);
  const et_ops::ResolvedKernel threads = et_ops::lookup_kernel("acme::threads.out");
  et_ops_value* thread_args[2] = {&values[0], &values[2]};
  KernelContext ok;
  threads.fn(ok.raw(), thread_args, 2);
  REQUIRE(ok.ok());
  CHECK(out[0] == 2.0f);  // one thread
  CHECK(out[1] == 3.0f);
}

TEST_CASE("a profiled run times every instruction and names its kernel library", "[prepared][profile]") {
  register_once();
  et_ops::test::TempDir dir;
  const et_ops::LoadResult loaded = et_ops::Program::load(write_program(dir));
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  const float in[4] = {1, 2, 3, 4};
  REQUIRE(state->set_input(0, in, sizeof in));
  std::vector<et_ops::InstructionTiming> timings;
  REQUIRE(loaded.value()->run(*state, timings).ok());
  REQUIRE(timings.size() == 2);
  CHECK(timings[0].instruction == 0);
  CHECK(timings[1].instruction == 1);
  CHECK(timings[1].start_us >= timings[0].start_us + timings[0].duration_us);
  et_ops::Profiler profiler(*loaded.value());
  profiler.add_run(timings, 0.0);
  profiler.add_run(timings, 100.0);
  const auto& records = profiler.records();
  REQUIRE(records.size() == 4);
  CHECK(records[0].op == "acme::scaled.out");
  CHECK(records[0].component == "acme_prepared");
  CHECK(et_ops::tensor_shapes_text(records[0].tensors) == "float32[4], float32[3], float32[4]");
  CHECK(records[3].run == 1);
  CHECK(records[3].start_us == Approx(100.0 + timings[1].start_us));
  const std::string trace = et_ops::chrome_trace_json(records, "prepared");
  const nlohmann::json parsed = nlohmann::json::parse(trace);
  std::size_t complete_events = 0;
  for (const auto& event : parsed["traceEvents"])
    if (event["ph"] == "X") {
      ++complete_events;
      CHECK(event.contains("dur"));
      CHECK(event["args"]["kernel_set"] == "acme_prepared");
    }
  CHECK(complete_events == 4);
  const std::string summary = et_ops::profile_summary(records);
  CHECK(summary.find("acme::scaled.out") != std::string::npos);
  CHECK(summary.find("share") != std::string::npos);
}

TEST_CASE("a constant only prepared kernels read leaves the resident set once they are prepared",
          "[prepared][memory]") {
  register_once();
  et_ops::test::TempDir dir;
  constexpr std::size_t kCount = 1 << 18;  // 1 MiB of weights: 256 pages of 4 KiB
  constexpr std::size_t kBytes = kCount * sizeof(float);
  SECTION("read by prepared kernels alone: released, and the same bytes when read again") {
    const et_ops::LoadResult loaded = et_ops::Program::load(write_large_weights_program(dir, kCount, false));
    REQUIRE(loaded.ok());
    const float* weights = last_prepared_weights;
    REQUIRE(weights != nullptr);
    CHECK(resident_pages(weights, kBytes) == 0);  // prepare read every page; none is left mapped in
    auto state = loaded.value()->make_state();
    // out = self * (sum of the weights) + 1 (run count) + 1 (threads)
    CHECK(run(*loaded.value(), *state) == std::vector<float>{kCount + 2.0f, 2 * kCount + 2.0f, 3 * kCount + 2.0f,
                                                             4 * kCount + 2.0f});
    std::size_t ones = 0;
    for (std::size_t i = 0; i < kCount; ++i) ones += weights[i] == 1.0f;  // faulted back in from the file
    CHECK(ones == kCount);
  }
  SECTION("read by a plain kernel too: kept") {
    const et_ops::LoadResult loaded = et_ops::Program::load(write_large_weights_program(dir, kCount, true));
    REQUIRE(loaded.ok());
    const float* weights = last_prepared_weights;
    REQUIRE(weights != nullptr);
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    CHECK(resident_pages(weights, kBytes) >= kBytes / page - 1);  // every whole page prepare read
  }
}
