// Parsing and validating one entry of the header's "values" array.
#ifndef ET_OPS_SRC_RUNTIME_ETP_VALUES_H
#define ET_OPS_SRC_RUNTIME_ETP_VALUES_H

#include <cstddef>
#include <string>

#include "runtime/json_fields.h"
#include "runtime/program_model.h"

namespace et_ops::runtime {

// `data_segment_size`: bytes available to constants. Throws FormatError.
ValueModel parse_value(const Json& value, const std::string& path, std::size_t data_segment_size);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_ETP_VALUES_H
