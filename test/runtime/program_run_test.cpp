// Running programs: kernel errors stop the run, states are independent
// across threads, a run allocates nothing, memory is reused across
// lifetimes, constants are read-only, kernel libraries stay loaded while a
// program uses them.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <random>
#include <catch2/catch.hpp>
#include <thread>

#include "allocation_counter.h"
#include "et_ops/program.h"
#include "et_ops/registry.h"
#include "program_fixtures.h"
#include "test_kernels.h"

using et_ops::DType;
using et_ops::LoadResult;
using et_ops::test::EtpWriter;
using et_ops::test::TempDir;

namespace {

struct Registered {
  Registered() { et_ops::test::register_test_kernels(); }
} registered;


std::shared_ptr<const et_ops::Program> load(const TempDir& dir, const EtpWriter& w) {
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  return loaded.value();
}

// x -> (add x, then scale) repeated `steps` times -> y; float32 [n].
EtpWriter chain_program(int steps, int64_t n) {
  EtpWriter w("chain");
  const uint32_t x = w.tensor(DType::Float32, {n});
  uint32_t current = x;
  for (int i = 0; i < steps; ++i) {
    const uint32_t sum = w.tensor(DType::Float32, {n});
    w.instruction("et_test_rt::add.out", {current, x, sum});
    const uint32_t scaled = w.tensor(DType::Float32, {n});
    w.instruction("et_test_rt::scale.out", {sum, w.double_value(0.5 + 0.01 * i), scaled});
    current = scaled;
  }
  w.inputs({x});
  w.outputs({current});
  return w;
}

std::vector<float> run_chain(const et_ops::Program& program, et_ops::RunState& state, float seed) {
  std::vector<float> x(static_cast<std::size_t>(state.input(0).numel()));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = seed + 0.25f * static_cast<float>(i);
  REQUIRE(state.set_input(0, x.data(), x.size() * sizeof(float)));
  REQUIRE(program.run(state).ok());
  return et_ops::test::output_floats(state, 0);
}

}  // namespace

TEST_CASE("a kernel error stops the run with the instruction index and operator") {
  EtpWriter w("failing");
  const uint32_t x = w.tensor(DType::Float32, {4});
  const uint32_t t = w.tensor(DType::Float32, {4});
  const uint32_t u = w.tensor(DType::Float32, {4});
  const uint32_t y = w.tensor(DType::Float32, {4});
  w.inputs({x});
  w.outputs({y});
  w.instruction("et_test_rt::add.out", {x, x, t});
  w.instruction("et_test_rt::fail.out", {t, u});
  w.instruction("et_test_rt::scale.out", {t, w.int_value(3), y});
  TempDir dir;
  auto program = load(dir, w);
  auto state = program->make_state();
  const std::vector<float> ones(4, 1.0f);
  REQUIRE(state->set_input(0, ones.data(), 16));
  const et_ops::RunResult result = program->run(*state);
  CHECK_FALSE(result.ok());
  CHECK(result.message() == "instruction 1 (et_test_rt::fail.out): deliberate failure");
  CHECK(et_ops::test::output_floats(*state, 0) == std::vector<float>(4, 0.0f));  // instruction 2 never ran
}

TEST_CASE("a kernel's own argument checks surface as run errors") {
  EtpWriter w("bad_args");
  const uint32_t x = w.tensor(DType::Float32, {4});
  const uint32_t y = w.tensor(DType::Float32, {5});
  w.inputs({x});
  w.outputs({y});
  w.instruction("et_test_rt::add.out", {x, y});  // one argument short
  TempDir dir;
  auto program = load(dir, w);
  auto state = program->make_state();
  const et_ops::RunResult result = program->run(*state);
  CHECK_FALSE(result.ok());
  CHECK(result.message() == "instruction 0 (et_test_rt::add.out): wrong argument count");
}

TEST_CASE("a run state belongs to the program that made it") {
  TempDir dir;
  auto first = load(dir, chain_program(1, 4));
  auto second = load(dir, chain_program(2, 4));
  auto state = first->make_state();
  const et_ops::RunResult result = second->run(*state);
  CHECK_FALSE(result.ok());
  CHECK_THAT(result.message(), Catch::Contains("made by another program"));
}

