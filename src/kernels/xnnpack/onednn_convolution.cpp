// conv2d's accumulators on oneDNN's exact int8 kernels (see the header).
#include "onednn_convolution.h"

#include <omp.h>
#include <pthreadpool.h>

#include <atomic>
#include <exception>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <string_view>

namespace et_ops::kernels::xnnpack::detail {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Whether the CPU has int8 dot-product instructions oneDNN uses (they add
// into int32 without saturating), and the set may use them.
bool exact_int8_cpu() {
  if (avx2_only()) return false;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx2_vnni:
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx: return true;
    default: return false;
  }
}

// oneDNN's implementations name the instructions they use: only those with
// int8 dot products are exact.
bool exact_implementation(std::string_view name) {
  return name.find("vnni") != std::string_view::npos || name.find("amx") != std::string_view::npos;
}

// Where oneDNN's int32 accumulators pay off (measured on the convolutions of
// MobileNetV2 and ResNet18): dense convolutions with many products per
// output and many outputs per pixel. Depthwise and thin 1x1 convolutions
// are faster on XNNPACK, which requantizes in registers.
bool wants_onednn(const ConvolutionGeometry& g) {
  return g.groups == 1 && g.out_channels >= 64 && g.in_channels * g.kernel_height * g.kernel_width >= 128;
}

int64_t output_extent(std::size_t in, uint32_t kernel, uint32_t stride, uint32_t padding, uint32_t dilation) {
  const int64_t span = int64_t(dilation) * (int64_t(kernel) - 1) + 1;
  return (int64_t(in) + 2 * int64_t(padding) - span) / stride + 1;
}

}  // namespace

struct OnednnConvolution::Layer {
  ConvolutionGeometry g;
  int64_t out_height = 0, out_width = 0;
  const int8_t* weights = nullptr;  // the prepared state's, [O][kH][kW][C]
  std::vector<int32_t> bias;
  std::vector<float> scales;
  int32_t zero_point = 0, min = 0, max = 0;  // the output's
  int32_t input_zero_point = 0;              // of the uint8 copy
  std::size_t pixels = 0;
  std::size_t input_bytes = 0;

  memory::desc input_desc() const {
    return {{memory::dim(g.batch), memory::dim(g.in_channels), memory::dim(g.in_height), memory::dim(g.in_width)},
            dt::u8, tag::nhwc};
  }
  // The primitive computing output channels [begin, end) into int32; empty when not exact.
  dnnl::convolution_forward::primitive_desc slice_desc(std::size_t begin, std::size_t end) const {
    const memory::dim channels = memory::dim(end - begin);
    const memory::desc dst({memory::dim(g.batch), channels, out_height, out_width}, dt::s32, tag::nhwc);
    const memory::desc weights({channels, memory::dim(g.in_channels), g.kernel_height, g.kernel_width}, dt::s8,
                               tag::any);
    const dnnl::convolution_forward::desc desc(
        dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, input_desc(), weights, dst,
        {g.stride_height, g.stride_width}, {g.dilation_height - 1, g.dilation_width - 1},
        {g.padding_height, g.padding_width}, {g.padding_height, g.padding_width});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // each slice its own: runs may be concurrent
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    dnnl::convolution_forward::primitive_desc pd(desc, attr, cpu_engine());
    return exact_implementation(pd.impl_info_str()) ? pd : dnnl::convolution_forward::primitive_desc();
  }
};

namespace {

// Output channels [begin, end) of a run state, on one thread.
struct Slice {
  std::size_t begin = 0, end = 0;
  dnnl::convolution_forward convolution;
  memory weights, accumulators, scratchpad;
  dnnl::stream stream;
};

}  // namespace

struct OnednnRunState {
  uint32_t threads = 0;  // what the slices were made for; 0: not made yet
  memory input, zero_point;
  std::vector<Slice> slices;
};

void OnednnRunStateDeleter::operator()(OnednnRunState* state) const { delete state; }

OnednnConvolution::OnednnConvolution(std::unique_ptr<Layer> layer) : layer_(std::move(layer)) {}
OnednnConvolution::~OnednnConvolution() = default;

std::unique_ptr<OnednnConvolution> OnednnConvolution::create(const ConvolutionState& s) {
  if (!wants_onednn(s.geometry) || !exact_int8_cpu()) return nullptr;
  auto layer = std::make_unique<Layer>();
  Layer& l = *layer;
  l.g = s.geometry;
  l.out_height = output_extent(l.g.in_height, l.g.kernel_height, l.g.stride_height, l.g.padding_height,
                               l.g.dilation_height);
  l.out_width = output_extent(l.g.in_width, l.g.kernel_width, l.g.stride_width, l.g.padding_width,
                              l.g.dilation_width);
  l.weights = s.weights.data();
  l.bias = s.bias;
  l.scales.resize(l.g.out_channels);
  for (std::size_t c = 0; c < l.g.out_channels; ++c)  // as XNNPACK computes them
    l.scales[c] = s.input.scale * s.weight_scales[c] / s.output.q.scale;
  l.zero_point = s.output.q.zero_point, l.min = s.output.min, l.max = s.output.max;
  l.input_zero_point = int32_t(s.input.zero_point) + 128;
  l.pixels = l.g.batch * std::size_t(l.out_height) * std::size_t(l.out_width);
  l.input_bytes = std::size_t(s.input_numel);
  try {
    if (!l.slice_desc(0, l.g.out_channels)) return nullptr;
  } catch (const dnnl::error&) {
    return nullptr;  // no oneDNN kernel for it: XNNPACK runs it
  }
  return std::unique_ptr<OnednnConvolution>(new OnednnConvolution(std::move(layer)));
}

