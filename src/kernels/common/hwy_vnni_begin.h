// Included in place of HWY_BEFORE_NAMESPACE() by per-target code that uses
// vpdpbusd: Highway's AVX3_DL target (CPUs with AVX-512 VNNI) leaves
// avx512vnni out of its compiler flags, so that target gets it added here.
// Pair with hwy_vnni_end.h. No include guard: included once per target.
#if HWY_TARGET == HWY_AVX3_DL && HWY_COMPILER_CLANG
// Clang applies only the outermost target attribute of nested pushes: one
// push with both feature lists.
#pragma clang attribute push(__attribute__((target(HWY_TARGET_STR ",avx512vnni"))), apply_to = function)
#elif HWY_TARGET == HWY_AVX3_DL && HWY_COMPILER_GCC_ACTUAL
HWY_BEFORE_NAMESPACE();
#pragma GCC push_options
#pragma GCC target("avx512vnni")
#else
HWY_BEFORE_NAMESPACE();
#endif
