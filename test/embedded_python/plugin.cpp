// A Python extension module that carries its own compiled-in copy of the
// quantized kernels (built from the kernel sources with
// ET_OPS_STATIC_KERNELS, so none of its symbols is visible outside it), as
// export-time plugins do, and registers that copy into the one registry of
// the process, which lives in libet_ops.so.
#include <pybind11/pybind11.h>

#include "et_ops/kernels/quantized.h"
#include "et_ops/registry.h"

namespace py = pybind11;

namespace {

py::dict registration_outcome(const et_ops::RegistrationResult& r) {
  py::dict d;
  const et_ops::Registration counts = r ? *r : et_ops::Registration{};
  d["ok"] = r.ok();
  d["status"] = static_cast<int>(r.status().code());
  d["registered"] = counts.registered;
  d["deduplicated"] = counts.deduplicated;
  d["unchanged"] = counts.unchanged;
  d["message"] = r.status().message();
  return d;
}

}  // namespace

PYBIND11_MODULE(PLUGIN_MODULE_NAME, m) {
  m.doc() = "A plugin with its own static copy of the quantized kernels";
  m.def("register_kernels", [] { return registration_outcome(et_ops::kernels::quantized::register_kernels()); },
        "Registers this module's copy of the quantized kernels into the process registry.");
  m.def("fingerprint", [] { return std::string(et_ops::kernels::quantized::manifest().records[0].fingerprint); });
  m.def("add_kernel_address", [] {
    return reinterpret_cast<std::uintptr_t>(et_ops::kernels::quantized::manifest().records[0].fn);
  });
}
