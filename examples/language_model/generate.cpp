// A C++ application that generates text with a language-model program:
//   generate PROGRAM.etp TOKENIZER.model PROMPT [MAX_NEW_TOKENS]
// The prompt is encoded with the SentencePiece model after its
// beginning-of-sequence id; generation is greedy and stops at the
// end-of-sequence id or after MAX_NEW_TOKENS (default 40) tokens.
#include <et_ops/generate.h>
#include <et_ops/kernels/portable.h>
#include <et_ops/kernels/quantized.h>
#include <et_ops/program.h>
#include <sentencepiece_processor.h>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::cerr << "usage: " << argv[0] << " PROGRAM.etp TOKENIZER.model PROMPT [MAX_NEW_TOKENS]\n";
    return 2;
  }
  for (auto result : {et_ops::kernels::portable::register_kernels(), et_ops::kernels::quantized::register_kernels()})
    if (!result) return std::cerr << result.status().message() << "\n", 1;

  sentencepiece::SentencePieceProcessor tokenizer;
  if (const auto status = tokenizer.Load(argv[2]); !status.ok()) return std::cerr << status.ToString() << "\n", 1;
  std::vector<int> pieces;
  if (const auto status = tokenizer.Encode(argv[3], &pieces); !status.ok())
    return std::cerr << status.ToString() << "\n", 1;
  std::vector<int64_t> prompt{tokenizer.bos_id()};
  prompt.insert(prompt.end(), pieces.begin(), pieces.end());

  et_ops::LoadResult loaded = et_ops::Program::load(argv[1]);
  if (!loaded) return std::cerr << loaded.status().message() << "\n", 1;
  et_ops::Result<et_ops::RunState> state = (*loaded)->make_state();  // holds the key/value cache between runs
  if (!state) return std::cerr << state.status().message() << "\n", 1;

  et_ops::GenerateOptions options;
  options.max_new_tokens = argc == 5 ? std::stoul(argv[4]) : 40;
  options.stop_tokens = {tokenizer.eos_id()};
  const et_ops::Result<et_ops::Generation> result = et_ops::generate(**loaded, *state, prompt, options);
  if (!result) return std::cerr << result.status().message() << "\n", 1;

  std::vector<int> text_ids(prompt.begin() + 1, prompt.end());
  for (int64_t token : result->tokens)
    if (token != tokenizer.eos_id()) text_ids.push_back(static_cast<int>(token));
  std::string text;
  if (const auto status = tokenizer.Decode(text_ids, &text); !status.ok())
    return std::cerr << status.ToString() << "\n", 1;
  std::cout << text << "\n"
            << result->tokens.size() << " new tokens, prefill " << result->timings.prefill_tokens_per_second()
            << " tokens/s, decode " << result->timings.decode_tokens_per_second() << " tokens/s\n";
  return 0;
}
