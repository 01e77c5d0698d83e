// Operator schemas, as kernel records carry them:
//
//   "acme::scale.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)"
//
// The one reader of that text in et_ops. It is constexpr, so the kernel
// library kit (kernel_library.h) checks a kernel's C++ signature against its
// schema at compile time, and the registry reads the same way, once, when a
// record is registered (which arguments a kernel writes, for the loader).
//
// Grammar: NAMESPACE::NAME[.OVERLOAD](ARGUMENTS) -> RETURNS, where each
// argument is TYPE NAME[=DEFAULT] and a lone `*` starts the keyword-only
// arguments. TYPE is a base type (Tensor, int, SymInt, float, bool, Scalar,
// ScalarType, str, or any other identifier), an optional alias annotation in
// parentheses (`(a!)`: the kernel writes this argument), then list and
// optional suffixes (`[]`, `[2]`, `?`).
#ifndef ET_OPS_SCHEMA_H
#define ET_OPS_SCHEMA_H

#include <cstddef>
#include <cstdint>
#include <string_view>

#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#include <emmintrin.h>
#endif

namespace et_ops {

// What an argument is, as kernels receive it (kernel_library.h maps each to
// the C++ parameter type of a typed kernel).
enum class ArgumentKind : uint8_t {
  Tensor,              // Tensor, Tensor(a!)
  OptionalTensor,      // Tensor?
  TensorList,          // Tensor[]
  Int,                 // int, SymInt
  OptionalInt,         // int?, SymInt?
  IntList,             // int[], int[N], SymInt[], SymInt[N]
  OptionalIntList,     // int[]?, int[N]?, SymInt[]?
  Float,               // float
  OptionalFloat,       // float?
  Bool,                // bool
  OptionalBool,        // bool?
  Scalar,              // Scalar
  OptionalScalar,      // Scalar?
  ScalarType,          // ScalarType
  OptionalScalarType,  // ScalarType?
  String,              // str
  OptionalTensorList,  // Tensor?[]
  Other,               // any other type (Layout, float[], str?, ...)
};

// The type as written in a schema, for messages: "Tensor", "int[]", "float?".
constexpr std::string_view argument_kind_name(ArgumentKind kind) {
  switch (kind) {
    case ArgumentKind::Tensor: return "Tensor";
    case ArgumentKind::OptionalTensor: return "Tensor?";
    case ArgumentKind::TensorList: return "Tensor[]";
    case ArgumentKind::Int: return "int";
    case ArgumentKind::OptionalInt: return "int?";
    case ArgumentKind::IntList: return "int[]";
    case ArgumentKind::OptionalIntList: return "int[]?";
    case ArgumentKind::Float: return "float";
    case ArgumentKind::OptionalFloat: return "float?";
    case ArgumentKind::Bool: return "bool";
    case ArgumentKind::OptionalBool: return "bool?";
    case ArgumentKind::Scalar: return "Scalar";
    case ArgumentKind::OptionalScalar: return "Scalar?";
    case ArgumentKind::ScalarType: return "ScalarType";
    case ArgumentKind::OptionalScalarType: return "ScalarType?";
    case ArgumentKind::String: return "str";
    case ArgumentKind::OptionalTensorList: return "Tensor?[]";
    case ArgumentKind::Other: break;
  }
  return "an unsupported type";
}

// One argument of a schema. The views point into the schema text.
struct SchemaArgument {
  std::string_view type;           // as written: "Tensor(a!)", "int[2]", "ScalarType?"
  std::string_view base_type;      // "Tensor", "int", "SymInt", ...
  std::string_view name;           // "out"
  std::string_view default_value;  // "None", "[0, 0]"; empty without a default
  ArgumentKind kind = ArgumentKind::Other;
  bool written = false;       // an alias annotation with '!': the kernel writes it
  bool keyword_only = false;  // after the `*` marker
  bool has_default = false;
};

// Reads a schema from left to right: the operator name at construction, then
// one argument per next(). A syntax error stops the reading; error() says
// what was expected and error_offset() where.
//
//   SchemaReader reader(schema);
//   SchemaArgument argument;
//   while (reader.next(argument)) { ... }
//   if (!reader.ok()) { ... reader.error() ... }
namespace detail {
// Character classes of schema text, one table lookup per character (the
// registry reads every schema it registers, so this is on its clock).
struct SchemaCharClasses {
  uint8_t of[256] = {};
  constexpr SchemaCharClasses() {
    for (int c = 0; c < 256; ++c) {
      const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
      const bool digit = c >= '0' && c <= '9';
      of[c] = static_cast<uint8_t>((letter ? 1 : 0) | (letter || digit ? 2 : 0) | (digit ? 4 : 0));
    }
  }
};
inline constexpr SchemaCharClasses kSchemaCharClasses{};
}  // namespace detail

class SchemaReader {
 public:
  constexpr explicit SchemaReader(std::string_view schema)
      : begin_(schema.data()), at_(schema.data()), end_(schema.data() + schema.size()) {
    read_operator_name();
  }

