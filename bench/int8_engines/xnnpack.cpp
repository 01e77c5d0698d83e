#include "xnnpack.h"

#include <cpuinfo.h>

#include <stdexcept>

namespace int8_engines {
namespace {

void check(xnn_status status, const std::string& what) {
  if (status != xnn_status_success) throw std::runtime_error(what + " failed: xnn_status " + std::to_string(status));
}

// XNNPACK wants [groups][group output channels][kh][kw][group input
// channels]; PyTorch's weight is [O][C/groups][kh][kw].
template <typename T>
std::vector<T> ohwi_weights(const Layer& layer, const LayerData& data, int shift) {
  const int o_count = layer.out_channels, i_count = layer.group_in_channels(), kk = layer.kernel * layer.kernel;
  std::vector<T> out(data.weight_oihw.size());
  for (int o = 0; o < o_count; ++o)
    for (int i = 0; i < i_count; ++i)
      for (int s = 0; s < kk; ++s)
        out[(std::size_t(o) * kk + s) * i_count + i] =
            static_cast<T>(data.weight_oihw[(std::size_t(o) * i_count + i) * kk + s] + shift);
  return out;
}

}  // namespace

const char* name_of(XnnpackType type) {
  switch (type) {
    case XnnpackType::kQs8: return "qs8";
    case XnnpackType::kQc8: return "qc8";
    case XnnpackType::kQu8: return "qu8";
  }
  return "?";
}

void xnnpack_initialize(bool avx2_only) {
  if (!cpuinfo_initialize()) throw std::runtime_error("cpuinfo_initialize failed");
  if (avx2_only) {
    cpuinfo_isa.avx512f = cpuinfo_isa.avx512pf = cpuinfo_isa.avx512er = cpuinfo_isa.avx512cd = false;
    cpuinfo_isa.avx512dq = cpuinfo_isa.avx512bw = cpuinfo_isa.avx512vl = cpuinfo_isa.avx512ifma = false;
    cpuinfo_isa.avx512vbmi = cpuinfo_isa.avx512vbmi2 = cpuinfo_isa.avx512bitalg = false;
    cpuinfo_isa.avx512vpopcntdq = cpuinfo_isa.avx512vnni = cpuinfo_isa.avx512bf16 = false;
    cpuinfo_isa.avx512vp2intersect = cpuinfo_isa.avx512_4vnniw = cpuinfo_isa.avx512_4fmaps = false;
  }
  check(xnn_initialize(nullptr), "xnn_initialize");
}

XnnpackConv::XnnpackConv(const Layer& layer, const LayerData& d, XnnpackType type, pthreadpool_t pool)
    : layer_(layer), type_(type), pool_(pool) {
  const uint32_t p = layer.padding, k = layer.kernel, s = layer.stride;
  const std::size_t out_bytes = std::size_t(layer.out_channels) * layer.out_size() * layer.out_size();
  output_.resize(out_bytes);
  // XNNPACK may read up to XNN_EXTRA_BYTES past the end of an input.
  input_ = d.input_nhwc;
  input_.resize(input_.size() + XNN_EXTRA_BYTES);
  const xnn_status status = [&] {
    switch (type) {
      case XnnpackType::kQs8:
      case XnnpackType::kQc8: {
        for (auto& v : input_) v ^= 0x80;  // uint8 x -> int8 x - 128
        const auto weights = ohwi_weights<int8_t>(layer, d, 0);
        const auto input_zero_point = static_cast<int8_t>(d.input_zero_point - 128);
        const auto output_zero_point = static_cast<int8_t>(d.output_zero_point - 128);
        if (type == XnnpackType::kQs8)
          return xnn_create_convolution2d_nhwc_qs8(
              p, p, p, p, k, k, s, s, 1, 1, layer.groups, layer.group_in_channels(), layer.group_out_channels(),
              layer.in_channels, layer.out_channels, input_zero_point, d.input_scale, d.weight_scales[0],
              weights.data(), d.bias.data(), output_zero_point, d.output_scale, INT8_MIN, INT8_MAX, 0, &op_);
        return xnn_create_convolution2d_nhwc_qc8(
            p, p, p, p, k, k, s, s, 1, 1, layer.groups, layer.group_in_channels(), layer.group_out_channels(),
            layer.in_channels, layer.out_channels, input_zero_point, d.input_scale, d.weight_scales.data(),
            weights.data(), d.bias.data(), output_zero_point, d.output_scale, INT8_MIN, INT8_MAX, 0, &op_);
      }
      case XnnpackType::kQu8: {
        const auto weights = ohwi_weights<uint8_t>(layer, d, 128);
        return xnn_create_convolution2d_nhwc_qu8(
            p, p, p, p, k, k, s, s, 1, 1, layer.groups, layer.group_in_channels(), layer.group_out_channels(),
            layer.in_channels, layer.out_channels, static_cast<uint8_t>(d.input_zero_point), d.input_scale, 128,
            d.weight_scales[0], weights.data(), d.bias.data(), static_cast<uint8_t>(d.output_zero_point),
            d.output_scale, 0, UINT8_MAX, 0, &op_);
      }
    }
    return xnn_status_invalid_parameter;
  }();
  check(status, std::string("xnn_create_convolution2d_nhwc_") + name_of(type) + " for " + layer.id());
  other_input_ = input_;
  setup();
}

XnnpackConv::~XnnpackConv() { xnn_delete_operator(op_); }

void XnnpackConv::setup(bool other_input) {
  const std::size_t n = 1, h = layer_.in_size, w = layer_.in_size;
  const uint8_t* input = other_input ? other_input_.data() : input_.data();
  xnn_status status;
  switch (type_) {
    case XnnpackType::kQs8:
      status = xnn_setup_convolution2d_nhwc_qs8(op_, n, h, w, reinterpret_cast<const int8_t*>(input),
                                                reinterpret_cast<int8_t*>(output_.data()), pool_);
      break;
    case XnnpackType::kQc8:
      status = xnn_setup_convolution2d_nhwc_qc8(op_, n, h, w, reinterpret_cast<const int8_t*>(input),
                                                reinterpret_cast<int8_t*>(output_.data()), pool_);
      break;
    default:
      status = xnn_setup_convolution2d_nhwc_qu8(op_, n, h, w, input, output_.data(), pool_);
  }
  check(status, std::string("xnn_setup_convolution2d_nhwc_") + name_of(type_) + " for " + layer_.id());
}

void XnnpackConv::run() { check(xnn_run_operator(op_, pool_), "xnn_run_operator"); }

std::vector<uint8_t> XnnpackConv::output_nchw() const {
  std::vector<uint8_t> nhwc = output_;
  if (type_ != XnnpackType::kQu8)
    for (auto& v : nhwc) v ^= 0x80;
  std::vector<uint8_t> out(nhwc.size());
  nhwc_to_nchw(nhwc.data(), out.data(), layer_.out_channels, layer_.out_size() * layer_.out_size());
  return out;
}

XnnpackConvert::XnnpackConvert(int channels, int pixels, bool to_float, pthreadpool_t pool)
    : pool_(pool),
      floats_(std::size_t(channels) * pixels + XNN_EXTRA_BYTES, 0.5f),
      bytes_(floats_.size(), 3) {
  const std::size_t c = channels;
  if (to_float) {
    check(xnn_create_convert_nc_qs8_f32(c, c, c, 0.05f, -3, 0, &op_), "xnn_create_convert_nc_qs8_f32");
    check(xnn_setup_convert_nc_qs8_f32(op_, pixels, bytes_.data(), floats_.data(), pool_),
          "xnn_setup_convert_nc_qs8_f32");
  } else {
    check(xnn_create_convert_nc_f32_qs8(c, c, c, 0.05f, -3, INT8_MIN, INT8_MAX, 0, &op_),
          "xnn_create_convert_nc_f32_qs8");
    check(xnn_setup_convert_nc_f32_qs8(op_, pixels, floats_.data(), bytes_.data(), pool_),
          "xnn_setup_convert_nc_f32_qs8");
  }
}

XnnpackConvert::~XnnpackConvert() { xnn_delete_operator(op_); }

void XnnpackConvert::run() { check(xnn_run_operator(op_, pool_), "xnn_run_operator (convert)"); }

}  // namespace int8_engines