TEST_CASE("several threads running one program with their own states match a serial run") {
  TempDir dir;
  auto program = load(dir, chain_program(20, 257));
  constexpr int kThreads = 4, kRuns = 50;
  std::vector<std::vector<float>> expected(kThreads * kRuns);
  {
    auto state = program->make_state();
    for (int i = 0; i < kThreads * kRuns; ++i) expected[static_cast<std::size_t>(i)] = run_chain(*program, *state, float(i));
  }
  std::vector<std::vector<std::vector<float>>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      auto state = program->make_state();
      for (int r = 0; r < kRuns; ++r) {
        std::vector<float> x(257);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = float(t * kRuns + r) + 0.25f * static_cast<float>(i);
        state->set_input(0, x.data(), x.size() * sizeof(float));
        if (!program->run(*state).ok()) return;
        results[static_cast<std::size_t>(t)].push_back(et_ops::test::output_floats(*state, 0));
      }
    });
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(results[static_cast<std::size_t>(t)].size() == kRuns);
    for (int r = 0; r < kRuns; ++r)
      CHECK(results[static_cast<std::size_t>(t)][static_cast<std::size_t>(r)] ==
            expected[static_cast<std::size_t>(t * kRuns + r)]);
  }
}

TEST_CASE("a run allocates nothing") {
  EtpWriter w = chain_program(10, 64);
  const uint32_t out = w.tensor(DType::Int64, {8});
  const uint32_t probe = w.tensor(DType::Int8, {3});
  const uint32_t which = w.tensor(DType::Int64, {1});
  w.instruction("et_test_rt::describe.out", {w.int_list({1, 2}), w.bool_value(true), w.none(), w.int_value(3), out});
  w.instruction("et_test_rt::which.out", {probe, which});
  TempDir dir;
  auto program = load(dir, w);
  auto state = program->make_state();
  (void)program->run(*state);
  long during_run = -1;
  bool all_ok = true;
  {
    et_ops::test::AllocationCounter counter;  // no Catch2 assertions inside: they may allocate
    for (int i = 0; i < 10; ++i) all_ok = program->run(*state).ok() && all_ok;
    during_run = counter.count();
  }
  CHECK(all_ok);
  CHECK(during_run == 0);
  {
    et_ops::test::AllocationCounter counter;  // the counter itself sees allocations, so the check above can fail
    std::string allocated(100, 'x');
    CHECK(counter.count() > 0);
  }
}

TEST_CASE("intermediates whose lifetimes do not overlap share memory") {
  TempDir dir;
  constexpr int64_t n = 1024;  // 4096 bytes per tensor
  auto program = load(dir, chain_program(50, n));  // 100 intermediates
  // The input lives throughout; the chain alternates between two buffers
  // (an instruction's input and output never share), the last of which
  // holds the output. One buffer per intermediate would be 101.
  CHECK(program->planned_memory_bytes() == 3 * n * sizeof(float));
  // Three buffers are live at once at every step: the plan is the minimum.
  const et_ops::Result<et_ops::Program::Inspection> inspection = et_ops::Program::inspect(program->path());
  REQUIRE(inspection.ok());
  CHECK(inspection.value().peak_live_bytes == 3 * n * sizeof(float));
  auto state = program->make_state();
  const std::vector<float> y = run_chain(*program, *state, 1.0f);
  // Recompute the chain directly.
  std::vector<float> x(n), current(n);
  for (int64_t i = 0; i < n; ++i) current[size_t(i)] = x[size_t(i)] = 1.0f + 0.25f * static_cast<float>(i);
  for (int s = 0; s < 50; ++s)
    for (int64_t i = 0; i < n; ++i)
      current[size_t(i)] = static_cast<float>((current[size_t(i)] + x[size_t(i)]) * (0.5 + 0.01 * s));
  CHECK(y == current);
}