  constexpr bool ok() const { return error_ == nullptr; }
  // What is wrong (static text), or nullptr.
  constexpr const char* error() const { return error_; }
  constexpr std::size_t error_offset() const {
    return error_at_ == nullptr ? 0 : static_cast<std::size_t>(error_at_ - begin_);
  }

  // "acme::scale.out"; empty when the schema does not start with one.
  constexpr std::string_view operator_name() const { return name_; }
  // The text not read yet: after construction, the argument list and the
  // returns ("Tensor self, *, Tensor(a!) out) -> Tensor(a!)").
  constexpr std::string_view unread() const { return std::string_view(at_, static_cast<std::size_t>(end_ - at_)); }

  // The next argument; false at the end of the list (ok() stays true) or on
  // a syntax error (ok() becomes false). The end also checks `-> RETURNS`.
  constexpr bool next(SchemaArgument& argument) {
    if (!ok() || finished_) return false;
    skip_spaces();
    if (!at_list_start_) {
      if (peek() == ')') return finish();
      if (!consume(',')) return fail("expected ',' or ')' after an argument");
      skip_spaces();
    } else if (peek() == ')') {
      return finish();
    }
    at_list_start_ = false;
    if (peek() == '*') {
      ++at_;
      if (keyword_only_) return fail("a second '*' marker");
      keyword_only_ = true;
      skip_spaces();
      if (peek() == ')') return fail("the '*' marker is the last argument");
      if (!consume(',')) return fail("expected ',' after the '*' marker");
      skip_spaces();
    }
    return read_argument(argument);
  }

 private:
  enum : uint8_t { kIdentifierStart = 1, kIdentifier = 2, kDigit = 4 };
  static constexpr uint8_t char_class(char c) { return detail::kSchemaCharClasses.of[static_cast<unsigned char>(c)]; }

  constexpr char peek() const { return at_ < end_ ? *at_ : '\0'; }
  constexpr bool consume(char c) {
    if (peek() != c) return false;
    ++at_;
    return true;
  }
  constexpr void skip_spaces() {
    while (at_ < end_ && *at_ == ' ') ++at_;
  }
  constexpr bool fail(const char* what) {
    if (ok()) {
      error_ = what;
      error_at_ = at_;
    }
    return false;
  }
  constexpr std::string_view identifier() {
    const char* start = at_;
    if (!(char_class(peek()) & kIdentifierStart)) return {};
    at_ = identifier_end(at_ + 1, end_);
    return std::string_view(start, static_cast<std::size_t>(at_ - start));
  }

  // The first character at or after p that is not a letter, digit or '_';
  // 16 at a time where SSE2 is there and the call is not constant-evaluated.
  static constexpr const char* identifier_end(const char* p, const char* end) {
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
    if (!__builtin_is_constant_evaluated()) {
      while (end - p >= 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        const __m128i letter = in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z');
        const __m128i digit = in_range(v, '0', '9');
        const __m128i underscore = _mm_cmpeq_epi8(v, _mm_set1_epi8('_'));
        const unsigned mask =
            static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(letter, digit), underscore)));
        if (mask != 0xFFFFu) return p + __builtin_ctz(~mask);
        p += 16;
      }
    }
