// The float32 convolution (aten::convolution.out) on the layers of ResNet18
// and MobileNetV2 at 224x224, batch 1, one thread, in GFLOP/s, under each
// Highway target this CPU runs (AVX2 is what most users' machines take),
// beside a plain float matmul of the same arithmetic (the weights as an
// [out channels, in channels x kernel] matrix times the [in channels x
// kernel, pixels] patch matrix, already laid out) and the linear layers
// (aten::linear.out) of both classifiers.
//
// A convolution counts 2 * N * C_out * H_out * W_out * (C_in / groups) * kH * kW
// floating-point operations (one multiply and one add per term).
//
// bench/conv_torch.py runs this binary and PyTorch's own float convolution
// and linear on the same shapes (`conv_bench --shapes` prints them) in one
// run and prints them side by side.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "et_ops/kernels/portable.h"

namespace {

namespace portable = et_ops::kernels::portable;
using et_ops::DType;
using et_ops::KernelContext;
using et_ops::Tensor;

struct ConvShape {
  const char* name;
  int64_t in_channels, size, out_channels, kernel, stride, padding, groups;

  int64_t out_size() const { return (size + 2 * padding - kernel) / stride + 1; }
  double flops() const {
    return 2.0 * static_cast<double>(out_channels) * static_cast<double>(out_size() * out_size()) *
           static_cast<double>(in_channels / groups * kernel * kernel);
  }
};

// name, C_in, H = W, C_out, kernel, stride, padding, groups
constexpr ConvShape kConvShapes[] = {
    {"resnet18.conv1", 3, 224, 64, 7, 2, 3, 1},
    {"resnet18.layer1.conv", 64, 56, 64, 3, 1, 1, 1},
    {"resnet18.layer2.0.conv1", 64, 56, 128, 3, 2, 1, 1},
    {"resnet18.layer2.0.downsample", 64, 56, 128, 1, 2, 0, 1},
    {"resnet18.layer2.conv", 128, 28, 128, 3, 1, 1, 1},
    {"resnet18.layer3.0.conv1", 128, 28, 256, 3, 2, 1, 1},
    {"resnet18.layer3.conv", 256, 14, 256, 3, 1, 1, 1},
    {"resnet18.layer4.0.conv1", 256, 14, 512, 3, 2, 1, 1},
    {"resnet18.layer4.conv", 512, 7, 512, 3, 1, 1, 1},
    {"mobilenet_v2.features.0", 3, 224, 32, 3, 2, 1, 1},
    {"mobilenet_v2.features.1.dw", 32, 112, 32, 3, 1, 1, 32},
    {"mobilenet_v2.features.1.project", 32, 112, 16, 1, 1, 0, 1},
    {"mobilenet_v2.features.2.expand", 16, 112, 96, 1, 1, 0, 1},
    {"mobilenet_v2.features.2.dw_s2", 96, 112, 96, 3, 2, 1, 96},
    {"mobilenet_v2.features.3.dw", 144, 56, 144, 3, 1, 1, 144},
    {"mobilenet_v2.features.3.project", 144, 56, 24, 1, 1, 0, 1},
    {"mobilenet_v2.features.4.dw_s2", 144, 56, 144, 3, 2, 1, 144},
    {"mobilenet_v2.features.5.expand", 32, 28, 192, 1, 1, 0, 1},
    {"mobilenet_v2.features.5.dw", 192, 28, 192, 3, 1, 1, 192},
    {"mobilenet_v2.features.8.dw", 384, 14, 384, 3, 1, 1, 384},
    {"mobilenet_v2.features.8.project", 384, 14, 64, 1, 1, 0, 1},
    {"mobilenet_v2.features.15.expand", 160, 7, 960, 1, 1, 0, 1},
    {"mobilenet_v2.features.15.dw", 960, 7, 960, 3, 1, 1, 960},
    {"mobilenet_v2.features.18", 320, 7, 1280, 1, 1, 0, 1},
};

struct LinearShape {
  const char* name;
  int64_t rows, in_features, out_features;
};

constexpr LinearShape kLinearShapes[] = {
    {"resnet18.fc", 1, 512, 1000},
    {"mobilenet_v2.classifier", 1, 1280, 1000},
    {"linear.batch64", 64, 512, 1000},
};

std::vector<float> random_floats(std::size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> out(count);
  for (auto& v : out) v = dist(rng);
  return out;
}

void set_flop_counter(benchmark::State& state, double flops) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// Restricts Highway's dispatch to one target for the duration of a benchmark.
class ForcedTarget {
 public:
  explicit ForcedTarget(int64_t target) { hwy::SetSupportedTargetsForTest(target); }
  ~ForcedTarget() { hwy::SetSupportedTargetsForTest(0); }
  ForcedTarget(const ForcedTarget&) = delete;
  ForcedTarget& operator=(const ForcedTarget&) = delete;
};

void run_convolution(benchmark::State& state, const ConvShape& s, int64_t target) {
  const ForcedTarget forced(target);
  const int64_t out_size = s.out_size();
  auto x = random_floats(static_cast<std::size_t>(s.in_channels * s.size * s.size), 1);
  const int64_t weights = s.out_channels * (s.in_channels / s.groups) * s.kernel * s.kernel;
  auto w = random_floats(static_cast<std::size_t>(weights), 2);
  auto b = random_floats(static_cast<std::size_t>(s.out_channels), 3);
  std::vector<float> out(static_cast<std::size_t>(s.out_channels * out_size * out_size));
  const Tensor input(DType::Float32, x.data(), {1, s.in_channels, s.size, s.size});
  const Tensor weight(DType::Float32, w.data(), {s.out_channels, s.in_channels / s.groups, s.kernel, s.kernel});
  const Tensor bias(DType::Float32, b.data(), {s.out_channels});
  const Tensor output(DType::Float32, out.data(), {1, s.out_channels, out_size, out_size});
  const std::vector<int64_t> stride{s.stride, s.stride}, padding{s.padding, s.padding}, dilation{1, 1}, none{0, 0};
  for (auto _ : state) {
    KernelContext ctx;
    if (!portable::convolution_out(ctx, input.ref(), weight.ref(), bias.ref(), stride, padding, dilation, false,
                                   none, s.groups, output.ref())) {
      state.SkipWithError(std::string(ctx.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_flop_counter(state, s.flops());
}

// The reference: out[m, p] = a[m, n] @ b[n, p] in f32, i-k-j order over
// column blocks that keep a slice of b in cache; the inner loop vectorises
// (with the compiler's baseline vectors: SSE2 here).
void plain_matmul(const float* a, const float* b, float* out, int64_t m, int64_t n, int64_t p) {
  constexpr int64_t kColumnBlock = 256;
  for (int64_t j0 = 0; j0 < p; j0 += kColumnBlock) {
    const int64_t j1 = std::min(j0 + kColumnBlock, p);
    for (int64_t i = 0; i < m; ++i) {
      float* row = out + i * p;
      for (int64_t j = j0; j < j1; ++j) row[j] = 0.0f;
      for (int64_t k = 0; k < n; ++k) {
        const float av = a[i * n + k];
        const float* brow = b + k * p;
        for (int64_t j = j0; j < j1; ++j) row[j] += av * brow[j];
      }
    }
  }
}

// A grouped convolution's arithmetic as one matmul per group.
void run_plain_matmul(benchmark::State& state, const ConvShape& s) {
  const int64_t m = s.out_channels / s.groups;
  const int64_t n = s.in_channels / s.groups * s.kernel * s.kernel;
  const int64_t p = s.out_size() * s.out_size();
  auto a = random_floats(static_cast<std::size_t>(m * n), 1);
  auto b = random_floats(static_cast<std::size_t>(n * p), 2);
  std::vector<float> out(static_cast<std::size_t>(m * p));
  for (auto _ : state) {
    for (int64_t group = 0; group < s.groups; ++group) plain_matmul(a.data(), b.data(), out.data(), m, n, p);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_flop_counter(state, s.flops());
}

void run_linear(benchmark::State& state, const LinearShape& s, int64_t target) {
  const ForcedTarget forced(target);
  auto x = random_floats(static_cast<std::size_t>(s.rows * s.in_features), 1);
  auto w = random_floats(static_cast<std::size_t>(s.out_features * s.in_features), 2);
  auto b = random_floats(static_cast<std::size_t>(s.out_features), 3);
  std::vector<float> out(static_cast<std::size_t>(s.rows * s.out_features));
  const Tensor input(DType::Float32, x.data(), {s.rows, s.in_features});
  const Tensor weight(DType::Float32, w.data(), {s.out_features, s.in_features});
  const Tensor bias(DType::Float32, b.data(), {s.out_features});
  const Tensor output(DType::Float32, out.data(), {s.rows, s.out_features});
  for (auto _ : state) {
    KernelContext ctx;
    if (!portable::linear_out(ctx, input.ref(), weight.ref(), bias.ref(), output.ref())) {
      state.SkipWithError(std::string(ctx.message()).c_str());
      break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_flop_counter(state, 2.0 * static_cast<double>(s.rows * s.in_features * s.out_features));
}

void run_linear_plain_matmul(benchmark::State& state, const LinearShape& s) {
  auto a = random_floats(static_cast<std::size_t>(s.rows * s.in_features), 1);
  auto b = random_floats(static_cast<std::size_t>(s.in_features * s.out_features), 2);
  std::vector<float> out(static_cast<std::size_t>(s.rows * s.out_features));
  for (auto _ : state) {
    plain_matmul(a.data(), b.data(), out.data(), s.rows, s.in_features, s.out_features);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  set_flop_counter(state, 2.0 * static_cast<double>(s.rows * s.in_features * s.out_features));
}

// Benchmarks "<family>/<layer>/<target>" for each Highway target and
// "<family>/<layer>/plain_matmul".
template <typename Shape, typename RunTarget, typename RunPlain>
void register_layer(const char* family, const Shape& s, RunTarget run_target, RunPlain run_plain) {
  const std::string prefix = std::string(family) + "/" + s.name + "/";
  for (int64_t target : hwy::SupportedAndGeneratedTargets())
    benchmark::RegisterBenchmark((prefix + hwy::TargetName(target)).c_str(),
                                 [s, target, run_target](benchmark::State& state) { run_target(state, s, target); })
        ->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark((prefix + "plain_matmul").c_str(),
                               [s, run_plain](benchmark::State& state) { run_plain(state, s); })
      ->Unit(benchmark::kMicrosecond);
}

void register_benchmarks() {
  for (const ConvShape& s : kConvShapes) register_layer("conv", s, run_convolution, run_plain_matmul);
  for (const LinearShape& s : kLinearShapes) register_layer("linear", s, run_linear, run_linear_plain_matmul);
}

// The layer tables as JSON, for bench/conv_torch.py (one list of shapes).
void print_shapes() {
  std::vector<std::string> conv, linear;
  for (const ConvShape& s : kConvShapes)
    conv.push_back(fmt::format(R"({{"name": "{}", "in_channels": {}, "size": {}, "out_channels": {}, "kernel": {}, )"
                               R"("stride": {}, "padding": {}, "groups": {}}})",
                               s.name, s.in_channels, s.size, s.out_channels, s.kernel, s.stride, s.padding,
                               s.groups));
  for (const LinearShape& s : kLinearShapes)
    linear.push_back(fmt::format(R"({{"name": "{}", "rows": {}, "in_features": {}, "out_features": {}}})", s.name,
                                 s.rows, s.in_features, s.out_features));
  fmt::print(R"({{"conv": [{}], "linear": [{}]}})"
             "\n",
             fmt::join(conv, ", "), fmt::join(linear, ", "));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--shapes") {
    print_shapes();
    return 0;
  }
  register_benchmarks();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
