// XNNPACK's quantized NHWC convolutions, created once (weights packed at
// creation), set up once on fixed buffers, run many times.
#ifndef ET_OPS_BENCH_INT8_ENGINES_XNNPACK_H
#define ET_OPS_BENCH_INT8_ENGINES_XNNPACK_H

#include <pthreadpool.h>
#include <xnnpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include "layers.h"

namespace int8_engines {

// qs8: int8 activations, int8 weights with one scale (PyTorch's quint8
// activations with every value and zero point shifted by -128, an exact
// change of representation). qc8: the same with one weight scale per output
// channel. qu8: uint8 activations as they are, weights stored as uint8 with
// zero point 128.
enum class XnnpackType { kQs8, kQc8, kQu8 };
const char* name_of(XnnpackType type);

// Initializes XNNPACK once per process. With avx2_only, the AVX-512 flags
// of cpuinfo (which XNNPACK reads to pick its microkernels) are cleared
// first, so the microkernels are those an AVX2 machine gets.
void xnnpack_initialize(bool avx2_only);

class XnnpackConv {
 public:
  XnnpackConv(const Layer& layer, const LayerData& data, XnnpackType type, pthreadpool_t pool);
  ~XnnpackConv();
  XnnpackConv(const XnnpackConv&) = delete;
  XnnpackConv& operator=(const XnnpackConv&) = delete;

  // Binds the buffers: the first input, or a copy at another address (which
  // makes XNNPACK rebuild its indirection buffer, as a run with new
  // activation addresses would).
  void setup(bool other_input = false);
  void run();
  std::vector<uint8_t> output_nchw() const;  // as PyTorch's quint8 values

 private:
  const Layer& layer_;
  XnnpackType type_;
  pthreadpool_t pool_;
  xnn_operator_t op_ = nullptr;
  std::vector<uint8_t> input_;   // NHWC, bytes of the operator's type
  std::vector<uint8_t> other_input_;
  std::vector<uint8_t> output_;  // NHWC
};

// Quantize float to qs8 and back, NHWC (no layout change): what a program
// pays per tensor when int8 layers sit between float layers.
class XnnpackConvert {
 public:
  XnnpackConvert(int channels, int pixels, bool to_float, pthreadpool_t pool);
  ~XnnpackConvert();
  XnnpackConvert(const XnnpackConvert&) = delete;
  XnnpackConvert& operator=(const XnnpackConvert&) = delete;
  void run();

 private:
  pthreadpool_t pool_;
  xnn_operator_t op_ = nullptr;
  std::vector<float> floats_;
  std::vector<int8_t> bytes_;
};

}  // namespace int8_engines

#endif  // ET_OPS_BENCH_INT8_ENGINES_XNNPACK_H
