// Programs (.etp, format versions 1 and 2): loading, and
// running with a per-thread run state.
//
// A loaded Program is immutable: constants mapped from the file, every
// operator resolved in the registry, memory sizes planned. Running takes a
// RunState, which holds the activation memory (inputs, intermediates,
// outputs), allocated once when the state is made and reused by every run,
// so one program can run from several threads, each with its own state,
// and a run allocates nothing. A version-2 program may also hold state
// (tensors every run state starts from the file's bytes, keeps from run to
// run and restores on reset()) and bounded dynamic shapes (symbols bound
// from the inputs' sizes when a run starts).
#ifndef ET_OPS_PROGRAM_H
#define ET_OPS_PROGRAM_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/diagnostics.h"
#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/status.h"
#include "et_ops/tensor.h"

namespace et_ops {

// Limits that a program must respect to be loaded; exceeding one is a load
// error, never an attempt.
struct LoadLimits {
  std::size_t max_memory_bytes = std::size_t(1) << 30;  // activations of one run state
  std::size_t max_values = 1 << 20;
  std::size_t max_instructions = 1 << 20;
  std::size_t max_header_bytes = std::size_t(64) << 20;
  int max_json_depth = 64;
};

struct TensorSpec {
  DType dtype = DType::Float32;
  std::vector<int64_t> sizes;
  std::vector<uint8_t> dim_order;  // always filled (contiguous when absent in the file)
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : sizes) n *= s;
    return n;
  }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype); }
};

// A symbol of a program with bounded dynamic shapes: any value in [min, max].
struct Symbol {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
};

// mul * symbol + add: a symbolic size or int. `symbol` indexes the program's
// symbols; -1 means the constant `add`.
struct SymbolicInt {
  int32_t symbol = -1;
  int64_t mul = 1;
  int64_t add = 0;
};

// "T", "2*T+1", "T-1", or the number.
ET_OPS_API std::string symbolic_text(const SymbolicInt& value, const std::vector<Symbol>& symbols);

// The sizes an input accepts in one dimension (min == max when it is static).
struct SizeBounds {
  int64_t min = 0;
  int64_t max = 0;
};

class Program;
class RunState;

// One instruction's time in a profiled run, in microseconds from the start
// of the run.
struct InstructionTiming {
  std::size_t instruction = 0;
  double start_us = 0.0;
  double duration_us = 0.0;
};

// What a profile says about an instruction besides its time.
struct InstructionInfo {
  std::string op;
  std::string component;  // the kernel library's component ("kernels_xnnpack"), "" if unknown
  bool prepared = false;  // a prepared kernel (et_ops/abi.h)
  std::vector<TensorSpec> tensors;  // the tensor arguments, in argument order
};

// A loaded program, or why there is none. The status's code says what kind
// of failure it is: File (cannot open or read the file), Format (not a valid
// .etp v1 program: magic, version, header, ranges, indices, limits, a
// prepared kernel that refuses its instruction; also an allocation that
// failed while loading) or MissingOperators (a valid program whose
// operators are not registered, a packaging problem: status().
// missing_operators() lists them, the message is the whole report). The
// message names the file and what is wrong.
using LoadResult = Result<std::shared_ptr<const Program>>;

// A run's outcome: ok, or KernelFailed with a message naming the
// instruction's index, its operator and the kernel's message (Invalid when
// the run state belongs to another program, or when dynamic inputs that
// carry the same symbol disagree: nothing ran).
using RunResult = Status;

class ET_OPS_API Program {
 public:
  // Reads, validates and resolves a whole program before anything runs.
  static LoadResult load(const std::string& path, const LoadLimits& limits = {});

  // What the file says, validated and planned as a load would, without
  // resolving operators (so it works when kernels are missing). Used by
  // `et-ops inspect` and `et-ops doctor`.
  struct Inspection {
    // One value of the header, by index.
    struct Value {
      int32_t tag = ET_OPS_VALUE_NONE;  // et_ops_value_tag: tensor, int, double, ...
      TensorSpec tensor;                // tensors
      bool constant = false;            // a read-only tensor whose bytes are in the file
      bool state = false;               // a state tensor: starts from bytes in the file, kept between runs
      // Symbolic tensor sizes, int or int_list elements (one per size or
      // element); empty when the value is static. `tensor.sizes` and
      // `integer` / `list` then hold the largest values (what memory is planned for).
      std::vector<SymbolicInt> symbolic;
      int64_t integer = 0;              // int; bool (0 or 1); scalar_type (et_ops_dtype number)
      double real = 0.0;                // double
      std::vector<int64_t> list;        // int_list: the integers; (optional_)tensor_list: the value indices (-1: None)
      std::string text;                 // string
    };
    struct Instruction {
      std::string op;
      std::vector<uint32_t> args;  // value indices, in schema order
    };
    std::string name;
    uint32_t version = 1;                // the .etp format version
    std::vector<Symbol> symbols;         // bounded dynamic shapes (version 2)
    std::vector<std::string> operators;  // unique, order of first use
    std::vector<Value> values;
    std::vector<uint32_t> inputs;   // value indices
    std::vector<uint32_t> outputs;  // value indices
    std::vector<Instruction> instructions;
    std::size_t planned_memory_bytes = 0;  // activation memory of one run state
    // The most of those bytes live at once (state included) while the
    // instructions run in order: no plan of this program needs fewer.
    std::size_t peak_live_bytes = 0;
    std::string metadata_json = "{}";
  };
  // File or Format when the file is not a valid program.
  static Result<Inspection> inspect(const std::string& path, const LoadLimits& limits = {});

