// Loading the test kernel library copies (see copies/meson.build) and
// running code in a child process, for the registry tests.
#ifndef ET_OPS_TEST_REGISTRY_COPIES_H
#define ET_OPS_TEST_REGISTRY_COPIES_H

#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <stdexcept>
#include <string>

#include "et_ops/abi.h"
#include "et_ops/registry.h"

namespace et_ops::test {

// One dlopen'ed copy of the test kernel library.
struct LoadedCopy {
  explicit LoadedCopy(const std::string& library) : path(canonical_library_path(library)) {
    handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) throw std::runtime_error(std::string("dlopen failed: ") + dlerror());
    auto entry = reinterpret_cast<et_ops_kernel_library_entry_fn>(dlsym(handle, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
    if (entry == nullptr) throw std::runtime_error("no entry point in " + library);
    manifest = entry();
  }
  ~LoadedCopy() {
    unregister_library(path);
    dlclose(handle);
  }
  LoadedCopy(const LoadedCopy&) = delete;
  LoadedCopy& operator=(const LoadedCopy&) = delete;

  RegistrationResult register_all() const { return register_manifest(*manifest); }
  et_ops_kernel_fn function(std::size_t record) const { return manifest->records[record].fn; }

  void* handle = nullptr;
  const et_ops_manifest* manifest = nullptr;
  std::string path;
};

struct ChildOutcome {
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  std::string stderr_text;
};

// Runs `body` in a forked child whose stderr is captured; the child exits 0
// when `body` returns.
inline ChildOutcome run_in_child(const std::function<void()>& body) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    dup2(pipe_fds[1], STDERR_FILENO);
    body();
    _exit(0);
  }
  close(pipe_fds[1]);
  ChildOutcome outcome;
  char buffer[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof buffer)) > 0) outcome.stderr_text.append(buffer, static_cast<std::size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  outcome.exited = WIFEXITED(status);
  outcome.exit_code = outcome.exited ? WEXITSTATUS(status) : -1;
  outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return outcome;
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_REGISTRY_COPIES_H
