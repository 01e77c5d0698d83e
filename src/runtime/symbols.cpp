// Parsing, bounding and printing symbolic integers.
#include "runtime/symbols.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/load_errors.h"

namespace et_ops {

std::string symbolic_text(const SymbolicInt& e, const std::vector<Symbol>& symbols) {
  if (e.symbol < 0) return fmt::format("{}", e.add);
  const std::string& name = symbols[static_cast<std::size_t>(e.symbol)].name;
  std::string text = e.mul == 1 ? name : e.mul == -1 ? "-" + name : fmt::format("{}*{}", e.mul, name);
  if (e.add > 0) text += fmt::format("+{}", e.add);
  if (e.add < 0) text += fmt::format("{}", e.add);
  return text;
}

}  // namespace et_ops

namespace et_ops::runtime {
namespace {

Symbol parse_symbol(const Json& item, const std::string& path) {
  require_object(item, path);
  Symbol symbol;
  symbol.name = require_string(require_key(item, "name", path), field_path(path, "name"));
  if (symbol.name.empty()) throw FormatError(fmt::format("{}.name is empty", path));
  symbol.min = require_int64(require_key(item, "min", path), field_path(path, "min"));
  symbol.max = require_int64(require_key(item, "max", path), field_path(path, "max"));
  if (symbol.min < 0 || symbol.min > symbol.max || symbol.max > kMaxSymbolValue)
    throw FormatError(fmt::format("{}: symbol '{}' has bounds [{}, {}]; they must satisfy 0 <= min <= max <= {}", path,
                                  symbol.name, symbol.min, symbol.max, kMaxSymbolValue));
  return symbol;
}

int32_t symbol_index(const std::vector<Symbol>& symbols, const std::string& name, const std::string& path) {
  for (std::size_t s = 0; s < symbols.size(); ++s)
    if (symbols[s].name == name) return static_cast<int32_t>(s);
  throw FormatError(fmt::format("{}.sym is '{}', not a symbol the header declares", path, name));
}

bool value_at(const SymbolicInt& e, int64_t symbol_value, int64_t* out) {
  int64_t product = 0;
  return !__builtin_mul_overflow(e.mul, symbol_value, &product) && !__builtin_add_overflow(product, e.add, out);
}

}  // namespace

std::vector<Symbol> parse_symbols(const Json& header) {
  std::vector<Symbol> symbols;
  const Json* items = optional_key(header, "symbols");
  if (items == nullptr) return symbols;
  const Json::array_t& array = require_array(*items, "symbols");
  for (std::size_t i = 0; i < array.size(); ++i) {
    Symbol symbol = parse_symbol(array[i], item_path("symbols", i));
    for (const Symbol& other : symbols)
      if (other.name == symbol.name)
        throw FormatError(fmt::format("symbols[{}] declares '{}' a second time", i, symbol.name));
    symbols.push_back(std::move(symbol));
  }
  return symbols;
}

SymbolicInt parse_symbolic_int(const Json& value, const std::vector<Symbol>& symbols, const std::string& path,
                               int64_t at_least) {
  SymbolicInt e;
  if (!value.is_object()) {
    e.add = require_int64(value, path);
    if (e.add < at_least) throw FormatError(fmt::format("{} is {}; it must not be negative", path, e.add));
    return e;
  }
  e.symbol = symbol_index(symbols, require_string(require_key(value, "sym", path), field_path(path, "sym")), path);
  if (const Json* mul = optional_key(value, "mul")) e.mul = require_int64(*mul, field_path(path, "mul"));
  if (const Json* add = optional_key(value, "add")) e.add = require_int64(*add, field_path(path, "add"));
  if (e.mul == 0) throw FormatError(fmt::format("{}.mul is 0; write the constant instead", path));
  const Symbol& symbol = symbols[static_cast<std::size_t>(e.symbol)];
  int64_t low = 0, high = 0;
  if (!value_at(e, symbol.min, &low) || !value_at(e, symbol.max, &high))
    throw FormatError(fmt::format("{}: {} overflows 64 bits for {} in [{}, {}]", path, symbolic_text(e, symbols),
                                  symbol.name, symbol.min, symbol.max));
  if (std::min(low, high) < at_least)
    throw FormatError(fmt::format("{}: {} is {} for {} = {}; a size must not be negative", path,
                                  symbolic_text(e, symbols), std::min(low, high), symbol.name,
                                  low < high ? symbol.min : symbol.max));
  return e;
}

SizeBounds bounds_of(const SymbolicInt& e, const std::vector<Symbol>& symbols) {
  if (e.symbol < 0) return {e.add, e.add};
  const Symbol& symbol = symbols[static_cast<std::size_t>(e.symbol)];
  const int64_t low = e.mul * symbol.min + e.add, high = e.mul * symbol.max + e.add;
  return {std::min(low, high), std::max(low, high)};
}

}  // namespace et_ops::runtime
