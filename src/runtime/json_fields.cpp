// Typed access to header JSON fields, with path-naming errors.
#include "runtime/json_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "runtime/load_errors.h"

namespace et_ops::runtime {
namespace {

const char* kind_of(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a non-integer number";
    default: return "an unsupported JSON value";
  }
}

[[noreturn]] void wrong_type(const Json& value, const std::string& path, const char* expected) {
  throw FormatError(fmt::format("{} must be {}, not {}", path, expected, kind_of(value)));
}

// The deepest nesting of arrays and objects in `text`, counting brackets
// outside strings. Exact for valid JSON; for invalid JSON the parser that
// runs next reports the real problem.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// nlohmann's own messages start with "[json.exception.parse_error.101] ".
std::string without_exception_tag(const std::string& what) {
  if (what.empty() || what[0] != '[') return what;
  const std::size_t end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

}  // namespace

Json parse_json_limited(std::string_view text, int max_depth) {
  // Checked before parsing, so a hostile header never builds a deep tree.
  // (nlohmann's parser callback could check it too, but its callback parser
  // rescans the parent container at every object end: quadratic in the
  // number of instructions.)
  if (nesting_depth(text) > max_depth)
    throw FormatError(fmt::format("the header nests JSON deeper than the limit of {} levels", max_depth));
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    throw FormatError(fmt::format("the header is not valid UTF-8 JSON: {}", without_exception_tag(e.what())));
  }
}

std::string field_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : fmt::format("{}.{}", parent, key);
}

std::string item_path(const std::string& parent, std::size_t index) { return fmt::format("{}[{}]", parent, index); }

void require_object(const Json& value, const std::string& path) {
  if (!value.is_object()) wrong_type(value, path, "an object");
}

const Json& require_key(const Json& object, std::string_view key, const std::string& object_path) {
  const Json* found = optional_key(object, key);
  if (found == nullptr)
    throw FormatError(object_path.empty() ? fmt::format("the header lacks the required key '{}'", key)
                                          : fmt::format("{} lacks the required key '{}'", object_path, key));
  return *found;
}

const Json* optional_key(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json::array_t& require_array(const Json& value, const std::string& path) {
  if (!value.is_array()) wrong_type(value, path, "an array");
  return value.get_ref<const Json::array_t&>();
}

const std::string& require_string(const Json& value, const std::string& path) {
  if (!value.is_string()) wrong_type(value, path, "a string");
  return value.get_ref<const std::string&>();
}

int64_t require_int64(const Json& value, const std::string& path) {
  if (value.is_number_unsigned()) {
    const uint64_t u = value.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      throw FormatError(fmt::format("{} is {}, which does not fit in a 64-bit signed integer", path, u));
    return static_cast<int64_t>(u);
  }
  if (!value.is_number_integer()) wrong_type(value, path, "an integer");
  return value.get<int64_t>();
}

uint64_t require_non_negative(const Json& value, const std::string& path) {
  const int64_t v = require_int64(value, path);
  if (v < 0) throw FormatError(fmt::format("{} is {}; it must not be negative", path, v));
  return static_cast<uint64_t>(v);
}

double require_number(const Json& value, const std::string& path) {
  if (!value.is_number()) wrong_type(value, path, "a number");
  return value.get<double>();
}

bool require_bool(const Json& value, const std::string& path) {
  if (!value.is_boolean()) wrong_type(value, path, "a boolean");
  return value.get<bool>();
}

uint32_t require_index(const Json& value, std::size_t count, const std::string& path) {
  const int64_t index = require_int64(value, path);
  if (index < 0 || static_cast<uint64_t>(index) >= count)
    throw FormatError(fmt::format("{} is {}, out of range: the program has {} values", path, index, count));
  return static_cast<uint32_t>(index);
}

}  // namespace et_ops::runtime
