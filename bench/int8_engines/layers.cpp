#include "layers.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace int8_engines {

int64_t Layer::macs() const {
  const int64_t pixels = int64_t{out_size()} * out_size();
  return pixels * out_channels * group_in_channels() * kernel * kernel;
}

std::string Layer::id() const { return std::string(network) + "/" + module; }

const std::vector<Layer>& layers() {
  constexpr Kind C = Kind::kConv;
  constexpr Kind L = Kind::kLinear;
  // network, first module, count, kind, in, out, kernel, stride, padding, groups, input size.
  // int8_engines_torch.py checks this table against torchvision's models.
  static const std::vector<Layer> table = {
      {"resnet18", "conv1", 1, C, 3, 64, 7, 2, 3, 1, 224},
      {"resnet18", "layer1.0.conv1", 4, C, 64, 64, 3, 1, 1, 1, 56},
      {"resnet18", "layer2.0.conv1", 1, C, 64, 128, 3, 2, 1, 1, 56},
      {"resnet18", "layer2.0.conv2", 3, C, 128, 128, 3, 1, 1, 1, 28},
      {"resnet18", "layer2.0.downsample.0", 1, C, 64, 128, 1, 2, 0, 1, 56},
      {"resnet18", "layer3.0.conv1", 1, C, 128, 256, 3, 2, 1, 1, 28},
      {"resnet18", "layer3.0.conv2", 3, C, 256, 256, 3, 1, 1, 1, 14},
      {"resnet18", "layer3.0.downsample.0", 1, C, 128, 256, 1, 2, 0, 1, 28},
      {"resnet18", "layer4.0.conv1", 1, C, 256, 512, 3, 2, 1, 1, 14},
      {"resnet18", "layer4.0.conv2", 3, C, 512, 512, 3, 1, 1, 1, 7},
      {"resnet18", "layer4.0.downsample.0", 1, C, 256, 512, 1, 2, 0, 1, 14},
      {"resnet18", "fc", 1, L, 512, 1000, 1, 1, 0, 1, 1},
      {"mobilenet_v2", "features.0.0", 1, C, 3, 32, 3, 2, 1, 1, 224},
      {"mobilenet_v2", "features.1.conv.0.0", 1, C, 32, 32, 3, 1, 1, 32, 112},
      {"mobilenet_v2", "features.1.conv.1", 1, C, 32, 16, 1, 1, 0, 1, 112},
      {"mobilenet_v2", "features.2.conv.0.0", 1, C, 16, 96, 1, 1, 0, 1, 112},
      {"mobilenet_v2", "features.2.conv.1.0", 1, C, 96, 96, 3, 2, 1, 96, 112},
      {"mobilenet_v2", "features.2.conv.2", 1, C, 96, 24, 1, 1, 0, 1, 56},
      {"mobilenet_v2", "features.3.conv.0.0", 2, C, 24, 144, 1, 1, 0, 1, 56},
      {"mobilenet_v2", "features.3.conv.1.0", 1, C, 144, 144, 3, 1, 1, 144, 56},
      {"mobilenet_v2", "features.3.conv.2", 1, C, 144, 24, 1, 1, 0, 1, 56},
      {"mobilenet_v2", "features.4.conv.1.0", 1, C, 144, 144, 3, 2, 1, 144, 56},
      {"mobilenet_v2", "features.4.conv.2", 1, C, 144, 32, 1, 1, 0, 1, 28},
      {"mobilenet_v2", "features.5.conv.0.0", 3, C, 32, 192, 1, 1, 0, 1, 28},
      {"mobilenet_v2", "features.5.conv.1.0", 2, C, 192, 192, 3, 1, 1, 192, 28},
      {"mobilenet_v2", "features.5.conv.2", 2, C, 192, 32, 1, 1, 0, 1, 28},
      {"mobilenet_v2", "features.7.conv.1.0", 1, C, 192, 192, 3, 2, 1, 192, 28},
      {"mobilenet_v2", "features.7.conv.2", 1, C, 192, 64, 1, 1, 0, 1, 14},
      {"mobilenet_v2", "features.8.conv.0.0", 4, C, 64, 384, 1, 1, 0, 1, 14},
      {"mobilenet_v2", "features.8.conv.1.0", 4, C, 384, 384, 3, 1, 1, 384, 14},
      {"mobilenet_v2", "features.8.conv.2", 3, C, 384, 64, 1, 1, 0, 1, 14},
      {"mobilenet_v2", "features.11.conv.2", 1, C, 384, 96, 1, 1, 0, 1, 14},
      {"mobilenet_v2", "features.12.conv.0.0", 3, C, 96, 576, 1, 1, 0, 1, 14},
      {"mobilenet_v2", "features.12.conv.1.0", 2, C, 576, 576, 3, 1, 1, 576, 14},
      {"mobilenet_v2", "features.12.conv.2", 2, C, 576, 96, 1, 1, 0, 1, 14},
      {"mobilenet_v2", "features.14.conv.1.0", 1, C, 576, 576, 3, 2, 1, 576, 14},
      {"mobilenet_v2", "features.14.conv.2", 1, C, 576, 160, 1, 1, 0, 1, 7},
      {"mobilenet_v2", "features.15.conv.0.0", 3, C, 160, 960, 1, 1, 0, 1, 7},
      {"mobilenet_v2", "features.15.conv.1.0", 3, C, 960, 960, 3, 1, 1, 960, 7},
      {"mobilenet_v2", "features.15.conv.2", 2, C, 960, 160, 1, 1, 0, 1, 7},
      {"mobilenet_v2", "features.17.conv.2", 1, C, 960, 320, 1, 1, 0, 1, 7},
      {"mobilenet_v2", "features.18.0", 1, C, 320, 1280, 1, 1, 0, 1, 7},
      {"mobilenet_v2", "classifier.1", 1, L, 1280, 1000, 1, 1, 0, 1, 1},
  };
  return table;
}

