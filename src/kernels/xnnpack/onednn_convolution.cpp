// conv2d on oneDNN's exact int8 kernels (see the header).
#include "onednn_convolution.h"

#include <omp.h>
#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <string_view>

#include "engine_memory.h"
#include "exact_pixels.h"
#include "input_bytes.h"

namespace et_ops::kernels::xnnpack::detail {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;
using PrimitiveDesc = dnnl::convolution_forward::primitive_desc;

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The input oneDNN's int8 kernels take exactly on this CPU: any (int8
// dot products, vpdpbusd, add into int32 without saturating: AVX-512 VNNI,
// AMX, AVX-VNNI), 7-bit (AVX2 and AVX-512 without VNNI: vpmaddubsw adds
// pairs of products into a saturating int16, exact while the uint8 operand
// is at most 127), or none (other CPUs, or ET_OPS_XNNPACK_ONEDNN=0). The
// kernels picked for these are those the tests compare with XNNPACK.
ExactInput exact_input() {
  if (!onednn_allowed()) return ExactInput::none;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
    case dnnl::cpu_isa::avx2_vnni: return ExactInput::any;
    case dnnl::cpu_isa::avx2:
    case dnnl::cpu_isa::avx512_core: return ExactInput::seven_bits;
    default: return ExactInput::none;
  }
}

// oneDNN's implementations name the instructions they use: those with int8
// dot products are exact on any input; on 7-bit input, its direct int8
// kernels (not its GEMM-based ones, whose arithmetic is not checked here).
bool exact_implementation(const PrimitiveDesc& pd, ExactInput input) {
  const std::string_view name = pd.impl_info_str();
  if (input == ExactInput::any)
    return name.find("vnni") != std::string_view::npos || name.find("amx") != std::string_view::npos;
  return input == ExactInput::seven_bits && name.rfind("jit", 0) == 0 && name.find("int8") != std::string_view::npos;
}

// 255 * sum|w| + |bias| <= 2^24 for every output channel: every integer the
// fused kernel converts or adds in float32 is then exact (see the header).
bool fusable(const ConvolutionState& s) {
  const std::size_t channels = s.geometry.out_channels, per_channel = s.weights.size() / channels;
  for (std::size_t o = 0; o < channels; ++o) {
    int64_t sum = 0;
    for (std::size_t i = 0; i < per_channel; ++i) sum += std::abs(int64_t(s.weights[o * per_channel + i]));
    if (255 * sum + std::abs(int64_t(s.bias[o])) > (int64_t(1) << 24)) return false;
  }
  return true;
}

// Where int32 accumulators pay off (measured on MobileNetV2 and ResNet18):
// dense convolutions with many products per output and many outputs per pixel.
bool accumulators_pay_off(const ConvolutionGeometry& g) {
  return g.groups == 1 && g.out_channels >= 64 && g.in_channels * g.kernel_height * g.kernel_width >= 128;
}

// One OpenMP thread for oneDNN while it lives: the run state's pool is the
// parallelism. oneDNN plans a kernel's work for the thread count of its
// creation and runs that many threads, so both creating and running a
// kernel happen under it. The calling thread's own setting is restored for
// the application's use.
class OneOpenmpThread {
 public:
  OneOpenmpThread() : application_threads_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneOpenmpThread() { omp_set_num_threads(application_threads_); }
  OneOpenmpThread(const OneOpenmpThread&) = delete;
  OneOpenmpThread& operator=(const OneOpenmpThread&) = delete;

 private:
  int application_threads_;
};

// The input rows output rows [r0, r1) read, and the padding around them.
struct TileRows {
  int64_t first_input, input_rows, pad_top, pad_bottom;
};
TileRows tile_rows(const ConvolutionGeometry& g, int64_t r0, int64_t r1) {
  const int64_t span = int64_t(g.dilation_height) * (int64_t(g.kernel_height) - 1) + 1;
  const int64_t start = r0 * g.stride_height - int64_t(g.padding_height);
  const int64_t end = (r1 - 1) * g.stride_height - int64_t(g.padding_height) + span;
  const int64_t first = std::max<int64_t>(0, start), last = std::min<int64_t>(int64_t(g.in_height), end);
  return {first, last - first, first - start, end - last};
}

}  // namespace

