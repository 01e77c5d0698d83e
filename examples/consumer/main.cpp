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
  // Every call reports failure the same way: a Status, or a Result<T> whose
  // status() says why there is no T.
  for (auto result : {et_ops::kernels::portable::register_kernels(), et_ops::kernels::quantized::register_kernels()})
    if (!result) return std::cerr << result.status().message() << "\n", 1;

  et_ops::LoadResult loaded = et_ops::Program::load(argv[1]);
  if (!loaded) return std::cerr << loaded.status().message() << "\n", 1;
  const et_ops::Program& program = **loaded;

  et_ops::Result<et_ops::NpyArray> input = et_ops::read_npy(argv[2]);
  if (!input) return std::cerr << input.status().message() << "\n", 1;
  et_ops::Result<et_ops::RunState> state = program.make_state();
  if (!state) return std::cerr << state.status().message() << "\n", 1;
  if (et_ops::Status set = state->set_input(0, input->data.data(), input->data.size()); !set)
    return std::cerr << set.message() << "\n", 1;

  if (et_ops::RunResult run = program.run(*state); !run) return std::cerr << run.message() << "\n", 1;
  if (et_ops::Status written = et_ops::write_npy(argv[3], state->output(0)); !written)
    return std::cerr << written.message() << "\n", 1;
  std::cout << "ran " << program.name() << ": wrote " << argv[3] << "\n";
  return 0;
}
