// The same test kernel library with a changed add_offset kernel: a
// different implementation of the same operators.
#define TEST_KERNEL_OFFSET 2
#include "test_kernels.cpp"