struct OnednnConvolution::Layer {
  ConvolutionGeometry g;
  ExactInput input_kind = ExactInput::none;
  bool fused = false;
  const int8_t* weights = nullptr;  // the prepared state's, [groups][O/groups][kH][kW][C/groups]
  std::vector<int8_t> weights_by_tap;  // 7-bit kernels: what correct_accumulators() reads
  std::vector<int32_t> bias;
  std::vector<float> scales;
  int32_t zero_point = 0, min = 0, max = 0;  // the output's
  int8_t input_zero_point = 0;
  memory bias_memory;
  // The fused form's convolution of one image, made when the program
  // loads: a run state on one thread (or with one tile per image) runs it
  // as it is.
  dnnl::convolution_forward whole;
  memory whole_weights;  // in the layout its kernel wants
  // The int32 form: the unfused layers' one form; a fused 7-bit kernel's
  // other, for runs with more bytes beyond the window than computing the
  // pixels they reach again pays for. It runs in blocks of block_rows
  // output rows, whose accumulators stay in a core's cache while they are
  // corrected and requantized. Null where the layer has none.
  memory int32_weights;  // in the layout its kernel wants
  int64_t block_rows = 0;

  memory::dims weight_dims() const {
    const memory::dim o = memory::dim(g.out_channels), c = memory::dim(g.in_channels), groups = memory::dim(g.groups);
    const memory::dim kh = g.kernel_height, kw = g.kernel_width;
    return groups == 1 ? memory::dims{o, c, kh, kw} : memory::dims{groups, o / groups, c / groups, kh, kw};
  }
  memory::desc given_weights() const { return {weight_dims(), dt::s8, g.groups == 1 ? tag::ohwi : tag::gohwi}; }

  // Output rows [r0, r1) of one image, requantized by oneDNN (fused) or as
  // int32 accumulators; empty when oneDNN has no exact kernel for it.
  PrimitiveDesc tile_desc(int64_t r0, int64_t r1, bool fused) const {
    const OneOpenmpThread one_thread;
    const TileRows t = tile_rows(g, r0, r1);
    const memory::dim w = memory::dim(g.in_width);
    const memory::desc src({1, memory::dim(g.in_channels), t.input_rows, w}, dt::u8, tag::nhwc);
    const memory::desc dst({1, memory::dim(g.out_channels), r1 - r0, g.out_width}, fused ? dt::s8 : dt::s32, tag::nhwc);
    const memory::desc weights(weight_dims(), dt::s8, tag::any);
    const memory::dims strides{g.stride_height, g.stride_width};
    const memory::dims dilation{g.dilation_height - 1, g.dilation_width - 1};
    const memory::dims pad_l{t.pad_top, g.padding_width}, pad_r{t.pad_bottom, g.padding_width};
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // each tile its own: runs may be concurrent
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto direct = dnnl::algorithm::convolution_direct;
    if (!fused) {
      const dnnl::convolution_forward::desc desc(kind, direct, src, weights, dst, strides, dilation, pad_l, pad_r);
      PrimitiveDesc pd(desc, attr, cpu_engine());
      return exact_implementation(pd, input_kind) ? pd : PrimitiveDesc();
    }
    attr.set_output_scales(1 << 1, scales);
    dnnl::post_ops post;  // XNNPACK's order: clamp, round half to even, add the zero point
    post.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, float(min - zero_point), float(max - zero_point));
    post.append_eltwise(1.0f, dnnl::algorithm::eltwise_round, 0.0f, 0.0f);
    post.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, float(zero_point));
    attr.set_post_ops(post);
    const memory::desc bias_desc({memory::dim(g.out_channels)}, dt::s32, tag::x);
    const dnnl::convolution_forward::desc desc(kind, direct, src, weights, bias_desc, dst, strides, dilation, pad_l,
                                               pad_r);
    PrimitiveDesc pd(desc, attr, cpu_engine());
    return exact_implementation(pd, input_kind) ? pd : PrimitiveDesc();
  }
};

