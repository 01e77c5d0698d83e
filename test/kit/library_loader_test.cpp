// et_ops::load_kernel_library: an owning handle; a failed load leaves
// nothing registered and nothing open.
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <string>

#include "et_ops/library_loader.h"

namespace {

bool is_open(const char* path) {
  void* handle = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

}  // namespace

TEST_CASE("a loaded library is registered until its handle goes", "[loader]") {
  REQUIRE_FALSE(is_open(TEST_PLUGIN_PATH));
  {
    et_ops::Result<et_ops::LoadedKernelLibrary> loaded = et_ops::load_kernel_library(TEST_PLUGIN_PATH);
    REQUIRE(loaded.ok());
    et_ops::LoadedKernelLibrary library = *std::move(loaded);
    CHECK(library.registration().registered == 1);
    CHECK(std::string(library.manifest()->component) == "test_plugin");
    CHECK(library.library_path() == et_ops::canonical_library_path(TEST_PLUGIN_PATH));
    CHECK(et_ops::has_operator("et_test_plugin::negate.out"));
    CHECK(is_open(TEST_PLUGIN_PATH));
    et_ops::LoadedKernelLibrary moved = std::move(library);
    CHECK(et_ops::has_operator("et_test_plugin::negate.out"));
  }
  CHECK_FALSE(et_ops::has_operator("et_test_plugin::negate.out"));
  CHECK_FALSE(is_open(TEST_PLUGIN_PATH));
}

TEST_CASE("open_kernel_library reads the manifest without registering", "[loader]") {
  et_ops::Result<et_ops::LoadedKernelLibrary> library = et_ops::open_kernel_library(TEST_PLUGIN_PATH);
  REQUIRE(library.ok());
  CHECK(library->manifest()->record_count == 1);
  CHECK_FALSE(et_ops::has_operator("et_test_plugin::negate.out"));
}

TEST_CASE("failed loads say why and leave nothing registered or open", "[loader]") {
  const auto before = et_ops::counters();
  SECTION("no such file") {
    et_ops::Result<et_ops::LoadedKernelLibrary> library = et_ops::load_kernel_library("/no/such/libkernels.so");
    CHECK(library.status().code() == et_ops::StatusCode::LibraryOpen);
    CHECK(library.status().message() == "/no/such/libkernels.so: no such kernel library");
  }
  SECTION("not a shared object") {
    et_ops::Result<et_ops::LoadedKernelLibrary> library = et_ops::load_kernel_library(NOT_A_LIBRARY_PATH);
    CHECK(library.status().code() == et_ops::StatusCode::LibraryOpen);
    CHECK_THAT(library.status().message(), Catch::StartsWith(std::string(NOT_A_LIBRARY_PATH) + ": cannot load"));
  }
  SECTION("a shared object without the entry point") {
    et_ops::Result<et_ops::LoadedKernelLibrary> library = et_ops::load_kernel_library(NO_ENTRY_POINT_PATH);
    CHECK(library.status().code() == et_ops::StatusCode::EntryPoint);
    CHECK_THAT(library.status().message(), Catch::Contains("does not define et_ops_kernel_library_manifest()"));
    CHECK_FALSE(is_open(NO_ENTRY_POINT_PATH));
  }
  SECTION("a kernel that does not match its schema") {
    et_ops::Result<et_ops::LoadedKernelLibrary> library = et_ops::load_kernel_library(MISMATCH_PLUGIN_PATH);
    CHECK(library.status().code() == et_ops::StatusCode::EntryPoint);
    CHECK_THAT(library.status().message(),
               Catch::Contains("returned no manifest: kernel library mismatch_plugin: kit_test::scale.out: argument 1 "
                               "('factor') is 'float' in the schema"));
    CHECK_FALSE(et_ops::has_operator("kit_test::scale.out"));
    CHECK_FALSE(is_open(MISMATCH_PLUGIN_PATH));
  }
  SECTION("a batch the policy rejects") {
    et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::FirstWins);
    et_ops::Result<et_ops::LoadedKernelLibrary> original = et_ops::load_kernel_library(COPY_A_PATH);
    REQUIRE(original.ok());
    et_ops::Result<et_ops::LoadedKernelLibrary> modified = et_ops::load_kernel_library(COPY_MODIFIED_PATH);
    CHECK(modified.status().code() == et_ops::StatusCode::Conflict);
    CHECK(et_ops::counters().registered == before.registered + original->registration().registered);
    CHECK_THAT(modified.status().message(), Catch::Contains("Rejected the kernels of component test_kernels"));
    CHECK_FALSE(is_open(COPY_MODIFIED_PATH));
    original->close();
    CHECK_FALSE(et_ops::has_operator("et_test::add_offset.out"));
    et_ops::clear_duplicate_policy();
    return;
  }
  CHECK(et_ops::counters().registered == before.registered);
}
