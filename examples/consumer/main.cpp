// A C++ application that runs a quantized program with et_ops:
//   consumer PROGRAM.etp INPUT.npy OUTPUT.npy
#include <et_ops/kernels/portable.h>
#include <et_ops/kernels/quantized.h>
#include <et_ops/npy.h>
#include <et_ops/program.h>

#include <iostream>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::cerr << "usage: " << argv[0] << " PROGRAM.etp INPUT.npy OUTPUT.npy\n";
    return 2;
  }
  for (auto result : {et_ops::kernels::portable::register_kernels(), et_ops::kernels::quantized::register_kernels()})
    if (!result) return std::cerr << result.message(), 1;

  et_ops::LoadResult loaded = et_ops::Program::load(argv[1]);
  if (!loaded) return std::cerr << loaded.error << "\n", 1;

  et_ops::NpyArray input = et_ops::read_npy(argv[2]);
  if (!input.ok()) return std::cerr << input.error << "\n", 1;
  auto state = loaded.program->make_state();
  std::string error;
  if (!state->set_input(0, input.data.data(), input.data.size(), &error)) return std::cerr << error << "\n", 1;

  et_ops::RunResult run = loaded.program->run(*state);
  if (!run) return std::cerr << run.error << "\n", 1;
  if (!et_ops::write_npy(argv[3], state->output(0), &error)) return std::cerr << error << "\n", 1;
  std::cout << "ran " << loaded.program->name() << ": wrote " << argv[3] << "\n";
  return 0;
}