namespace {

// The int32 form of output rows [r0, r1) of one image.
struct Block {
  int64_t r0 = 0, r1 = 0;
  dnnl::convolution_forward convolution;
  memory input, weights, accumulators, scratchpad;
};

// Output rows [r0, r1) of one image, on one thread of the pool.
struct Tile {
  int64_t image = 0, r0 = 0, r1 = 0;
  dnnl::convolution_forward convolution;
  memory input, weights, output, scratchpad;  // the fused form's
  dnnl::stream stream;
  // The int32 form, block by block (its accumulators made on first use).
  std::vector<Block> blocks;
  std::vector<int32_t> accumulators;
  CorrectionScratch correction;
};

}  // namespace

struct OnednnRunState {
  uint32_t threads = 0;  // what the tiles were made for; 0: not made yet
  std::vector<uint8_t> input;  // uint8(value clamped into the window - window_start)
  int8_t window_start = 0;     // the last run's (its bytes likely the next's)
  memory zero_point;           // the input's zero point in the uint8 copy
  std::vector<ByteRange> block_ranges;
  // After a 7-bit kernel declined an input, runs left to XNNPACK before it
  // looks again (an input too wide is likely followed by more: 8-bit
  // activations), and how many the next decline leaves (doubling to 64).
  uint32_t runs_to_skip = 0, next_skip = 1;
  std::vector<std::size_t> outside;  // this run's input elements outside the window
  std::vector<std::size_t> pixels;   // the output pixels they reach, computed again
  bool pixels_to_xnnpack = false;    // by XNNPACK (else by compute_pixels())
  bool accumulating = false;         // this run writes int32 accumulators and corrects them
  PixelScratch scratch;
  std::vector<Tile> tiles;
};

void OnednnRunStateDeleter::operator()(OnednnRunState* state) const { delete state; }

namespace {

// The layer's weights in the layout `pd`'s kernel wants.
template <typename Layer>
memory reordered_weights(const Layer& l, const PrimitiveDesc& pd) {
  const dnnl::engine& engine = cpu_engine();
  memory given(l.given_weights(), engine, const_cast<int8_t*>(l.weights));
  memory weights(pd.weights_desc(), engine);
  dnnl::stream stream(engine);
  dnnl::reorder(given, weights).execute(stream, given, weights);
  stream.wait();
  return weights;
}

}  // namespace

OnednnConvolution::OnednnConvolution(std::unique_ptr<Layer> layer) : layer_(std::move(layer)) {}
OnednnConvolution::~OnednnConvolution() = default;

// oneDNN's reordered weights and workspace (and the 7-bit kernels' weights
// by tap) are within the kernel memory limit (common/memory_limit.h), or
// XNNPACK runs the layer (its own buffers were checked when the kernel was
// prepared).
template <typename Layer>
bool within_memory_limit(const Layer& l, const PrimitiveDesc& pd) {
  RequestBytes buffers = RequestBytes(pd.weights_desc().get_size()) + pd.scratchpad_desc().get_size();
  if (l.input_kind == ExactInput::seven_bits)
    buffers = buffers + RequestBytes(l.g.out_channels) * l.g.kernel_height * l.g.kernel_width *
                            (l.g.in_channels / l.g.groups);
  return buffers.bytes() <= kernels::detail::kernel_memory_limit();
}

// Where a fused 7-bit kernel's int32 form is faster than XNNPACK on runs
// with many bytes beyond the window (measured on ResNet18 and MobileNetV2
// with AVX2): kernels larger than 1x1, pointwise ones with at least 32
// output channels (with fewer, requantizing and correcting the
// accumulators costs more than oneDNN saves).
bool int32_form_pays_off(const ConvolutionGeometry& g) {
  return g.kernel_height * g.kernel_width > 1 || g.out_channels >= 32;
}

