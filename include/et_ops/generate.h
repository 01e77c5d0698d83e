// Generating tokens with a language-model program.
//
// The program's interface: inputs `tokens` int64 [1, T] and `input_pos`
// int64 [T] (the positions of those tokens), output 0 `logits` float32
// [1, T, vocab]; T is a symbol of the program with bounds [1, N] (N, the
// largest T, is the program's max_seq_len), and the key/value cache is the
// program's state. generate() resets the run state, runs the whole prompt
// in one run (prefill, T = prompt length), then one run per new token
// (decode, T = 1), choosing each token from the last position's logits.
//
// Choosing a token (TokenSampler), so that every front end gives the same
// tokens for the same seed:
// - temperature 0: the largest logit (the lowest token id among equal ones);
// - otherwise the candidates are every token id, or with top_k > 0 the k
//   with the largest logits (ties: the lower id); each gets the weight
//   exp((logit - largest logit) / temperature), computed in double; one
//   uniform u in [0, 1) is drawn, and the chosen token is the first
//   candidate, walking them in ascending token id, whose running sum of
//   weights exceeds u times the sum of all weights (the last candidate if
//   rounding leaves none).
// - u comes from SplitMix64 seeded with `seed`: each draw adds
//   0x9E3779B97F4A7C15 to the state, mixes it (z ^= z >> 30, z *=
//   0xBF58476D1CE4E5B9, z ^= z >> 27, z *= 0x94D049BB133111EB, z ^= z >> 31)
//   and u = (z >> 11) * 2^-53. One draw per sampled token.
//
// With a profiler in the options, every run is profiled (Program::run with
// timings) and added to it: the prefill run's records have phase
// "prefill", each decode run's "decode".
#ifndef ET_OPS_GENERATE_H
#define ET_OPS_GENERATE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "et_ops/export.h"
#include "et_ops/profile.h"
#include "et_ops/program.h"
#include "et_ops/status.h"

namespace et_ops {

struct GenerateOptions {
  std::size_t max_new_tokens = 32;
  double temperature = 0.0;  // 0: greedy
  std::size_t top_k = 0;     // 0: every token; with temperature 0 it changes nothing
  uint64_t seed = 0;
  // Generation stops after producing one of these (it is the last token returned).
  std::vector<int64_t> stop_tokens;
  // When set (a profiler made for the program), every run's instructions are
  // added to it, labelled "prefill" or "decode". Its times continue after
  // the runs it already holds, so successive generations do not overlap.
  Profiler* profiler = nullptr;
};

struct GenerateTimings {
  std::size_t prefill_tokens = 0;  // the prompt's length
  double prefill_seconds = 0.0;    // the prefill run and the first token's choice
  std::size_t decode_tokens = 0;   // tokens produced by decode runs (all but the first new token)
  double decode_seconds = 0.0;
  double prefill_tokens_per_second() const { return prefill_seconds > 0 ? prefill_tokens / prefill_seconds : 0.0; }
  double decode_tokens_per_second() const { return decode_seconds > 0 ? decode_tokens / decode_seconds : 0.0; }
};

struct Generation {
  std::vector<int64_t> tokens;  // the new tokens (without the prompt)
  GenerateTimings timings;
};

// The language-model interface of a program (see above).
struct LanguageModelShape {
  int64_t vocab_size = 0;
  int64_t max_seq_len = 0;  // N: the largest T, and the number of positions
};

// The interface of `program`; Invalid (saying which input or output differs)
// when it does not have it.
ET_OPS_API Result<LanguageModelShape> language_model_shape(const Program& program);

// Resets `state` (made by `program`), then generates. Every bad input is
// refused before anything runs: an empty prompt, a token id outside [0,
// vocab_size), more than max_seq_len prompt tokens, a prompt plus
// max_new_tokens longer than max_seq_len, a negative or non-finite
// temperature (Invalid, naming the input and the bound), a profiler made for
// another program (Invalid). A failing run stops generation with its status
// (KernelFailed); NaN logits stop it with Invalid naming the position. The
// state stays usable (the next generate resets it).
ET_OPS_API Result<Generation> generate(const Program& program, RunState& state, const std::vector<int64_t>& prompt,
                                   const GenerateOptions& options = {});

// Chooses tokens from logits as described above.
class ET_OPS_API TokenSampler {
 public:
  TokenSampler(double temperature, std::size_t top_k, uint64_t seed);
  // The chosen token id; Invalid when a logit is NaN or there are none.
  Result<int64_t> next(const float* logits, std::size_t vocab_size);

 private:
  double temperature_;
  std::size_t top_k_;
  uint64_t state_;
  std::vector<std::pair<float, int64_t>> candidates_;  // reused: no allocation per token after the first
  std::vector<double> weights_;
};

}  // namespace et_ops

#endif  // ET_OPS_GENERATE_H
