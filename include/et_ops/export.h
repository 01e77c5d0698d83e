/* Export macros: libraries are built with -fvisibility=hidden, and only what
 * carries one of these macros is part of a library's interface.
 *
 * ET_OPS_BUILDING_<LIB> is defined while that library itself is compiled.
 * ET_OPS_STATIC_KERNELS hides the kernel-library symbols entirely; it is for
 * a binary that compiles its own private copy of a kernel set, whose symbols
 * must never interpose on (or be interposed by) the shared library's. */
#ifndef ET_OPS_EXPORT_H
#define ET_OPS_EXPORT_H

#define ET_OPS_VISIBLE __attribute__((visibility("default")))

#define ET_OPS_API ET_OPS_VISIBLE

#if defined(ET_OPS_STATIC_KERNELS)
#define ET_OPS_KERNELS_API
#else
#define ET_OPS_KERNELS_API ET_OPS_VISIBLE
#endif

#endif /* ET_OPS_EXPORT_H */