// A pointwise layer's image as one pixel a row (the same pixels in the same
// order), so that tiles split its pixels evenly: a 7x7 image's 49 pixels
// into 25 and 24 on two threads, where its rows split 4 against 3.
ConvolutionGeometry as_pixel_rows(ConvolutionGeometry g) {
  g.in_height = g.in_height * g.in_width;
  g.out_height = g.out_height * g.out_width;
  g.in_width = 1;
  g.out_width = 1;
  return g;
}

// Pointwise layers with at least 32 output channels: the pixels that read
// bytes beyond the window can be gathered and handed to XNNPACK
// (OnednnOutcome::ran_but_pixels), which computes them exactly at its own
// speed, far faster than compute_pixels().
bool pixels_to_xnnpack(const ConvolutionGeometry& g) { return g.out_channels >= 32 && is_pointwise(g); }

// The layer's int32 form, where oneDNN has one within the memory limit
// (else its runs with many bytes beyond the window run on XNNPACK).
// Blocks of about 256 KiB of accumulators: half a core's L2 cache on
// the machines measured, the other half for the input and weights.
template <typename Layer>
bool add_int32_form(Layer& l) {
  const std::size_t row_bytes = std::size_t(l.g.out_width) * l.g.out_channels * sizeof(int32_t);
  l.block_rows = std::clamp<int64_t>(int64_t((std::size_t(256) << 10) / row_bytes), 1, l.g.out_height);
  const PrimitiveDesc pd = l.tile_desc(0, l.block_rows, false);
  if (!pd || !within_memory_limit(l, pd)) return false;
  l.int32_weights = l.whole_weights && pd.weights_desc() == l.whole_weights.get_desc() ? l.whole_weights
                                                                                      : reordered_weights(l, pd);
  return true;
}

// Where oneDNN's 7-bit kernels are faster than XNNPACK's (measured on
// MobileNetV2 and ResNet18 with AVX2, converting the input each run): dense
// convolutions; its depthwise ones are slower.
bool seven_bit_kernel_pays_off(const ConvolutionGeometry& g) { return g.groups == 1; }

std::unique_ptr<OnednnConvolution> OnednnConvolution::create(const ConvolutionState& s) {
  const ExactInput input_kind = exact_input();
  if (input_kind == ExactInput::none ||
      (input_kind == ExactInput::seven_bits && !seven_bit_kernel_pays_off(s.geometry)))
    return nullptr;
  auto layer = std::make_unique<Layer>();
  Layer& l = *layer;
  l.input_kind = input_kind;
  l.g = is_pointwise(s.geometry) ? as_pixel_rows(s.geometry) : s.geometry;
  l.weights = s.weights.data();
  l.bias = s.bias;
  l.scales.resize(l.g.out_channels);
  for (std::size_t c = 0; c < l.g.out_channels; ++c)  // as XNNPACK computes them
    l.scales[c] = s.input.scale * s.weight_scales[c] / s.output.q.scale;
  l.zero_point = s.output.q.zero_point, l.min = s.output.min, l.max = s.output.max;
  l.input_zero_point = int8_t(s.input.zero_point);
  try {
    const OneOpenmpThread one_thread;
    l.bias_memory = memory({{memory::dim(l.g.out_channels)}, dt::s32, tag::x}, cpu_engine(), l.bias.data());
    if (input_kind == ExactInput::seven_bits) l.weights_by_tap = weights_by_tap(l.g, l.weights);
    const PrimitiveDesc pd = fusable(s) ? l.tile_desc(0, l.g.out_height, true) : PrimitiveDesc();
    if (pd && within_memory_limit(l, pd)) {
      l.fused = true;
      l.whole = dnnl::convolution_forward(pd);
      l.whole_weights = reordered_weights(l, pd);
      if (input_kind == ExactInput::seven_bits && int32_form_pays_off(l.g)) add_int32_form(l);
      return std::unique_ptr<OnednnConvolution>(new OnednnConvolution(std::move(layer)));
    }
    if (accumulators_pay_off(l.g) && add_int32_form(l))
      return std::unique_ptr<OnednnConvolution>(new OnednnConvolution(std::move(layer)));
  } catch (const dnnl::error&) {
  }
  return nullptr;  // XNNPACK runs it
}

