// The int8 convolutions and linears of ResNet18 and MobileNetV2 at 224x224,
// batch 1: every distinct layer shape once, with how often it occurs, and
// the quantized operands one layer runs on (made here, deterministically,
// so every engine and PyTorch see the same bytes).
#ifndef ET_OPS_BENCH_INT8_ENGINES_LAYERS_H
#define ET_OPS_BENCH_INT8_ENGINES_LAYERS_H

#include <cstdint>
#include <string>
#include <vector>

namespace int8_engines {

// A linear is run as a 1x1 convolution over a 1x1 image: the same
// arithmetic, one code path per engine.
enum class Kind { kConv, kLinear };

struct Layer {
  const char* network;  // "resnet18" or "mobilenet_v2"
  const char* module;   // the first torchvision module of this shape
  int count;            // how many modules of the network have this shape
  Kind kind;
  int in_channels, out_channels, kernel, stride, padding, groups, in_size;

  int out_size() const { return (in_size + 2 * padding - kernel) / stride + 1; }
  int group_in_channels() const { return in_channels / groups; }
  int group_out_channels() const { return out_channels / groups; }
  bool depthwise() const { return groups > 1 && groups == in_channels; }
  int64_t macs() const;
  std::string id() const;  // "resnet18/layer1.0.conv1"
};

const std::vector<Layer>& layers();

// PyTorch's weight observers: one scale for the tensor (the qnnpack
// mapping) or one per output channel (onednn, x86), symmetric either way.
enum class WeightScales { kPerTensor, kPerChannel };
const char* name_of(WeightScales scales);

// One layer's operands in PyTorch's conventions: activations uint8 with a
// zero point (quint8), weights int8 with zero point 0 (qint8), bias int32
// in units of input_scale * weight_scale[o] (how every quantized engine
// adds it). Scales make the outputs span about +-3 sigma of the
// accumulators, so requantization rounds and saturates as in a real model.
struct LayerData {
  std::vector<uint8_t> input_nchw;  // [1, C, H, W]
  std::vector<uint8_t> input_nhwc;  // the same values, [1, H, W, C]
  std::vector<int8_t> weight_oihw;  // [O, C/groups, k, k]
  std::vector<int32_t> bias;        // [O]
  float input_scale = 0;
  int input_zero_point = 0;
  std::vector<float> weight_scales;  // [O]; all equal when per tensor
  float output_scale = 0;
  int output_zero_point = 0;
};

LayerData make_layer_data(const Layer& layer, WeightScales scales);

// Layout conversions of uint8 activations (plain loops, what a kernel set
// without a transpose primitive would run).
void nchw_to_nhwc(const uint8_t* in, uint8_t* out, int channels, int pixels);
void nhwc_to_nchw(const uint8_t* in, uint8_t* out, int channels, int pixels);

}  // namespace int8_engines

#endif  // ET_OPS_BENCH_INT8_ENGINES_LAYERS_H
