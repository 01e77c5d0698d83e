// SentencePiece behind the Tokenizer interface.
#include "tokenizer.h"

#include <fmt/format.h>

#ifdef ET_OPS_HAVE_SENTENCEPIECE
#include <sentencepiece_processor.h>
#endif

namespace et_ops::tool {

#ifdef ET_OPS_HAVE_SENTENCEPIECE
namespace {

class SentencePieceTokenizer : public Tokenizer {
 public:
  std::vector<int64_t> encode(const std::string& text) const override {
    std::vector<int> pieces;
    processor.Encode(text, &pieces).IgnoreError();
    std::vector<int64_t> ids;
    if (processor.bos_id() >= 0) ids.push_back(processor.bos_id());
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    return ids;
  }
  std::string decode(const std::vector<int64_t>& ids) const override {
    std::vector<int> pieces;
    for (int64_t id : ids)
      if (id >= 0 && id < processor.GetPieceSize()) pieces.push_back(static_cast<int>(id));
    std::string text;
    processor.Decode(pieces, &text).IgnoreError();
    return text;
  }
  int64_t eos_id() const override { return processor.eos_id(); }

  sentencepiece::SentencePieceProcessor processor;
};

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, std::string& error) {
  auto tokenizer = std::make_unique<SentencePieceTokenizer>();
  const auto status = tokenizer->processor.Load(path);
  if (!status.ok()) {
    error = fmt::format("{}: not a SentencePiece model: {}", path, status.ToString());
    return nullptr;
  }
  return tokenizer;
}
#else
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, std::string& error) {
  error = fmt::format("{}: this et-ops was built without SentencePiece, so --tokenizer is not available (install "
                      "Debian's libsentencepiece-dev and rebuild, or pass --prompt-tokens)",
                      path);
  return nullptr;
}
#endif

}  // namespace et_ops::tool
