// Reading typed fields out of the .etp header JSON. Every accessor throws a
// FormatError that names the field by its path ("values[3].sizes[1]") and
// says what is wrong with it.
#ifndef ET_OPS_SRC_RUNTIME_JSON_FIELDS_H
#define ET_OPS_SRC_RUNTIME_JSON_FIELDS_H

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace et_ops::runtime {

using Json = nlohmann::json;

// Parses `text`, refusing nesting deeper than `max_depth` before parsing.
Json parse_json_limited(std::string_view text, int max_depth);

std::string field_path(const std::string& parent, std::string_view key);
std::string item_path(const std::string& parent, std::size_t index);

void require_object(const Json& value, const std::string& path);
const Json& require_key(const Json& object, std::string_view key, const std::string& object_path);
const Json* optional_key(const Json& object, std::string_view key);
const Json::array_t& require_array(const Json& value, const std::string& path);
const std::string& require_string(const Json& value, const std::string& path);
int64_t require_int64(const Json& value, const std::string& path);
uint64_t require_non_negative(const Json& value, const std::string& path);
double require_number(const Json& value, const std::string& path);
bool require_bool(const Json& value, const std::string& path);
// A value index below `count`.
uint32_t require_index(const Json& value, std::size_t count, const std::string& path);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_JSON_FIELDS_H