  ~Program();
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  const std::string& name() const;
  const std::string& path() const;
  std::size_t instruction_count() const;
  const std::vector<std::string>& operators() const;  // unique, order of first use
  std::size_t input_count() const;
  std::size_t output_count() const;
  // Input i's spec; a dynamic dimension has its largest size.
  const TensorSpec& input_spec(std::size_t i) const;
  // The sizes input i accepts, per dimension.
  std::vector<SizeBounds> input_bounds(std::size_t i) const;
  // The program's symbols (empty without dynamic shapes).
  const std::vector<Symbol>& symbols() const;
  // How many state tensors one run state holds.
  std::size_t state_count() const;
  // Output i's spec (a dynamic dimension has its largest size; RunState::output
  // has the sizes of the last run); outputs that are not tensors have dtype Int64 / Float64 /
  // Bool and empty sizes (a 0-dim tensor).
  const TensorSpec& output_spec(std::size_t i) const;
  // Bytes of activation memory one RunState holds.
  std::size_t planned_memory_bytes() const;
  // The header's "metadata" object, as JSON text.
  const std::string& metadata_json() const;

  // A fresh run state (allocates the activation memory once, and makes the
  // per-run-state parts of prepared kernels). NoMemory when the memory
  // cannot be allocated; KernelFailed naming the instruction whose part
  // cannot be made.
  Result<RunState> make_state() const;

  // Runs every instruction in order; stops at the first kernel error.
  RunResult run(RunState& state) const;
  // The same, timing each instruction: `timings` gets one entry per
  // instruction that ran. Unprofiled runs pay nothing for this.
  RunResult run(RunState& state, std::vector<InstructionTiming>& timings) const;

  // Operator, kernel library and tensor arguments of every instruction
  // (for profiles; asks the registry, so not for the hot path). A size that
  // depends on a symbol is its largest value.
  std::vector<InstructionInfo> describe_instructions() const;
  // The sizes of an instruction's tensor arguments (InstructionInfo::tensors'
  // order) in the last run of `state`, a run state of this program; empty
  // for another program's state or an instruction that does not exist.
  std::vector<std::vector<int64_t>> instruction_sizes(const RunState& state, std::size_t instruction) const;

  struct Impl;

 private:
  explicit Program(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class ET_OPS_API RunState {
 public:
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;
  // A moved-from state may only be assigned to or destroyed (run() says so).
  RunState(RunState&&) noexcept;
  RunState& operator=(RunState&&) noexcept;

  // Input i, to be filled before a run (it has the program's input spec, or
  // the sizes resize_input gave it).
  TensorRef input(std::size_t i);
  // Gives a dynamic input the sizes of the next run. Invalid (naming the
  // input, the dimension and the bound) when there is no input i, a size is
  // outside what the input accepts (Program::input_bounds) or the rank
  // differs. Consistency between inputs that carry the same symbol is
  // checked when the run starts.
  Status resize_input(std::size_t i, const std::vector<int64_t>& sizes);
  // Copies `nbytes` into input i; Invalid when there is no input i or the
  // size does not match.
  Status set_input(std::size_t i, const void* data, std::size_t nbytes);
  // Output i after a run. Non-tensor outputs are 0-dim tensors.
  TensorRef output(std::size_t i) const;
  // Restores every state tensor to the program's initial bytes (a fresh
  // state's contents). Runs change state only through their kernels.
  void reset();

  // The threads the state's runs use (1, the default: the calling thread
  // alone). Any count gives the same bytes. Invalid when the count is 0 or
  // above 1024; NoMemory when the pool cannot start.
  Status set_threads(std::size_t count);
  std::size_t threads() const;

  struct Impl;

 private:
  friend class Program;
  explicit RunState(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace et_ops

#endif  // ET_OPS_PROGRAM_H
