// Closes what hwy_vnni_begin.h opened, in place of HWY_AFTER_NAMESPACE().
#if HWY_TARGET == HWY_AVX3_DL && HWY_COMPILER_CLANG
#pragma clang attribute pop
#elif HWY_TARGET == HWY_AVX3_DL && HWY_COMPILER_GCC_ACTUAL
#pragma GCC pop_options
HWY_AFTER_NAMESPACE();
#else
HWY_AFTER_NAMESPACE();
#endif