#endif
    while (p < end && (char_class(*p) & kIdentifier)) ++p;
    return p;
  }
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
  // Bytes of v in [low, high]: 0xFF, else 0.
  static __m128i in_range(__m128i v, char low, char high) {
    const __m128i shifted = _mm_sub_epi8(v, _mm_set1_epi8(low));
    return _mm_cmpeq_epi8(_mm_min_epu8(shifted, _mm_set1_epi8(static_cast<char>(high - low))), shifted);
  }
#endif

  // NAMESPACE::NAME[.OVERLOAD](
  constexpr void read_operator_name() {
    if (identifier().empty()) return void(fail("expected the operator's namespace"));
    if (!consume(':') || !consume(':')) return void(fail("expected '::' after the namespace"));
    if (identifier().empty()) return void(fail("expected the operator's name after '::'"));
    if (consume('.')) {
      const char* start = at_;
      at_ = identifier_end(at_, end_);
      if (at_ == start) return void(fail("expected an overload name after '.'"));
    }
    name_ = std::string_view(begin_, static_cast<std::size_t>(at_ - begin_));
    if (!consume('(')) return void(fail("expected '(' after the operator name"));
  }

  // ) -> RETURNS
  constexpr bool finish() {
    ++at_;  // ')'
    finished_ = true;
    skip_spaces();
    if (!consume('-') || !consume('>')) return fail("expected '->' after the argument list");
    skip_spaces();
    if (at_ == end_) return fail("expected the return type after '->'");
    return false;
  }

  // TYPE NAME[=DEFAULT]
  constexpr bool read_argument(SchemaArgument& argument) {
    argument = SchemaArgument{};
    argument.keyword_only = keyword_only_;
    const char* type_start = at_;
    if (peek() == '.') return fail("variadic arguments ('...') are not supported");
    argument.base_type = identifier();
    if (argument.base_type.empty()) return fail("expected an argument type");
    if (consume('(')) {  // alias annotation: (a), (a!), (a -> *)
      while (at_ < end_ && *at_ != ')') argument.written |= *at_++ == '!';
      if (!consume(')')) return fail("an unclosed alias annotation");
    }
    Suffixes suffixes;
    if (!read_suffixes(suffixes)) return false;
    argument.type = std::string_view(type_start, static_cast<std::size_t>(at_ - type_start));
    argument.kind = kind_of(argument.base_type, suffixes);
    if (peek() != ' ') return fail("expected a space between the argument's type and its name");
    skip_spaces();
    argument.name = identifier();
    if (argument.name.empty()) return fail("expected the argument's name");
    skip_spaces();
    if (consume('=')) {
      argument.has_default = true;
      const char* start = at_;
      if (!skip_default_value()) return false;
      const char* last = at_;
      while (last > start && last[-1] == ' ') --last;
      argument.default_value = std::string_view(start, static_cast<std::size_t>(last - start));
      if (argument.default_value.empty()) return fail("expected a default value after '='");
    }
    return true;
  }

  // [] [N] ? in the order written: "int[2]?" is an optional list, "Tensor?[]"
  // a list of optional tensors.
  struct Suffixes {
    bool list = false;
    bool optional = false;           // the whole argument may be None
    bool optional_elements = false;  // '?' before '[]'
  };
  constexpr bool read_suffixes(Suffixes& s) {
    while (true) {
      if (consume('?')) {
        if (s.optional) return fail("a second '?'");
        s.optional = true;
      } else if (consume('[')) {
        if (s.list) return fail("a list of lists");
        while (at_ < end_ && (char_class(*at_) & kDigit)) ++at_;
        if (!consume(']')) return fail("expected ']' in a list type");
        s.list = true;
        if (s.optional) {  // Tensor?[]: the elements are optional, not the list
          s.optional = false;
          s.optional_elements = true;
        }
      } else {
        return true;
      }
    }
  }

  static constexpr ArgumentKind kind_of(std::string_view base, const Suffixes& s) {
    if (s.optional_elements) return base == "Tensor" && !s.optional ? ArgumentKind::OptionalTensorList : ArgumentKind::Other;
    const bool plain = !s.list && !s.optional;
    const bool optional = !s.list && s.optional;
    if (base == "Tensor") {
      if (plain) return ArgumentKind::Tensor;
      if (optional) return ArgumentKind::OptionalTensor;
      if (s.list && !s.optional) return ArgumentKind::TensorList;
      return ArgumentKind::Other;
    }
    if (base == "int" || base == "SymInt") {
      if (plain) return ArgumentKind::Int;
      if (optional) return ArgumentKind::OptionalInt;
      return s.optional ? ArgumentKind::OptionalIntList : ArgumentKind::IntList;
    }
    if (s.list) return ArgumentKind::Other;
    if (base == "float") return plain ? ArgumentKind::Float : ArgumentKind::OptionalFloat;
    if (base == "bool") return plain ? ArgumentKind::Bool : ArgumentKind::OptionalBool;
    if (base == "Scalar") return plain ? ArgumentKind::Scalar : ArgumentKind::OptionalScalar;
    if (base == "ScalarType") return plain ? ArgumentKind::ScalarType : ArgumentKind::OptionalScalarType;
    if (base == "str" && plain) return ArgumentKind::String;
    return ArgumentKind::Other;
  }

  // Up to the next ',' or ')' outside brackets, parentheses and quotes.
  constexpr bool skip_default_value() {
    int depth = 0;
    char quote = '\0';
    for (; at_ < end_; ++at_) {
      const char c = *at_;
      if (quote != '\0') {
        if (c == '\\' && at_ + 1 < end_) ++at_;
        else if (c == quote) quote = '\0';
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '[' || c == '(') {
        ++depth;
      } else if (c == ']' || c == ')') {
        if (depth == 0) return c == ')' || fail("an unbalanced ']' in a default value");
        --depth;
      } else if (c == ',' && depth == 0) {
        return true;
      }
    }
    return fail("the argument list is not closed");
  }

  const char* begin_;
  const char* at_;
  const char* end_;
  std::string_view name_;
  const char* error_ = nullptr;
  const char* error_at_ = nullptr;
  bool at_list_start_ = true;
  bool keyword_only_ = false;
  bool finished_ = false;
};

