// A parser for exactly the Python literals NumPy writes in a .npy header:
// a dict of strings, True/False and a tuple of integers.
#include "io/npy_header.h"

#include <fmt/format.h>

#include <set>
#include <stdexcept>

namespace et_ops::io {
namespace {

class DictReader {
 public:
  explicit DictReader(std::string_view text) : text_(text) {}

  NpyHeader read() {
    NpyHeader header;
    expect('{');
    while (!try_consume('}')) {
      read_field(header);
      if (!try_consume(',')) {
        expect('}');
        break;
      }
    }
    skip_space();
    if (pos_ != text_.size()) fail("unexpected text after the dict");
    for (const char* key : {"descr", "fortran_order", "shape"})
      if (seen_.count(key) == 0) fail(fmt::format("the dict lacks '{}'", key));
    return header;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(fmt::format("malformed header at character {}: {}", pos_, what));
  }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\t')) ++pos_;
  }

  bool try_consume(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!try_consume(c)) fail(fmt::format("expected '{}'", c));
  }

  std::string string_literal() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) fail("expected a string");
    const char quote = text_[pos_++];
    const std::size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string value(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return value;
  }

  void read_field(NpyHeader& header) {
    const std::string key = string_literal();
    expect(':');
    if (key == "descr") header.descr = descr();
    else if (key == "fortran_order") header.fortran_order = boolean();
    else if (key == "shape") header.shape = shape();
    else fail(fmt::format("unexpected key '{}'", key));
    seen_.insert(key);
  }

  std::string descr() {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == '[') fail("structured dtypes are not supported");
    return string_literal();
  }

  bool boolean() {
    skip_space();
    for (auto [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}})
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    fail("expected True or False");
  }

  int64_t integer() {
    skip_space();
    const std::size_t start = pos_;
    int64_t value = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, text_[pos_] - '0', &value))
        fail("a dimension overflows");
      ++pos_;
    }
    if (pos_ == start) fail("expected a non-negative integer");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long literals
    return value;
  }

  std::vector<int64_t> shape() {
    std::vector<int64_t> dims;
    expect('(');
    while (!try_consume(')')) {
      dims.push_back(integer());
      if (!try_consume(',')) {
        expect(')');
        break;
      }
    }
    return dims;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::set<std::string> seen_;  // keys read so far

};

}  // namespace

NpyHeader parse_npy_header(std::string_view text) { return DictReader(text).read(); }

}  // namespace et_ops::io
