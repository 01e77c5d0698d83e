// One program, several threads, each with its own run state, on the
// project's own kernels (the example programs qmlp and qcnn: quantize,
// dequantize, addmm, convolution, pooling, ...): every thread's outputs
// equal, byte for byte, a serial run of the same input. The sanitizer
// script also runs this test under ThreadSanitizer, which reports a data
// race in any kernel or in the runtime even when the bytes happen to agree.
#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/npy.h"
#include "et_ops/program.h"

namespace {

constexpr int kThreads = 4;
constexpr int kRunsPerThread = 6;

struct Registered {
  Registered() {
    if (!et_ops::kernels::quantized::register_kernels() || !et_ops::kernels::portable::register_kernels())
      throw std::runtime_error("registering the kernel libraries failed");
  }
} registered;

// The example's input scaled by a factor that differs per run, so that a
// thread reading another thread's state would produce different bytes.
std::vector<float> input_for_run(const et_ops::NpyArray& input, int run) {
  std::vector<float> values(input.data.size() / sizeof(float));
  std::memcpy(values.data(), input.data.data(), input.data.size());
  for (float& v : values) v *= 0.5f + 0.05f * static_cast<float>(run);
  return values;
}

// Every output of one run, as the bytes encode_npy writes.
std::vector<std::vector<uint8_t>> run_once(const et_ops::Program& program, et_ops::RunState& state,
                                           const std::vector<float>& input, std::string& error) {
  if (const et_ops::Status set = state.set_input(0, input.data(), input.size() * sizeof(float)); !set) {
    error = set.message();
    return {};
  }
  const et_ops::RunResult result = program.run(state);
  if (!result.ok()) {
    error = result.message();
    return {};
  }
  std::vector<std::vector<uint8_t>> outputs;
  for (std::size_t i = 0; i < program.output_count(); ++i) outputs.push_back(et_ops::encode_npy(state.output(i)));
  return outputs;
}

}  // namespace

TEST_CASE("example programs run from several threads give the serial results") {
  for (const std::string name : {"qmlp", "qcnn"}) {
    DYNAMIC_SECTION(name) {
      const std::string dir = std::string(EXAMPLES_DIR) + "/" + name + "/";
      const et_ops::LoadResult loaded = et_ops::Program::load(dir + name + ".etp");
      INFO(loaded.status().message());
      REQUIRE(loaded.ok());
      const et_ops::Program& program = *loaded.value();
      const et_ops::Result<et_ops::NpyArray> read = et_ops::read_npy(dir + name + "_input_0.npy");
      REQUIRE(read.ok());
      const et_ops::NpyArray& input = *read;
      REQUIRE(input.dtype == et_ops::DType::Float32);

      std::vector<std::vector<std::vector<uint8_t>>> expected(kThreads * kRunsPerThread);
      {
        auto state = program.make_state();
        for (int run = 0; run < kThreads * kRunsPerThread; ++run) {
          std::string error;
          expected[static_cast<std::size_t>(run)] = run_once(program, *state, input_for_run(input, run), error);
          INFO(error);
          REQUIRE(error.empty());
        }
      }
      REQUIRE(expected[0] != expected[1]);  // the runs differ, so a mix-up would show

      // No Catch2 assertions on the threads: they are not thread-safe.
      std::vector<std::vector<std::vector<std::vector<uint8_t>>>> results(kThreads);
      std::vector<std::string> errors(kThreads);
      std::vector<std::thread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          auto state = program.make_state();
          for (int r = 0; r < kRunsPerThread && errors[static_cast<std::size_t>(t)].empty(); ++r)
            results[static_cast<std::size_t>(t)].push_back(run_once(
                program, *state, input_for_run(input, t * kRunsPerThread + r), errors[static_cast<std::size_t>(t)]));
        });
      for (std::thread& thread : threads) thread.join();

      for (int t = 0; t < kThreads; ++t) {
        INFO("thread " << t << ": " << errors[static_cast<std::size_t>(t)]);
        REQUIRE(errors[static_cast<std::size_t>(t)].empty());
        REQUIRE(results[static_cast<std::size_t>(t)].size() == std::size_t(kRunsPerThread));
        for (int r = 0; r < kRunsPerThread; ++r)
          CHECK(results[static_cast<std::size_t>(t)][static_cast<std::size_t>(r)] ==
                expected[static_cast<std::size_t>(t * kRunsPerThread + r)]);
      }
    }
  }
}
