// Parsing and validating one entry of the header's "values" array.
#ifndef ET_OPS_SRC_RUNTIME_ETP_VALUES_H
#define ET_OPS_SRC_RUNTIME_ETP_VALUES_H

#include <cstddef>
#include <string>

#include "runtime/json_fields.h"
#include "runtime/program_model.h"

namespace et_ops::runtime {

// What a value's parsing depends on besides the value itself.
struct ValueContext {
  std::size_t data_segment_size = 0;  // bytes available to constants and state
  uint32_t version = 1;               // state and symbolic entries need version 2
  const std::vector<Symbol>* symbols = nullptr;
};

// Throws FormatError.
ValueModel parse_value(const Json& value, const std::string& path, const ValueContext& context);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_ETP_VALUES_H
