// An allocation failure injected at each of the loader's allocation points
// in turn (et_ops::detail::inject_load_allocation_failure): every failed
// load is a load error that names the file, and leaves nothing behind. The
// mapping and the descriptor are checked here through /proc/self; the
// kernel library pins through dlopen; memory through LeakSanitizer when the
// sanitizer build runs this test (scripts/test-sanitizers.sh).
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "et_ops/program.h"
#include "et_ops/registry.h"
#include "program_fixtures.h"
#include "registry/fault_injection.h"
#include "test_kernels.h"

using et_ops::LoadResult;
using et_ops::Program;
using et_ops::test::EtpWriter;
using et_ops::test::TempDir;

namespace {

struct Registered {
  Registered() { et_ops::test::register_test_kernels(); }
} registered;

// Turns injection off however the test ends.
struct InjectionOff {
  ~InjectionOff() { et_ops::detail::inject_load_allocation_failure(-1); }
};

std::size_t open_descriptors() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

bool is_mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);)
    if (line.find(path) != std::string::npos) return true;
  return false;
}

// The add_scale program (kernels in this executable) followed by the
// plugin's negate.out, whose shared object a loaded program pins.
EtpWriter program_using_the_plugin() {
  EtpWriter w = et_ops::test::add_scale_program();
  const uint32_t y = w.header()["outputs"][0].get<uint32_t>();
  const uint32_t z = w.tensor(et_ops::DType::Float32, {2, 3});
  w.instruction("et_test_plugin::negate.out", {y, z});
  w.outputs({z});
  return w;
}

// The plugin, loaded and registered for the duration of a test.
class Plugin {
 public:
  Plugin() : handle_(dlopen(TEST_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL)) {
    REQUIRE(handle_ != nullptr);
    auto entry = reinterpret_cast<et_ops_kernel_library_entry_fn>(dlsym(handle_, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
    REQUIRE(entry != nullptr);
    REQUIRE(et_ops::register_manifest(*entry()).ok());
  }
  // Unregisters and closes it; true when no reference (no pin) kept it loaded.
  bool unload() {
    et_ops::unregister_library(TEST_PLUGIN_PATH);
    dlclose(handle_);
    handle_ = nullptr;
    void* still = dlopen(TEST_PLUGIN_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (still != nullptr) dlclose(still);
    return still == nullptr;
  }
  ~Plugin() {
    if (handle_ != nullptr) unload();
  }
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;

 private:
  void* handle_;
};

}  // namespace

TEST_CASE("an allocation failure at any point of a load is a load error that releases everything") {
  TempDir dir;
  const std::string path = dir.file("program.etp");
  program_using_the_plugin().write(path);
  Plugin plugin;
  InjectionOff off;
  const std::size_t descriptors = open_descriptors();
  int failed_points = 0;
  for (int countdown = 0;; ++countdown) {
    REQUIRE(countdown < 1000);  // the loop ends when no point is left to fail
    et_ops::detail::inject_load_allocation_failure(countdown);
    const LoadResult result = Program::load(path);
    if (result.ok()) break;
    INFO("countdown " << countdown << ": " << result.status().message());
    CHECK(result.status().code() == et_ops::StatusCode::Format);
    CHECK(result.status().message() == path + ": out of memory while loading the program");
    CHECK_FALSE(is_mapped(path));
    CHECK(open_descriptors() == descriptors);
    ++failed_points;
  }
  et_ops::detail::inject_load_allocation_failure(-1);
  // Values, instructions, phases of the build, operator resolution: many
  // points, each failing once (the hooks are where the loader allocates).
  CHECK(failed_points >= 10);
  CHECK_FALSE(is_mapped(path));  // the successful load's program is gone too
  CHECK(plugin.unload());        // no failed load kept a pin on the plugin
}

TEST_CASE("a load after injected failures loads and runs normally") {
  TempDir dir;
  const std::string path = dir.file("program.etp");
  program_using_the_plugin().write(path);
  Plugin plugin;
  InjectionOff off;
  for (int countdown = 0; countdown < 5; ++countdown) {
    et_ops::detail::inject_load_allocation_failure(countdown);
    CHECK_FALSE(Program::load(path).ok());
  }
  et_ops::detail::inject_load_allocation_failure(-1);
  const LoadResult loaded = Program::load(path);
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  REQUIRE(state->set_input(0, x.data(), x.size() * sizeof(float)));
  REQUIRE(loaded.value()->run(*state).ok());
  // z = -((x + c) * 2.5) with c = 0.5, 1.5, ...
  const std::vector<float> expected = {-3.75f, -8.75f, -13.75f, -18.75f, -23.75f, -28.75f};
  CHECK(et_ops::test::output_floats(*state, 0) == expected);
}

TEST_CASE("inspect reports an injected allocation failure as its error") {
  TempDir dir;
  const std::string path = dir.file("program.etp");
  et_ops::test::add_scale_program().write(path);
  InjectionOff off;
  et_ops::detail::inject_load_allocation_failure(0);
  const et_ops::Result<Program::Inspection> inspection = Program::inspect(path);
  CHECK(inspection.status().code() == et_ops::StatusCode::Format);
  CHECK(inspection.status().message() == path + ": out of memory while reading the program");
  CHECK_FALSE(is_mapped(path));
}