OnednnRunStateHandle OnednnConvolution::instantiate() const { return OnednnRunStateHandle(new OnednnRunState); }

namespace {

// Output channels split into `count` slices at multiples of 16 (oneDNN's blocks).
std::vector<std::pair<std::size_t, std::size_t>> slice_bounds(std::size_t channels, uint32_t threads) {
  const std::size_t count = std::max<std::size_t>(1, std::min<std::size_t>(threads, channels / 16));
  std::vector<std::pair<std::size_t, std::size_t>> bounds;
  std::size_t begin = 0;
  for (std::size_t i = 1; i <= count; ++i) {
    const std::size_t end = i == count ? channels : (channels * i / count) / 16 * 16;
    if (end > begin) bounds.emplace_back(begin, end);
    begin = std::max(begin, end);
  }
  return bounds;
}

// Makes the run state's slices for `threads` (reordering each slice's weights).
template <typename Layer>
void make_slices(const Layer& layer, OnednnRunState& r, uint32_t threads) {
  const dnnl::engine& engine = cpu_engine();
  r.slices.clear();
  r.input = memory(layer.input_desc(), engine);
  r.zero_point = memory({{1}, dt::s32, tag::x}, engine);
  *static_cast<int32_t*>(r.zero_point.get_data_handle()) = layer.input_zero_point;
  const auto& g = layer.g;
  const std::size_t row = std::size_t(g.kernel_height) * g.kernel_width * g.in_channels;
  dnnl::stream stream(engine);
  for (const auto& [begin, end] : slice_bounds(g.out_channels, threads)) {
    const auto pd = layer.slice_desc(begin, end);
    if (!pd) throw dnnl::error(dnnl_unimplemented, "no exact int8 kernel for a slice of the output channels");
    Slice slice{begin, end, dnnl::convolution_forward(pd), memory(pd.weights_desc(), engine),
                memory(pd.dst_desc(), engine), memory(pd.scratchpad_desc(), engine), dnnl::stream(engine)};
    memory given({{memory::dim(end - begin), memory::dim(g.in_channels), g.kernel_height, g.kernel_width}, dt::s8,
                  tag::ohwi},
                 engine, const_cast<int8_t*>(layer.weights + begin * row));
    dnnl::reorder(given, slice.weights).execute(stream, given, slice.weights);
    stream.wait();
    r.slices.push_back(std::move(slice));
  }
  r.threads = threads;
}

}  // namespace

bool OnednnConvolution::run(KernelContext& ctx, const char* op, OnednnRunState& r, const RunEnvironment& env,
                            const int8_t* input, int8_t* out) const {
  const Layer& l = *layer_;
  try {
    if (r.threads != env.thread_count) make_slices(l, r, env.thread_count);
  } catch (const std::exception& e) {
    r.threads = 0;
    return fail(ctx, op, "oneDNN could not make the run state's convolution: {}", e.what());
  }
  // int8 activations as uint8 (value + 128, zero point + 128): the form oneDNN's kernels are fastest on.
  auto* u8 = static_cast<uint8_t*>(r.input.get_data_handle());
  for (std::size_t i = 0; i < l.input_bytes; ++i) u8[i] = static_cast<uint8_t>(input[i]) ^ 0x80u;

  struct Task {
    Task(const Layer& layer, OnednnRunState& state, int8_t* output) : l(layer), r(state), out(output) {}
    const Layer& l;
    OnednnRunState& r;
    int8_t* out;
    std::atomic<bool> failed{false};
    std::once_flag first;
    std::string error;
    void operator()(std::size_t i) {
      Slice& s = r.slices[i];
      try {
        omp_set_num_threads(1);  // the run state's pool is the parallelism
        s.convolution.execute(s.stream, {{DNNL_ARG_SRC, r.input},
                                         {DNNL_ARG_WEIGHTS, s.weights},
                                         {DNNL_ARG_DST, s.accumulators},
                                         {DNNL_ARG_SCRATCHPAD, s.scratchpad},
                                         {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, r.zero_point}});
        s.stream.wait();
      } catch (const std::exception& e) {
        std::call_once(first, [&] { error = e.what(); });
        failed = true;
        return;
      }
      const Requantization q{l.bias.data() + s.begin, l.scales.data() + s.begin, l.zero_point, l.min, l.max};
      requantize(static_cast<const int32_t*>(s.accumulators.get_data_handle()), l.pixels, s.end - s.begin, q,
                 out + s.begin, l.g.out_channels);
    }
  } task(l, r, out);
  if (r.slices.size() == 1) {
    task(0);
  } else {
    pthreadpool_parallelize_1d(
        static_cast<pthreadpool_t>(env.threadpool),
        [](void* t, std::size_t i) { (*static_cast<Task*>(t))(i); }, &task, r.slices.size(), 0);
  }
  if (task.failed) return fail(ctx, op, "oneDNN convolution failed: {}", task.error);
  return true;
}

}  // namespace et_ops::kernels::xnnpack::detail