bool OnednnConvolution::seven_bit_input() const { return layer_->input_kind == ExactInput::seven_bits; }

OnednnRunStateHandle OnednnConvolution::instantiate() const {
  auto state = OnednnRunStateHandle(new OnednnRunState);
  // Where a ReLU's output starts: at the zero point.
  state->window_start = layer_->input_kind == ExactInput::any ? INT8_MIN : layer_->input_zero_point;
  return state;
}

namespace {

// The weights in the layout `pd` wants: the layer's own, one a block made
// before wants too, or reordered.
template <typename Layer>
memory weights_for(const Layer& l, const PrimitiveDesc& pd, const std::vector<Tile>& tiles,
                   const std::vector<Block>& blocks) {
  for (const memory& made : {l.whole_weights, l.int32_weights})
    if (made && made.get_desc() == pd.weights_desc()) return made;
  for (const Tile& tile : tiles) {
    if (tile.weights && tile.weights.get_desc() == pd.weights_desc()) return tile.weights;
    for (const Block& block : tile.blocks)
      if (block.weights.get_desc() == pd.weights_desc()) return block.weights;
  }
  for (const Block& block : blocks)
    if (block.weights.get_desc() == pd.weights_desc()) return block.weights;
  return reordered_weights(l, pd);
}

// The tile's int32 form, in blocks of the layer's block_rows.
template <typename Layer>
void add_blocks(const Layer& l, const std::vector<Tile>& tiles, const uint8_t* image_input, Tile& tile) {
  const std::size_t input_row = l.g.in_width * l.g.in_channels;
  for (int64_t r0 = tile.r0; r0 < tile.r1; r0 += l.block_rows) {
    Block block;
    block.r0 = r0, block.r1 = std::min(tile.r1, r0 + l.block_rows);
    const PrimitiveDesc pd = l.tile_desc(block.r0, block.r1, false);
    if (!pd) throw dnnl::error(dnnl_unimplemented, "no exact int8 kernel for a block of the output rows");
    block.convolution = dnnl::convolution_forward(pd);  // oneDNN's cache: one kernel for blocks of one shape
    const std::size_t first = std::size_t(tile_rows(l.g, block.r0, block.r1).first_input) * input_row;
    block.input = memory(pd.src_desc(), cpu_engine(), const_cast<uint8_t*>(image_input) + first);
    block.weights = weights_for(l, pd, tiles, tile.blocks);
    block.accumulators = memory(pd.dst_desc(), cpu_engine(), nullptr);
    block.scratchpad = memory(pd.scratchpad_desc(), cpu_engine());
    tile.blocks.push_back(std::move(block));
  }
}

// Makes the run state's tiles for `threads`: each image's output rows split
// into up to `threads` tiles. A tile of a whole image runs the layer's own
// fused convolution; the others, and the int32 form's blocks, share the
// weights of any made before whose kernel wants the same layout (else
// reorder them once per layout).
template <typename Layer>
void make_tiles(const Layer& l, OnednnRunState& r, uint32_t threads, std::size_t input_bytes) {
  const OneOpenmpThread one_thread;
  const dnnl::engine& engine = cpu_engine();
  r.tiles.clear();
  r.input.assign(input_bytes, 0);
  r.zero_point = memory({{1}, dt::s32, tag::x}, engine);
  const int64_t images = int64_t(l.g.batch);
  const int64_t per_image = std::clamp<int64_t>((int64_t(threads) + images - 1) / images, 1, l.g.out_height);
  const std::size_t input_image = l.g.in_height * l.g.in_width * l.g.in_channels;
  const std::size_t input_row = l.g.in_width * l.g.in_channels;
  for (int64_t image = 0; image < images; ++image) {
    for (int64_t i = 0; i < per_image; ++i) {
      const int64_t r0 = l.g.out_height * i / per_image, r1 = l.g.out_height * (i + 1) / per_image;
      Tile tile;
      tile.image = image, tile.r0 = r0, tile.r1 = r1;
      tile.stream = dnnl::stream(engine);
      const uint8_t* image_input = r.input.data() + std::size_t(image) * input_image;
      if (l.fused) {
        const PrimitiveDesc pd = l.tile_desc(r0, r1, true);
        if (!pd) throw dnnl::error(dnnl_unimplemented, "no exact int8 kernel for a tile of the output rows");
        tile.convolution = per_image == 1 ? l.whole : dnnl::convolution_forward(pd);
        const std::size_t first = std::size_t(tile_rows(l.g, r0, r1).first_input) * input_row;
        tile.input = memory(pd.src_desc(), engine, const_cast<uint8_t*>(image_input) + first);
        tile.weights = weights_for(l, pd, r.tiles, {});
        tile.output = memory(pd.dst_desc(), engine, nullptr);
        tile.scratchpad = memory(pd.scratchpad_desc(), engine);
      }
      if (l.int32_weights) add_blocks(l, r.tiles, image_input, tile);
      r.tiles.push_back(std::move(tile));
    }
  }
  r.threads = threads;
}

// The top of the window starting at `start`: 128 values for 7-bit
// kernels, all up to 127 for the others.
int8_t window_top(ExactInput input_kind, int8_t start) {
  return input_kind == ExactInput::seven_bits ? int8_t(std::min(127, start + 127)) : int8_t(127);
}

// Writes r.input from input clamped into the window at r.window_start, in
// blocks, one per thread of the pool; returns the range of the input's bytes.
ByteRange shift_input(ExactInput input_kind, const int8_t* input, OnednnRunState& r, const RunEnvironment& env) {
  struct Blocks {
    const int8_t* in;
    uint8_t* out;
    ByteRange* ranges;
    std::size_t bytes, block;
    int8_t start, top;
  } blocks{input, r.input.data(), nullptr, r.input.size(),
           (r.input.size() / std::max<uint32_t>(env.thread_count, 1) + 63) / 64 * 64, r.window_start,
           window_top(input_kind, r.window_start)};
  const std::size_t count = (blocks.bytes + blocks.block - 1) / blocks.block;
  r.block_ranges.assign(count, ByteRange{});
  blocks.ranges = r.block_ranges.data();
  auto shift = [](void* context, std::size_t i) {
    const auto& b = *static_cast<const Blocks*>(context);
    const std::size_t begin = i * b.block, end = std::min(b.bytes, begin + b.block);
    b.ranges[i] = shift_bytes(b.in + begin, b.out + begin, end - begin, b.start, b.top);
  };
  if (count <= 1 || env.threadpool == nullptr) {
    for (std::size_t i = 0; i < count; ++i) shift(&blocks, i);
  } else {
    pthreadpool_parallelize_1d(static_cast<pthreadpool_t>(env.threadpool), shift, &blocks, count, 0);
  }
  ByteRange range;
  for (const ByteRange& block : r.block_ranges) range.add(block);
  return range;
}

// The zero point of the uint8 copy; true.
template <typename Layer>
bool set_zero_point(const Layer& l, OnednnRunState& r) {
  *static_cast<int32_t*>(r.zero_point.get_data_handle()) = int32_t(l.input_zero_point) - int32_t(r.window_start);
  return true;
}

// Where a 7-bit window starts when the input's bytes fit none: at the
// zero point for a ReLU's output (nothing lies below it), else 64 below it,
// where a signed activation's bytes gather.
int8_t window_start_for(ByteRange range, int8_t zero_point) {
  if (int(range.max) - int(range.min) <= 127) return range.min;
  return int8_t(std::clamp(int(zero_point) - 64, int(range.min), int(range.max) - 127));
}

// Bytes beyond the window are corrected in the int32 accumulators up to
// the layer's products / correction_share(): each costs kH * kW / strides
// * O / groups multiply-adds, about ten times what XNNPACK pays for as
// many in the layer (one byte at a time), against oneDNN's saving over
// XNNPACK: about three fifths of a stem (7x7, or few input channels), a
// third of a 3x3 layer and of a pointwise one with many output channels
// (measured on ResNet18 and MobileNetV2 with AVX2, activations over 256
// values).
std::size_t correction_share(const ConvolutionGeometry& g) {
  const std::size_t taps = std::size_t(g.kernel_height) * g.kernel_width;
  if (taps >= 25 || g.in_channels / g.groups <= 4) return 16;
  return taps > 1 ? 40 : 32;
}
// Below output pixels / kFewPixels, computing the pixels the bytes reach
// again costs less than the int32 form's accumulators and corrections.
constexpr std::size_t kFewPixels = 64;

// The run's input as the uint8 bytes the kernel reads, and their zero
// point. A 7-bit kernel reads a window of 128 values: the last run's while
// this run's bytes fit it (one pass), else window_start_for()'s. Bytes
// outside it are clamped into it and listed in r.outside: the output
// pixels they reach are computed again (r.pixels) after a kernel that
// requantizes itself, where few; else the int32 accumulators are
// corrected (r.accumulating), for a layer with that form. False (XNNPACK
// runs the layer) where that would cost more than oneDNN saves: pixels
// beyond an eighth of the output, corrections beyond the products /
// correction_share().
template <typename Layer>
bool take_input(const Layer& l, OnednnRunState& r, const int8_t* input, const RunEnvironment& env) {
  const ConvolutionGeometry& g = l.g;
  r.pixels.clear();
  r.pixels_to_xnnpack = false;
  r.outside.clear();
  r.accumulating = !l.fused;
  const ByteRange range = shift_input(l.input_kind, input, r, env);
  if (range.within(r.window_start, window_top(l.input_kind, r.window_start))) return set_zero_point(l, r);
  const int8_t start = window_start_for(range, l.input_zero_point);
  if (start != r.window_start) {
    r.window_start = start;
    shift_input(l.input_kind, input, r, env);
  }
  const std::size_t output_pixels = g.batch * std::size_t(g.out_height) * std::size_t(g.out_width);
  // A byte meets kH * kW / strides weights of each output of its group: as
  // many products as an output pixel holds in channels / groups * strides bytes.
  const bool correctable = bool(l.int32_weights);
  const std::size_t corrections =
      correctable ? output_pixels * (g.in_channels / g.groups) * g.stride_height * g.stride_width / correction_share(g)
                  : 0;
  const bool gather = l.fused && pixels_to_xnnpack(g);
  // XNNPACK's share of the layer, which oneDNN runs 1.5 to 1.8 times as fast (MobileNetV2's pointwise layers)
  const std::size_t gathered = output_pixels / 4;
  const std::size_t limit =
      std::max({l.fused ? output_pixels / 8 : 0, corrections, gather ? gathered * g.in_channels : 0});
  if (!find_outside(input, r.input.size(), r.window_start, window_top(l.input_kind, r.window_start), limit,
                    r.outside))
    return false;
  if (!l.fused) return set_zero_point(l, r);
  const std::size_t reach = r.outside.size() * g.kernel_height * g.kernel_width;
  if (gather || !correctable || reach <= output_pixels / kFewPixels) {
    pixels_reading(g, r.outside, r.pixels);
    r.pixels_to_xnnpack = gather;
    if (r.pixels.size() <= (gather ? gathered : output_pixels / 8)) return set_zero_point(l, r);
    r.pixels.clear();
    r.pixels_to_xnnpack = false;
  }
  if (!correctable || r.outside.size() > corrections) return false;
  r.accumulating = true;
  return set_zero_point(l, r);
}

}  // namespace

