// A shared object that is not a kernel library: it has no entry point.
extern "C" __attribute__((visibility("default"))) int et_ops_kit_test_not_a_kernel_library() { return 0; }
