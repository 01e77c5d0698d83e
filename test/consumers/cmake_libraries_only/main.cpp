// Links only ${ET_OPS_LIBRARIES}: registers the portable kernels and lists
// what is registered. It has no business with the quantized kernels.
#include <et_ops/kernels/portable.h>
#include <et_ops/registry.h>

#include <iostream>

int main() {
  if (auto result = et_ops::kernels::portable::register_kernels(); !result) {
    std::cerr << result.status().message();
    return 1;
  }
  std::size_t count = et_ops::registered_records().size();
  std::cout << "registered " << count << " portable kernels\n";
  return count > 0 ? 0 : 1;
}