const char* name_of(WeightScales scales) {
  return scales == WeightScales::kPerTensor ? "per_tensor" : "per_channel";
}

LayerData make_layer_data(const Layer& layer, WeightScales scales) {
  uint64_t seed = 1469598103934665603ull;  // FNV-1a of the layer id: the same bytes on every run
  for (char ch : layer.id() + name_of(scales)) seed = (seed ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
  std::mt19937_64 rng(seed);
  auto uniform_int = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto uniform_real = [&rng](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };

  LayerData d;
  const int c = layer.in_channels, o = layer.out_channels, k = layer.kernel;
  const int pixels = layer.in_size * layer.in_size;
  d.input_scale = static_cast<float>(uniform_real(0.01, 0.1));
  d.input_zero_point = uniform_int(0, 255);
  d.input_nchw.resize(std::size_t(c) * pixels);
  for (auto& v : d.input_nchw) v = static_cast<uint8_t>(uniform_int(0, 255));
  d.input_nhwc.resize(d.input_nchw.size());
  nchw_to_nhwc(d.input_nchw.data(), d.input_nhwc.data(), c, pixels);

  d.weight_oihw.resize(std::size_t(o) * layer.group_in_channels() * k * k);
  for (auto& v : d.weight_oihw) v = static_cast<int8_t>(uniform_int(-128, 127));
  const double weight_scale = uniform_real(0.002, 0.02);
  d.weight_scales.resize(o);
  for (auto& s : d.weight_scales)
    s = static_cast<float>(scales == WeightScales::kPerTensor ? weight_scale : weight_scale * uniform_real(0.5, 2.0));

  // Accumulator spread: K products of (x - zx), spread sqrt(74^2 + offset^2),
  // and w, spread 74 (uniform bytes).
  const double terms = double(layer.group_in_channels()) * k * k;
  const double offset = 127.5 - d.input_zero_point;
  const double sigma = std::sqrt(terms * (74.0 * 74.0 + offset * offset)) * 74.0;
  d.bias.resize(o);
  for (auto& b : d.bias) b = static_cast<int32_t>(uniform_real(-sigma, sigma));
  d.output_scale = static_cast<float>(6.0 * sigma * d.input_scale * weight_scale / 255.0);
  d.output_zero_point = uniform_int(64, 192);
  return d;
}

void nchw_to_nhwc(const uint8_t* in, uint8_t* out, int channels, int pixels) {
  constexpr int kBlock = 32;  // keeps both sides of a tile in L1
  for (int p0 = 0; p0 < pixels; p0 += kBlock)
    for (int c0 = 0; c0 < channels; c0 += kBlock)
      for (int c = c0; c < std::min(c0 + kBlock, channels); ++c)
        for (int p = p0; p < std::min(p0 + kBlock, pixels); ++p)
          out[std::size_t(p) * channels + c] = in[std::size_t(c) * pixels + p];
}

void nhwc_to_nchw(const uint8_t* in, uint8_t* out, int channels, int pixels) {
  constexpr int kBlock = 32;
  for (int c0 = 0; c0 < channels; c0 += kBlock)
    for (int p0 = 0; p0 < pixels; p0 += kBlock)
      for (int p = p0; p < std::min(p0 + kBlock, pixels); ++p)
        for (int c = c0; c < std::min(c0 + kBlock, channels); ++c)
          out[std::size_t(c) * pixels + p] = in[std::size_t(p) * channels + c];
}

}  // namespace int8_engines
