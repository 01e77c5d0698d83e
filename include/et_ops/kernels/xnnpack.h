// libet_kernels_xnnpack.so: int8 operators on XNNPACK, for programs exported
// with the xnnpack backend (et_ops.export.export(..., backend="xnnpack")):
// et_xnnpack::conv2d.out (per-channel weights, grouped and depthwise),
// linear.out, add.out, adaptive_avg_pool2d.out (to 1x1), max_pool2d.out and
// convert_layout.out. The kernels-xnnpack page of the documentation gives
// their schemas and numbers.
//
// Every kernel is a prepared kernel (et_ops/kernel_library.h): a program
// that uses them checks their arguments and prepares weights once, when it
// loads; each run state holds its own XNNPACK operators and runs them on
// its thread pool (RunState::set_threads). Call register_kernels() once
// (more calls are no-ops) to make them available to programs.
// et_ops/kernels/xnnpack_operators.h (generated from the library's operator
// table) declares register_kernels() and manifest() and names the
// operators: op_name::conv2d_kernel, ...
#ifndef ET_OPS_KERNELS_XNNPACK_H
#define ET_OPS_KERNELS_XNNPACK_H

#include "et_ops/kernels/xnnpack_operators.h"

#endif  // ET_OPS_KERNELS_XNNPACK_H
