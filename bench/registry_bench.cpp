// Registry costs beside a bare std::unordered_map in the same run:
// registering N kernels as one batch, and looking them up by name.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "et_ops/registry.h"

namespace {

void kernel(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}

// N records with realistic operator names, and queries drawn among them.
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

void BM_register_batch(benchmark::State& state) {
  Workload w(static_cast<int>(state.range(0)));
  et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::Fatal);
  for (auto _ : state) {
    auto result = et_ops::register_manifest(w.manifest);
    if (!result.ok()) state.SkipWithError(result.message().c_str());
    state.PauseTiming();
    et_ops::unregister_library("/proc/self/exe");
    state.ResumeTiming();
  }
  state.counters["kernels"] = static_cast<double>(state.range(0));
}

void BM_registry_lookup(benchmark::State& state) {
  Workload w(static_cast<int>(state.range(0)));
  if (!et_ops::register_manifest(w.manifest).ok()) state.SkipWithError("registration failed");
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(et_ops::lookup(w.queries[i++ & 4095]));
  }
  et_ops::unregister_library("/proc/self/exe");
}

void BM_unordered_map_lookup(benchmark::State& state) {
  Workload w(static_cast<int>(state.range(0)));
  std::unordered_map<std::string, et_ops_kernel_fn> map;
  for (const auto& name : w.names) map.emplace(name, &kernel);
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(map.find(w.queries[i++ & 4095]));
  }
}

}  // namespace

BENCHMARK(BM_register_batch)->Arg(250)->Arg(1000)->Arg(2000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_registry_lookup)->Arg(250)->Arg(1000)->Arg(2000);
BENCHMARK(BM_unordered_map_lookup)->Arg(250)->Arg(1000)->Arg(2000);

BENCHMARK_MAIN();
