// Parsing and validating the JSON header of an .etp program into a
// ProgramModel: every key, type, index, size and data range.
#ifndef ET_OPS_SRC_RUNTIME_ETP_HEADER_H
#define ET_OPS_SRC_RUNTIME_ETP_HEADER_H

#include <cstddef>
#include <string_view>

#include "et_ops/program.h"
#include "runtime/json_fields.h"
#include "runtime/program_model.h"

namespace et_ops::runtime {

// Throws FormatError (without the file name; the caller adds it).
// `version`: the preamble's format version.
ProgramModel parse_header(std::string_view header_json, uint32_t version, std::size_t data_segment_size,
                          const LoadLimits& limits);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_ETP_HEADER_H
