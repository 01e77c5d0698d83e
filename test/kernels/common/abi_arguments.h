// A check every kernel library's C-ABI kernels must pass: each takes
// exactly as many arguments as its schema lists, of the kinds the schema
// gives, and names a wrong one by its schema name. The schema is read here
// independently of the library's own unpacking code.
#ifndef ET_OPS_TEST_KERNELS_COMMON_ABI_ARGUMENTS_H
#define ET_OPS_TEST_KERNELS_COMMON_ABI_ARGUMENTS_H

#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/tensor.h"
#include "et_ops/value.h"

namespace et_ops::test {

struct SchemaArgument {
  std::string type;
  std::string name;
};

// The arguments of a schema "ns::op.overload(Type name[=default], *, ...) -> ...".
inline std::vector<SchemaArgument> schema_arguments(const std::string& schema) {
  const auto open = schema.find('(');
  const std::string arguments = schema.substr(open + 1, schema.rfind(") ->") - open - 1);
  static const std::regex argument(R"((?:^|, )([^,]+?) ([A-Za-z_][A-Za-z0-9_]*)(?:=[^,]*)?(?=,|$))");
  std::vector<SchemaArgument> result;
  for (std::sregex_iterator it(arguments.begin(), arguments.end(), argument), end; it != end; ++it)
    result.push_back({(*it)[1], (*it)[2]});
  return result;
}

// A value of the kind the schema type asks for (its content does not
// matter: the kinds are all read before a kernel runs).
inline et_ops_value value_of_kind(const std::string& type, Tensor& tensor, et_ops_tensor* const* tensors,
                                  const int64_t* list) {
  if (type.back() == '?') return none_value();
  if (type == "Tensor[]") return tensor_list_value(tensors, 1);
  if (type == "Tensor?[]") return optional_tensor_list_value(tensors, 1);
  if (type == "str") return string_value("none");
  if (type.rfind("Tensor", 0) == 0) return tensor_value(tensor);
  if (type.back() == ']') return int_list_value(list, 1);  // int[], int[2], SymInt[]
  if (type == "int" || type == "SymInt" || type == "Scalar") return int_value(1);
  if (type == "float") return double_value(1.0);
  if (type == "bool") return bool_value(false);
  if (type == "ScalarType") return scalar_type_value(DType::Float32);
  FAIL("no value for schema type " << type);
  return none_value();
}

inline void check_every_kernel_counts_and_names_its_arguments(const et_ops_manifest& manifest) {
  const int64_t list[] = {1};
  float element = 0.0f;
  Tensor tensor(DType::Float32, &element, {1});
  et_ops_tensor* const tensors[] = {tensor.raw()};
  for (std::size_t r = 0; r < manifest.record_count; ++r) {
    const et_ops_kernel_record& record = *et_ops_manifest_record(&manifest, r);
    const std::vector<SchemaArgument> arguments = schema_arguments(record.schema);
    INFO(record.schema);
    REQUIRE_FALSE(arguments.empty());
    std::vector<et_ops_value> none;
    CHECK(std::string(call_kernel(record.fn, none).message()) ==
          std::string(record.op) + ": expected " + std::to_string(arguments.size()) + " arguments, got 0");
    // Each argument in turn of the wrong kind, all others right: the
    // kernel names that one.
    for (std::size_t i = 0; i < arguments.size(); ++i) {
      std::vector<et_ops_value> values;
      for (const SchemaArgument& a : arguments) values.push_back(value_of_kind(a.type, tensor, tensors, list));
      values[i] = arguments[i].type == "bool" ? int_list_value(list, 1) : bool_value(true);
      const std::string message(call_kernel(record.fn, values).message());
      CHECK_THAT(message, Catch::StartsWith(std::string(record.op) + ": argument " + std::to_string(i) + " ('" +
                                            arguments[i].name + "') must be"));
    }
    // A missing (null) argument is named too.
    std::vector<et_ops_value*> nulls(arguments.size(), nullptr);
    KernelContext missing;
    record.fn(missing.raw(), nulls.data(), nulls.size());
    CHECK(std::string(missing.message()) ==
          std::string(record.op) + ": argument 0 ('" + arguments[0].name + "') is missing");
  }
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_KERNELS_COMMON_ABI_ARGUMENTS_H