TEST_CASE("random programs compute the same with planned memory as with a buffer per tensor") {
  // Tensors of mixed sizes whose lifetimes overlap arbitrarily: any two
  // live tensors sharing bytes would change the results.
  std::mt19937 random(1234);
  for (int trial = 0; trial < 20; ++trial) {
    EtpWriter w("random");
    const int64_t sizes[] = {1, 16, 17, 100, 1000};
    std::vector<std::pair<uint32_t, int64_t>> tensors;  // value, numel
    std::vector<std::vector<float>> reference;
    for (int64_t n : sizes) {
      tensors.push_back({w.tensor(DType::Float32, {n}), n});
      reference.push_back(std::vector<float>(static_cast<std::size_t>(n)));
      for (std::size_t i = 0; i < reference.back().size(); ++i) reference.back()[i] = float(i % 7) + float(n);
    }
    w.inputs({tensors[0].first, tensors[1].first, tensors[2].first, tensors[3].first, tensors[4].first});
    for (int step = 0; step < 150; ++step) {
      const std::size_t a = random() % tensors.size();
      std::vector<std::size_t> same;
      for (std::size_t t = 0; t < tensors.size(); ++t)
        if (tensors[t].second == tensors[a].second) same.push_back(t);
      const std::size_t b = same[random() % same.size()];
      const int64_t n = tensors[a].second;
      const uint32_t out = w.tensor(DType::Float32, {n});
      std::vector<float> result(static_cast<std::size_t>(n));
      if (random() % 2) {
        w.instruction("et_test_rt::add.out", {tensors[a].first, tensors[b].first, out});
        for (std::size_t i = 0; i < result.size(); ++i) result[i] = reference[a][i] + reference[b][i];
      } else {
        w.instruction("et_test_rt::scale.out", {tensors[a].first, w.double_value(0.5), out});
        for (std::size_t i = 0; i < result.size(); ++i) result[i] = static_cast<float>(reference[a][i] * 0.5);
      }
      tensors.push_back({out, n});
      reference.push_back(std::move(result));
    }
    std::vector<uint32_t> outputs;
    std::vector<std::size_t> output_tensors;
    for (int k = 0; k < 6; ++k) {
      output_tensors.push_back(5 + random() % (tensors.size() - 5));
      outputs.push_back(tensors[output_tensors.back()].first);
    }
    w.outputs(outputs);
    TempDir dir;
    auto program = load(dir, w);
    std::size_t one_buffer_each = 0;
    for (const auto& tensor : tensors) one_buffer_each += (static_cast<std::size_t>(tensor.second) * 4 + 63) / 64 * 64;
    CHECK(program->planned_memory_bytes() < one_buffer_each / 2);  // memory was reused
  // No plan needs less than the most bytes live at once, and best-fit
  // placement loses little to fragmentation here.
  const et_ops::Result<et_ops::Program::Inspection> inspection = et_ops::Program::inspect(program->path());
  REQUIRE(inspection.ok());
  const std::size_t live = inspection.value().peak_live_bytes;
  CHECK(live > 0);
  CHECK(live <= program->planned_memory_bytes());
  CHECK(program->planned_memory_bytes() <= live + live / 2);
    auto state = program->make_state();
    for (std::size_t i = 0; i < 5; ++i)
      REQUIRE(state->set_input(i, reference[i].data(), reference[i].size() * sizeof(float)));
    REQUIRE(program->run(*state).ok());
    for (std::size_t k = 0; k < outputs.size(); ++k)
      CHECK(et_ops::test::output_floats(*state, k) == reference[output_tensors[k]]);
  }
}

TEST_CASE("constants are mapped read-only: a kernel that writes one faults") {
  EtpWriter w("poke");
  const std::vector<float> c = {1, 2, 3, 4};
  const uint32_t constant = w.constant(DType::Float32, {4}, c);
  w.outputs({constant});
  w.instruction("et_test_rt::poke.out", {constant});
  TempDir dir;
  auto program = load(dir, w);
  std::fflush(nullptr);
  const pid_t child = fork();
  if (child == 0) {
    // The default action, not Catch2's or a sanitizer's handler: die by the signal.
    std::signal(SIGSEGV, SIG_DFL);
    std::signal(SIGBUS, SIG_DFL);
    auto state = program->make_state();
    (void)program->run(*state);
    _exit(0);  // reached only if the write did not fault
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK((WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS));
  auto state = program->make_state();  // the parent's mapping is untouched
  CHECK(et_ops::test::output_floats(*state, 0) == c);
}

TEST_CASE("a program keeps the kernel library it uses loaded") {
  void* library = dlopen(TEST_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  REQUIRE(library != nullptr);
  auto entry = reinterpret_cast<et_ops_kernel_library_entry_fn>(dlsym(library, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
  REQUIRE(entry != nullptr);
  REQUIRE(et_ops::register_manifest(*entry()).ok());
  EtpWriter w("plugin");
  const uint32_t x = w.tensor(DType::Float32, {3});
  const uint32_t y = w.tensor(DType::Float32, {3});
  w.inputs({x});
  w.outputs({y});
  w.instruction("et_test_plugin::negate.out", {x, y});
  TempDir dir;
  auto program = load(dir, w);
  CHECK(et_ops::unregister_library(TEST_PLUGIN_PATH) == 1);
  dlclose(library);  // the program's reference keeps the code mapped
  auto state = program->make_state();
  const std::vector<float> x_values = {1, -2, 3};
  REQUIRE(state->set_input(0, x_values.data(), 12));
  REQUIRE(program->run(*state).ok());
  CHECK(et_ops::test::output_floats(*state, 0) == std::vector<float>{-1, 2, -3});
  program.reset();
  void* still_loaded = dlopen(TEST_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD);
  CHECK(still_loaded == nullptr);  // the last reference went with the program
  if (still_loaded) dlclose(still_loaded);
}
