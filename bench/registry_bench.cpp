// Registry costs beside a bare std::unordered_map in the same run:
// registering N kernels as one batch (cold: the first registration of a
// fresh process; warm: again after unregistering), and looking them up by
// name among N.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ctime>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "et_ops/registry.h"

extern char** environ;

namespace {

void kernel(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}

// N records with realistic operator names and schemas, and queries drawn among them.
struct Workload {
  std::vector<std::string> names;
  std::vector<std::string> schemas;
  std::vector<et_ops_kernel_record> records;
  et_ops_manifest manifest{};
  std::vector<std::string> queries;

  explicit Workload(int n) {
    for (int i = 0; i < n; ++i) {
      names.push_back(fmt::format("bench_namespace::operator_number_{}.out", i));
      schemas.push_back(names.back() + "(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
    }
    for (int i = 0; i < n; ++i) records.push_back({names[i].c_str(), "", &kernel, schemas[i].c_str(), "fp"});
    manifest = et_ops_manifest{ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record), "bench", "1", records.data(),
                               records.size()};
    std::mt19937 rng(42);
    std::uniform_int_distribution<int> pick(0, n - 1);
    for (int i = 0; i < 4096; ++i) queries.push_back(names[pick(rng)]);
  }
};

using Map = std::unordered_map<std::string, et_ops_kernel_fn>;

void fill_map(Map& map, const Workload& w) {
  for (const std::string& name : w.names) map.emplace(name, &kernel);
}

// ---- cold: one registration (or map) in a fresh process ----

// This thread's CPU time (page faults included): unlike the wall clock, it
// does not count the time the process waits for a CPU on a shared machine.
double thread_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The child's side: builds the workload, then times one registration.
int cold_child(const std::string& kind, int n) {
  Workload w(n);
  const double start = thread_seconds();
  if (kind == "et_ops") {
    if (!et_ops::register_manifest(w.manifest).ok()) return 1;
  } else {
    Map map;
    fill_map(map, w);
    benchmark::DoNotOptimize(map);
  }
  std::printf("%.9f\n", thread_seconds() - start);
  return 0;
}

// The parent's side: runs this program as a fresh process and reads its time.
double run_cold_child(const char* kind, int n) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, fds[0]);
  const std::string count = std::to_string(n);
  char* argv[] = {const_cast<char*>("/proc/self/exe"), const_cast<char*>("--cold"), const_cast<char*>(kind),
                  const_cast<char*>(count.c_str()), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  char buffer[64] = {};
  const ssize_t got = spawned == 0 ? read(fds[0], buffer, sizeof buffer - 1) : -1;
  close(fds[0]);
  int status = 0;
  if (spawned == 0) waitpid(pid, &status, 0);
  if (got <= 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return -1;
  return std::strtod(buffer, nullptr);
}

void cold(benchmark::State& state, const char* kind) {
  for (auto _ : state) {
    const double seconds = run_cold_child(kind, static_cast<int>(state.range(0)));
    if (seconds < 0) state.SkipWithError("the child process failed");
    state.SetIterationTime(seconds);
  }
  state.counters["kernels"] = static_cast<double>(state.range(0));
}
void BM_register_cold_et_ops(benchmark::State& state) { cold(state, "et_ops"); }
void BM_register_cold_unordered_map(benchmark::State& state) { cold(state, "map"); }

// ---- warm: again and again in one process ----

void BM_register_warm_et_ops(benchmark::State& state) {
  Workload w(static_cast<int>(state.range(0)));
  et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::Fatal);
  for (auto _ : state) {
    auto result = et_ops::register_manifest(w.manifest);
    if (!result.ok()) state.SkipWithError(result.status().message().c_str());
    state.PauseTiming();
    et_ops::unregister_library("/proc/self/exe");
    state.ResumeTiming();
  }
  state.counters["kernels"] = static_cast<double>(state.range(0));
}

void BM_register_warm_unordered_map(benchmark::State& state) {
  Workload w(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    Map map;
    fill_map(map, w);
    benchmark::DoNotOptimize(map);
    state.PauseTiming();
    map = Map();
    state.ResumeTiming();
  }
  state.counters["kernels"] = static_cast<double>(state.range(0));
}

// ---- lookups ----

void BM_lookup_et_ops(benchmark::State& state) {
  Workload w(static_cast<int>(state.range(0)));
  if (!et_ops::register_manifest(w.manifest).ok()) state.SkipWithError("registration failed");
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(et_ops::lookup(w.queries[i++ & 4095]));
  et_ops::unregister_library("/proc/self/exe");
}

void BM_lookup_unordered_map(benchmark::State& state) {
  Workload w(static_cast<int>(state.range(0)));
  Map map;
  fill_map(map, w);
  std::size_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(map.find(w.queries[i++ & 4095]));
}

}  // namespace

BENCHMARK(BM_register_cold_et_ops)->Arg(250)->Arg(1000)->Arg(2000)->UseManualTime()->Iterations(30)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_register_cold_unordered_map)->Arg(250)->Arg(1000)->Arg(2000)->UseManualTime()->Iterations(30)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_register_warm_et_ops)->Arg(250)->Arg(1000)->Arg(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_register_warm_unordered_map)->Arg(250)->Arg(1000)->Arg(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_lookup_et_ops)->Arg(250)->Arg(1000)->Arg(2000);
BENCHMARK(BM_lookup_unordered_map)->Arg(250)->Arg(1000)->Arg(2000);

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--cold") == 0) return cold_child(argv[2], std::atoi(argv[3]));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
