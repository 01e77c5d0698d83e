// The int8 convolutions and linears of ResNet18 and MobileNetV2 (224x224,
// batch 1) on the candidate engines for the optimized kernel set, measured in
// one run: XNNPACK's qs8 / qc8 / qu8 NHWC convolutions and oneDNN's u8 x s8
// convolution (NHWC, and in the blocked layout it prefers), one thread and
// two; the per-run xnn_setup cost; and the layout and quantize conversions a
// program would pay around int8 layers. int8_engines_torch.py runs this with
// PyTorch's quantized engines beside it and prints the tables.
//
//   int8_engines_bench [--isa=avx2] [--dump=DIR | --list-layers] [benchmark flags]
//
// --isa=avx2 caps both engines at AVX2 (what users' machines have): oneDNN
// through set_max_cpu_isa, XNNPACK by clearing cpuinfo's AVX-512 flags
// before it picks its microkernels. --dump=DIR writes operands and outputs
// for the bitwise comparison with PyTorch instead of timing.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "int8_engines/dump.h"
#include "int8_engines/layers.h"
#include "int8_engines/onednn.h"
#include "int8_engines/xnnpack.h"

namespace {

using namespace int8_engines;

// One pthreadpool per thread count; none for one thread (XNNPACK then runs
// on the calling thread).
pthreadpool_t pool_for(int threads) {
  static pthreadpool_t two = pthreadpool_create(2);
  return threads == 1 ? nullptr : two;
}

void count_ops(benchmark::State& state, const Layer& layer) {
  state.counters["GOP/s"] = benchmark::Counter(2e-9 * double(layer.macs()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["count"] = layer.count;
}

void xnnpack_conv(benchmark::State& state, const Layer& layer, XnnpackType type, int threads) {
  const WeightScales scales = type == XnnpackType::kQc8 ? WeightScales::kPerChannel : WeightScales::kPerTensor;
  XnnpackConv conv(layer, make_layer_data(layer, scales), type, pool_for(threads));
  for (auto _ : state) conv.run();
  count_ops(state, layer);
}

// What a run pays when the operator is rebound to other activation buffers
// every run (the indirection buffer is rebuilt each time).
void xnnpack_setup(benchmark::State& state, const Layer& layer) {
  XnnpackConv conv(layer, make_layer_data(layer, WeightScales::kPerTensor), XnnpackType::kQs8, nullptr);
  bool other = false;
  for (auto _ : state) conv.setup(other = !other);
}

void onednn_conv(benchmark::State& state, const Layer& layer, OnednnLayout layout, int threads) {
  onednn_set_threads(threads);
  {
    OnednnConv conv(layer, make_layer_data(layer, WeightScales::kPerChannel), layout);
    for (auto _ : state) conv.run();
    state.SetLabel(conv.implementation());
  }
  onednn_set_threads(1);
  count_ops(state, layer);
}

void register_convolutions() {
  for (const Layer& layer : layers()) {
    for (XnnpackType type : {XnnpackType::kQs8, XnnpackType::kQc8, XnnpackType::kQu8})
      for (int threads : {1, 2})
        if (threads == 1 || type == XnnpackType::kQs8)
          benchmark::RegisterBenchmark(
              fmt::format("conv/xnnpack_{}/threads:{}/{}", name_of(type), threads, layer.id()).c_str(),
              [&layer, type, threads](benchmark::State& s) { xnnpack_conv(s, layer, type, threads); })
              ->UseRealTime();
    for (OnednnLayout layout : {OnednnLayout::kNhwc, OnednnLayout::kBlocked})
      for (int threads : {1, 2})
        if (threads == 1 || layout == OnednnLayout::kNhwc)
          benchmark::RegisterBenchmark(
              fmt::format("conv/onednn_{}/threads:{}/{}", name_of(layout), threads, layer.id()).c_str(),
              [&layer, layout, threads](benchmark::State& s) { onednn_conv(s, layer, layout, threads); })
              ->UseRealTime();
    benchmark::RegisterBenchmark(fmt::format("setup/xnnpack_qs8/{}", layer.id()).c_str(),
                                 [&layer](benchmark::State& s) { xnnpack_setup(s, layer); })
        ->UseRealTime();
  }
}

// Each distinct activation (the input and output of every layer), named
// CxHxW, converted by every way a program could need.
template <typename Convert>
void register_layout(const std::string& name, std::size_t elements, Convert convert) {
  benchmark::RegisterBenchmark(name.c_str(),
                               [=](benchmark::State& state) {
                                 auto run = convert();
                                 for (auto _ : state) run();
                                 state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * elements));
                               })
      ->UseRealTime();
}

void register_layouts() {
  std::set<std::tuple<int, int>> shapes;  // (channels, size)
  for (const Layer& layer : layers()) {
    shapes.insert({layer.in_channels, layer.in_size});
    shapes.insert({layer.out_channels, layer.out_size()});
  }
  for (const auto& [c, size] : shapes) {
    const int pixels = size * size;
    const std::size_t n = std::size_t(c) * pixels;
    const std::string shape = fmt::format("{}x{}x{}", c, size, size);
    using Transpose = void (*)(const uint8_t*, uint8_t*, int, int);
    for (auto [name, transpose] : {std::pair<const char*, Transpose>{"nchw_to_nhwc", nchw_to_nhwc},
                                   std::pair<const char*, Transpose>{"nhwc_to_nchw", nhwc_to_nchw}})
      register_layout(fmt::format("layout/transpose_u8_{}/{}", name, shape), n, [=, t = transpose] {
        auto buffers = std::make_shared<std::vector<uint8_t>>(2 * n, 1);
        return [=] {
          t(buffers->data(), buffers->data() + n, c, pixels);
          benchmark::DoNotOptimize(buffers->data());
        };
      });
    for (bool to_float : {false, true}) {
      register_layout(
          fmt::format("layout/onednn_{}/{}", to_float ? "u8_nhwc_to_f32_nchw" : "f32_nchw_to_u8_nhwc", shape), n,
          [=] {
            auto reorder = std::make_shared<OnednnReorder>(c, size, size, to_float);
            return [=] { reorder->run(); };
          });
      register_layout(fmt::format("layout/xnnpack_{}/{}", to_float ? "qs8_to_f32_nhwc" : "f32_to_qs8_nhwc", shape),
                      n, [=] {
                        auto convert = std::make_shared<XnnpackConvert>(c, pixels, to_float, nullptr);
                        return [=] { convert->run(); };
                      });
    }
  }
}

// Takes our own flags out of argv before Google Benchmark sees it.
std::string take_flag(int& argc, char** argv, const std::string& name) {
  const std::string prefix = "--" + name;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == prefix || arg.rfind(prefix + "=", 0) == 0) {
      std::memmove(argv + i, argv + i + 1, sizeof(char*) * std::size_t(argc - i));
      --argc;
      return arg == prefix ? "1" : arg.substr(prefix.size() + 1);
    }
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  const std::string isa = take_flag(argc, argv, "isa");
  const std::string dump = take_flag(argc, argv, "dump");
  const bool list_layers = !take_flag(argc, argv, "list-layers").empty();
  if (!isa.empty() && isa != "avx2" && isa != "native") {
    fmt::print(stderr, "--isa must be avx2 or native, not {}\n", isa);
    return 2;
  }
  if (list_layers) {
    print_layers();
    return 0;
  }
  const bool avx2_only = isa == "avx2";
  xnnpack_initialize(avx2_only);
  onednn_initialize(avx2_only);
  onednn_set_threads(1);
  if (!dump.empty()) return dump_outputs(dump) ? 0 : 1;

  benchmark::AddCustomContext("isa", avx2_only ? "avx2" : "native");
  benchmark::AddCustomContext("onednn_isa", onednn_isa());
  register_convolutions();
  register_layouts();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
