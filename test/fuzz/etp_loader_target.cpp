// Fuzz target: whole .etp files. Loading must never crash and must explain
// every refusal; a program that loads must run (with zeroed inputs) without
// touching memory it does not own, and its outputs must be readable.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/npy.h"
#include "et_ops/program.h"
#include "fuzz_targets.h"

namespace et_ops::fuzz {
namespace {

constexpr const char* kTarget = "etp_loader";

// The input as a file without touching the disk: a memfd, reached through
// /proc/self/fd so the loader opens and maps it like any program file.
class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, std::size_t size) : fd_(memfd_create("fuzz.etp", MFD_CLOEXEC)) {
    if (fd_ < 0) target_failure(kTarget, "memfd_create failed");
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = write(fd_, data + done, size - done);
      if (n <= 0) target_failure(kTarget, "writing the memfd failed");
      done += static_cast<std::size_t>(n);
    }
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// Every kernel set, so seeds made from the example programs resolve and run.
bool register_kernel_sets() {
  if (!kernels::quantized::register_kernels()) target_failure(kTarget, "registering the quantized kernels failed");
  if (!kernels::portable::register_kernels()) target_failure(kTarget, "registering the portable kernels failed");
  return true;
}

// Small enough that a run state of any accepted program is cheap to zero;
// the limits themselves are part of what is fuzzed.
LoadLimits fuzz_limits() {
  LoadLimits limits;
  limits.max_memory_bytes = std::size_t(4) << 20;
  return limits;
}

void run_with_zeroed_inputs(const Program& program) {
  Result<RunState> state = program.make_state();
  if (!state) target_failure(kTarget, state.status().message().c_str());
  for (std::size_t i = 0; i < program.input_count(); ++i) {
    const std::vector<uint8_t> zeros(program.input_spec(i).nbytes(), 0);
    if (const Status set = state->set_input(i, zeros.data(), zeros.size()); !set)
      target_failure(kTarget, set.message().c_str());
  }
  const RunResult result = program.run(*state);
  if (!result.ok() && result.message().empty()) target_failure(kTarget, "a failed run gave no error message");
  // Reading every output byte (in logical order) catches an output tensor
  // whose metadata or data pointer is wrong.
  for (std::size_t i = 0; i < program.output_count(); ++i) (void)encode_npy(state->output(i));
}

}  // namespace

int fuzz_etp_loader(const uint8_t* data, std::size_t size) {
  static const bool registered = register_kernel_sets();
  (void)registered;
  const MemoryFile file(data, size);
  const Result<Program::Inspection> inspection = Program::inspect(file.path(), fuzz_limits());
  const LoadResult loaded = Program::load(file.path(), fuzz_limits());
  if (!loaded.ok()) {
    if (loaded.status().message().empty()) target_failure(kTarget, "a refused program gave no error message");
    return 0;
  }
  if (!inspection) target_failure(kTarget, "inspect refused a program that load accepts");
  run_with_zeroed_inputs(*loaded.value());
  return 0;
}

}  // namespace et_ops::fuzz
