// A C++ application that classifies a batch of digits with et_ops:
//   classify PROGRAM.etp IMAGES.npy LABELS.npy [THREADS]
// IMAGES.npy stacks the images along a new first dimension (shape
// [N, ...the program's input shape]); LABELS.npy gets the digit each image
// scored highest (int64 [N]). Prints the median time per image.
#include <et_ops/kernels/portable.h>
#include <et_ops/kernels/quantized.h>
#include <et_ops/kernels/xnnpack.h>
#include <et_ops/npy.h>
#include <et_ops/program.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

namespace {

// Empty when `images` is a batch of the program's input; else what is wrong.
std::string check_batch(const et_ops::NpyArray& images, const et_ops::TensorSpec& input) {
  const std::vector<int64_t>& shape = images.shape;
  if (images.dtype != input.dtype) return "the images' dtype is not the program input's";
  if (shape.size() != input.sizes.size() + 1 || shape[0] < 1 ||
      !std::equal(input.sizes.begin(), input.sizes.end(), shape.begin() + 1))
    return "the images are not a batch [N, ...] of the program's input";
  return {};
}

// The index of the largest of the output's scores.
int64_t best_score(et_ops::TensorRef scores) {
  const float* s = scores.data_as<float>();
  return std::max_element(s, s + scores.numel()) - s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: " << argv[0] << " PROGRAM.etp IMAGES.npy LABELS.npy [THREADS]\n";
    return 2;
  }
  for (auto result : {et_ops::kernels::portable::register_kernels(), et_ops::kernels::quantized::register_kernels(),
                      et_ops::kernels::xnnpack::register_kernels()})
    if (!result) return std::cerr << result.status().message() << "\n", 1;

  et_ops::LoadResult loaded = et_ops::Program::load(argv[1]);
  if (!loaded) return std::cerr << loaded.status().message() << "\n", 1;
  const et_ops::Program& program = **loaded;
  if (program.output_count() != 1 || program.output_spec(0).dtype != et_ops::DType::Float32)
    return std::cerr << argv[1] << ": expected one float32 output, the scores\n", 1;

  const et_ops::Result<et_ops::NpyArray> read = et_ops::read_npy(argv[2]);
  if (!read) return std::cerr << read.status().message() << "\n", 1;
  const et_ops::NpyArray& images = *read;
  if (std::string error = check_batch(images, program.input_spec(0)); !error.empty())
    return std::cerr << argv[2] << ": " << error << "\n", 1;

  et_ops::Result<et_ops::RunState> state = program.make_state();
  if (!state) return std::cerr << state.status().message() << "\n", 1;
  const std::size_t threads = argc == 5 ? std::strtoul(argv[4], nullptr, 10) : 1;
  if (et_ops::Status threaded = state->set_threads(threads); !threaded)
    return std::cerr << "THREADS: " << threaded.message() << "\n", 1;
  const int64_t count = images.shape[0];
  const std::size_t image_bytes = program.input_spec(0).nbytes();
  std::vector<int64_t> labels;
  std::vector<double> microseconds;
  for (int64_t i = 0; i < count; ++i) {
    if (et_ops::Status set = state->set_input(0, images.data.data() + i * image_bytes, image_bytes); !set)
      return std::cerr << set.message() << "\n", 1;
    const auto start = std::chrono::steady_clock::now();
    et_ops::RunResult run = program.run(*state);
    microseconds.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
    if (!run) return std::cerr << run.message() << "\n", 1;
    labels.push_back(best_score(state->output(0)));
  }

  if (et_ops::Status written = et_ops::write_npy(argv[3], et_ops::Tensor(et_ops::DType::Int64, labels.data(), {count}));
      !written)
    return std::cerr << written.message() << "\n", 1;
  std::nth_element(microseconds.begin(), microseconds.begin() + count / 2, microseconds.end());
  std::cout << "classified " << count << " images with " << program.name() << ": median "
            << microseconds[count / 2] << " us per image; wrote " << argv[3] << "\n";
  return 0;
}
