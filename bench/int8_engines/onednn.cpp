#include "onednn.h"

#include <omp.h>

#include <cstring>
#include <stdexcept>

namespace int8_engines {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

memory::dims activation_dims(int channels, int size) { return {1, channels, size, size}; }

memory::desc weight_desc(const Layer& layer, tag format) {
  const int k = layer.kernel;
  if (layer.groups == 1) return {{layer.out_channels, layer.in_channels, k, k}, dt::s8, format};
  return {{layer.groups, layer.group_out_channels(), layer.group_in_channels(), k, k}, dt::s8, format};
}

memory filled(const memory::desc& desc, const dnnl::engine& engine, const void* bytes) {
  memory m(desc, engine);
  std::memcpy(m.get_data_handle(), bytes, desc.get_size());
  return m;
}

// `from` reordered into `desc` (oneDNN's chosen layout).
memory reordered(const memory& from, const memory::desc& desc, const dnnl::engine& engine, dnnl::stream& stream) {
  if (from.get_desc() == desc) return from;
  memory to(desc, engine);
  dnnl::reorder(from, to).execute(stream, const_cast<memory&>(from), to);
  stream.wait();
  return to;
}

memory zero_point(int32_t value, const dnnl::engine& engine) {
  return filled({{1}, dt::s32, tag::x}, engine, &value);
}

}  // namespace

const char* name_of(OnednnLayout layout) { return layout == OnednnLayout::kNhwc ? "nhwc" : "blocked"; }

void onednn_initialize(bool avx2_only) {
  if (avx2_only && dnnl::set_max_cpu_isa(dnnl::cpu_isa::avx2) != dnnl::status::success)
    throw std::runtime_error("dnnl::set_max_cpu_isa(avx2) failed (called after the first primitive?)");
}

void onednn_set_threads(int threads) { omp_set_num_threads(threads); }

std::string onednn_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    default: return "other";
  }
}

OnednnConv::OnednnConv(const Layer& layer, const LayerData& d, OnednnLayout layout)
    : layer_(layer), engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  const tag activations = layout == OnednnLayout::kNhwc ? tag::nhwc : tag::any;
  const memory::desc src_any(activation_dims(layer.in_channels, layer.in_size), dt::u8, activations);
  const memory::desc dst_any(activation_dims(layer.out_channels, layer.out_size()), dt::u8, activations);
  const memory::desc bias_desc({layer.out_channels}, dt::s32, tag::x);
  const memory::dims strides{layer.stride, layer.stride}, padding{layer.padding, layer.padding};
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::convolution_direct, src_any,
                                             weight_desc(layer, tag::any), bias_desc, dst_any, strides, padding,
                                             padding);
  // dst = saturate(round(scale[o] * (acc + bias[o])) + zero point), with
  // scale[o] = input_scale * weight_scale[o] / output_scale: PyTorch's own
  // arithmetic for its onednn engine.
  std::vector<float> scales(layer.out_channels);
  for (int o = 0; o < layer.out_channels; ++o) scales[o] = d.input_scale * d.weight_scales[o] / d.output_scale;
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << 1, scales);
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  attr.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
  pd_ = dnnl::convolution_forward::primitive_desc(desc, attr, engine_);
  conv_ = dnnl::convolution_forward(pd_);

  const tag weight_format = layer.groups == 1 ? tag::oihw : tag::goihw;
  const memory user_src = filled({activation_dims(layer.in_channels, layer.in_size), dt::u8, tag::nhwc}, engine_,
                                 d.input_nhwc.data());
  const memory user_weights = filled(weight_desc(layer, weight_format), engine_, d.weight_oihw.data());
  args_[DNNL_ARG_SRC] = reordered(user_src, pd_.src_desc(), engine_, stream_);
  args_[DNNL_ARG_WEIGHTS] = reordered(user_weights, pd_.weights_desc(), engine_, stream_);
  args_[DNNL_ARG_BIAS] = filled(bias_desc, engine_, d.bias.data());
  args_[DNNL_ARG_DST] = memory(pd_.dst_desc(), engine_);
  args_[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC] = zero_point(d.input_zero_point, engine_);
  args_[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = zero_point(d.output_zero_point, engine_);
}

void OnednnConv::run() {
  conv_.execute(stream_, args_);
  stream_.wait();
}

std::vector<uint8_t> OnednnConv::output_nchw() const {
  const memory::desc nchw(activation_dims(layer_.out_channels, layer_.out_size()), dt::u8, tag::nchw);
  dnnl::stream stream(engine_);
  const memory out = reordered(args_.at(DNNL_ARG_DST), nchw, engine_, stream);
  const auto* bytes = static_cast<const uint8_t*>(out.get_data_handle());
  return std::vector<uint8_t>(bytes, bytes + nchw.get_size());
}

std::string OnednnConv::implementation() const { return pd_.impl_info_str(); }

OnednnReorder::OnednnReorder(int channels, int height, int width, bool to_float)
    : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {
  const memory::dims dims{1, channels, height, width};
  const memory::desc floats(dims, dt::f32, tag::nchw), bytes(dims, dt::u8, tag::nhwc);
  from_ = memory(to_float ? bytes : floats, engine_);
  to_ = memory(to_float ? floats : bytes, engine_);
  std::memset(from_.get_data_handle(), 0, from_.get_desc().get_size());
  // Quantizing divides by the scale and adds the zero point; dequantizing
  // subtracts it and multiplies (zero points as runtime-free constants).
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {to_float ? 0.05f : 20.0f});
  attr.set_zero_points(to_float ? DNNL_ARG_SRC : DNNL_ARG_DST, 0, {100});
  reorder_ = dnnl::reorder(dnnl::reorder::primitive_desc(from_, to_, attr));
}

void OnednnReorder::run() {
  reorder_.execute(stream_, from_, to_);
  stream_.wait();
}

}  // namespace int8_engines
