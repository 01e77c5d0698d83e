// Replays inputs through a fuzz target's entry function, in the normal test
// suite and without libFuzzer: every checked-in seed and every input that
// once crashed a target must pass, in every build (and, in the sanitizer
// build, under AddressSanitizer and UBSan).
//
// Usage: fuzz_replay TARGET PATH...   (a PATH is a file or a directory of files)
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "../fuzz_targets.h"

namespace {

using Entry = int (*)(const uint8_t*, std::size_t);
namespace fs = std::filesystem;

Entry entry_named(std::string_view name) {
  if (name == "etp_loader") return et_ops::fuzz::fuzz_etp_loader;
  if (name == "npy_reader") return et_ops::fuzz::fuzz_npy_reader;
  if (name == "quantized_kernels") return et_ops::fuzz::fuzz_quantized_kernels;
  if (name == "portable_kernels") return et_ops::fuzz::fuzz_portable_kernels;
  if (name == "xnnpack_kernels") return et_ops::fuzz::fuzz_xnnpack_kernels;
  if (name == "state_writes") return et_ops::fuzz::fuzz_state_writes;
  return nullptr;
}

std::vector<fs::path> inputs_under(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(path))
      if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
  } else if (fs::is_regular_file(path)) {
    files.push_back(path);
  }
  return files;
}

std::vector<uint8_t> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: {} TARGET PATH...\n", argv[0]);
    return 2;
  }
  const Entry entry = entry_named(argv[1]);
  if (entry == nullptr) {
    fmt::print(stderr, "unknown fuzz target '{}' (etp_loader, npy_reader, quantized_kernels, portable_kernels, xnnpack_kernels, state_writes)\n", argv[1]);
    return 2;
  }
  std::size_t replayed = 0;
  for (int i = 2; i < argc; ++i) {
    if (!fs::exists(argv[i])) {
      fmt::print(stderr, "{}: does not exist\n", argv[i]);
      return 1;
    }
    for (const fs::path& file : inputs_under(argv[i])) {
      fmt::print("{}\n", file.string());
      std::fflush(stdout);  // so a crash names the input that caused it
      const std::vector<uint8_t> bytes = read_bytes(file);
      entry(bytes.data(), bytes.size());
      ++replayed;
    }
  }
  fmt::print("{}: replayed {} inputs\n", argv[1], replayed);
  // No input at all would make this test pass without testing anything.
  return replayed > 0 ? 0 : 1;
}
