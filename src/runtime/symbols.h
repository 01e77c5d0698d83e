// Bounded dynamic shapes (format version 2): the header's symbols, symbolic
// sizes and ints (mul * symbol + add), and their evaluation. Every symbolic
// entry is checked at load against its symbol's bounds at both ends, so a
// run that binds a symbol inside its bounds evaluates without overflow.
#ifndef ET_OPS_SRC_RUNTIME_SYMBOLS_H
#define ET_OPS_SRC_RUNTIME_SYMBOLS_H

#include <cstdint>
#include <string>
#include <vector>

#include "et_ops/program.h"
#include "runtime/json_fields.h"

namespace et_ops::runtime {

// The largest value a symbol may take (keeps every product in 64 bits).
inline constexpr int64_t kMaxSymbolValue = int64_t(1) << 31;

// The header's "symbols" array (absent: none). Throws FormatError.
std::vector<Symbol> parse_symbols(const Json& header);

// An integer, or {"sym": NAME, "mul": M, "add": A} (mul defaults to 1, add
// to 0, mul is not 0). `at_least`: the smallest value allowed over the
// symbol's bounds (sizes pass 0). Throws FormatError naming `path`.
SymbolicInt parse_symbolic_int(const Json& value, const std::vector<Symbol>& symbols, const std::string& path,
                               int64_t at_least);

inline bool is_symbolic(const SymbolicInt& e) { return e.symbol >= 0; }

inline int64_t evaluate(const SymbolicInt& e, const int64_t* symbol_values) {
  return e.symbol < 0 ? e.add : e.mul * symbol_values[e.symbol] + e.add;
}

// The smallest and largest values over the symbol's bounds.
SizeBounds bounds_of(const SymbolicInt& e, const std::vector<Symbol>& symbols);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_SYMBOLS_H
