// Text to token ids and back for `et-ops generate --tokenizer`, through a
// SentencePiece model (Debian's libsentencepiece-dev; optional at build
// time: without it, --tokenizer is refused with a message saying so).
#ifndef ET_OPS_TOOLS_TOKENIZER_H
#define ET_OPS_TOOLS_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace et_ops::tool {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // The ids of `text`, after the model's beginning-of-sequence id when it has one.
  virtual std::vector<int64_t> encode(const std::string& text) const = 0;
  virtual std::string decode(const std::vector<int64_t>& ids) const = 0;
  // The end-of-sequence id, or -1 when the model has none.
  virtual int64_t eos_id() const = 0;
};

// The SentencePiece model at `path`; null with `error` when it cannot be
// loaded or this et-ops was built without SentencePiece.
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path, std::string& error);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_TOKENIZER_H