// The operator name at the start of `schema` ("acme::scale.out"), or empty.
constexpr std::string_view schema_operator_name(std::string_view schema) {
  return SchemaReader(schema).operator_name();
}

// The outcome of reading a whole schema.
struct SchemaSummary {
  const char* error = nullptr;  // nullptr: the schema is well formed
  std::size_t error_offset = 0;
  std::size_t argument_count = 0;
  uint64_t written = 0;  // bit i: the kernel writes argument i (the first 64 arguments)
  constexpr bool ok() const { return error == nullptr; }
  constexpr bool writes(std::size_t i) const { return i < 64 && ((written >> i) & 1u) != 0; }
};

// Reads the rest of `reader`'s schema.
constexpr SchemaSummary summarize_schema(SchemaReader& reader) {
  SchemaSummary summary;
  SchemaArgument argument;
  while (reader.next(argument)) {
    if (argument.written && summary.argument_count < 64) summary.written |= uint64_t(1) << summary.argument_count;
    ++summary.argument_count;
  }
  summary.error = reader.error();
  summary.error_offset = reader.error_offset();
  return summary;
}

constexpr SchemaSummary summarize_schema(std::string_view schema) {
  SchemaReader reader(schema);
  return summarize_schema(reader);
}

}  // namespace et_ops

#endif  // ET_OPS_SCHEMA_H
