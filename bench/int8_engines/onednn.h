// oneDNN's int8 convolution (u8 activations, s8 weights, per-channel output
// scales, zero points of source and destination), primitive created once
// with its weights reordered into the layout it chose, executed many times.
#ifndef ET_OPS_BENCH_INT8_ENGINES_ONEDNN_H
#define ET_OPS_BENCH_INT8_ENGINES_ONEDNN_H

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <dnnl.hpp>

#include "layers.h"

namespace int8_engines {

// kNhwc: activations in and out as [1, H, W, C] bytes, what PyTorch's
// channels-last quantized tensors hold. kBlocked: oneDNN chooses the
// activation layout too (nChw16c / nChw8c), as it would inside a graph of
// oneDNN-only operators.
enum class OnednnLayout { kNhwc, kBlocked };
const char* name_of(OnednnLayout layout);

// Caps oneDNN's instruction set once per process (before the first
// primitive), and sets its OpenMP thread count.
void onednn_initialize(bool avx2_only);
void onednn_set_threads(int threads);
std::string onednn_isa();  // the instruction set oneDNN runs on

class OnednnConv {
 public:
  OnednnConv(const Layer& layer, const LayerData& data, OnednnLayout layout);
  void run();
  std::vector<uint8_t> output_nchw() const;  // PyTorch's quint8 values
  std::string implementation() const;        // oneDNN's name for the kernel it chose

 private:
  const Layer& layer_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::convolution_forward::primitive_desc pd_;
  dnnl::convolution_forward conv_;
  std::unordered_map<int, dnnl::memory> args_;
};

// Quantizing float NCHW into uint8 NHWC (and back) with one oneDNN reorder:
// the layout and type change a program pays around an int8 layer whose
// neighbours are float NCHW.
class OnednnReorder {
 public:
  OnednnReorder(int channels, int height, int width, bool to_float);
  void run();

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
  dnnl::memory from_, to_;
  dnnl::reorder reorder_;
};

}  // namespace int8_engines

#endif  // ET_OPS_BENCH_INT8_ENGINES_ONEDNN_H