OnednnOutcome OnednnConvolution::run(KernelContext& ctx, const char* op, OnednnRunState& r,
                                     const RunEnvironment& env, const int8_t* input, int8_t* out) const {
  const Layer& l = *layer_;
  if (r.runs_to_skip > 0) {
    --r.runs_to_skip;
    return OnednnOutcome::declined;
  }
  const std::size_t input_bytes = l.g.batch * l.g.in_height * l.g.in_width * l.g.in_channels;
  try {
    if (r.threads != env.thread_count) make_tiles(l, r, env.thread_count, input_bytes);
  } catch (const std::exception& e) {
    r.threads = 0;
    fail(ctx, op, "oneDNN could not make the run state's convolution: {}", e.what());
    return OnednnOutcome::failed;
  }
  if (!take_input(l, r, input, env)) {
    r.runs_to_skip = r.next_skip;
    r.next_skip = std::min<uint32_t>(2 * r.next_skip, 64);
    return OnednnOutcome::declined;
  }
  r.next_skip = 1;

  struct Task {
    Task(const Layer& layer, OnednnRunState& state, const int8_t* in, int8_t* output)
        : l(layer), r(state), input(in), out(output) {}
    const Layer& l;
    OnednnRunState& r;
    const int8_t* input;
    int8_t* out;
    std::atomic<bool> failed{false};
    std::once_flag first;
    std::string error;
    void operator()(std::size_t i) {
      Tile& t = r.tiles[i];
      const std::size_t row = std::size_t(l.g.out_width) * l.g.out_channels;
      int8_t* tile_out = out + (std::size_t(t.image) * std::size_t(l.g.out_height) + std::size_t(t.r0)) * row;
      const OneOpenmpThread one_thread;
      try {
        if (!r.accumulating) {
          t.output.set_data_handle(tile_out);
          execute(t.convolution, t.input, t.weights, t.output, t.scratchpad, t.stream);
          return;
        }
        // A fused layer's run with many bytes beyond the window, or an unfused layer: the int32 form, block
        // by block, each block's rows corrected while in cache, then requantized.
        t.accumulators.resize(std::size_t(l.block_rows) * row);
        const ClampedBytes clamped{input, r.outside, r.window_start, window_top(l.input_kind, r.window_start)};
        const Requantization q{l.bias.data(), l.scales.data(), l.zero_point, l.min, l.max};
        for (Block& b : t.blocks) {
          b.accumulators.set_data_handle(t.accumulators.data());
          execute(b.convolution, b.input, b.weights, b.accumulators, b.scratchpad, t.stream);
          if (!r.outside.empty())
            correct_accumulators(l.g, l.weights_by_tap.data(), clamped, std::size_t(t.image), b.r0, b.r1 - b.r0,
                                 t.correction, t.accumulators.data());
          requantize(t.accumulators.data(), std::size_t(b.r1 - b.r0) * l.g.out_width, l.g.out_channels, q,
                     tile_out + std::size_t(b.r0 - t.r0) * row, l.g.out_channels);
        }
      } catch (const std::exception& e) {
        std::call_once(first, [&] { error = e.what(); });
        failed = true;
      }
    }
    void execute(dnnl::convolution_forward& convolution, const memory& in, const memory& weights,
                 const memory& dst, const memory& scratchpad, dnnl::stream& stream) {
      convolution.execute(stream, {{DNNL_ARG_SRC, in},
                                   {DNNL_ARG_WEIGHTS, weights},
                                   {DNNL_ARG_BIAS, l.bias_memory},
                                   {DNNL_ARG_DST, dst},
                                   {DNNL_ARG_SCRATCHPAD, scratchpad},
                                   {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, r.zero_point}});
      stream.wait();
    }
  } task(l, r, input, out);
  if (r.tiles.size() == 1) {
    task(0);
  } else {
    pthreadpool_parallelize_1d(
        static_cast<pthreadpool_t>(env.threadpool), [](void* t, std::size_t i) { (*static_cast<Task*>(t))(i); },
        &task, r.tiles.size(), 0);
  }
  if (task.failed) {
    fail(ctx, op, "oneDNN convolution failed: {}", task.error);
    return OnednnOutcome::failed;
  }
  if (r.pixels_to_xnnpack && !r.pixels.empty()) return OnednnOutcome::ran_but_pixels;
  const Requantization q{l.bias.data(), l.scales.data(), l.zero_point, l.min, l.max};
  compute_pixels(l.g, l.weights, l.input_zero_point, q, input, r.pixels, r.scratch, out);
  return OnednnOutcome::ran;
}

const std::vector<std::size_t>& OnednnConvolution::pixels_left(const OnednnRunState& r) const {
  return r.pixels;
}

}  // namespace et_ops::kernels::xnnpack::detail
