// Loading programs: a round trip with constants and intermediates, the
// input/output specs, and every load error naming the file and the problem.
#include <catch2/catch.hpp>
#include <algorithm>
#include <functional>
#include <string>

#include "et_ops/program.h"
#include "et_ops/value.h"
#include "program_fixtures.h"
#include "test_kernels.h"

using et_ops::DType;
using et_ops::StatusCode;
using et_ops::LoadLimits;
using et_ops::LoadResult;
using et_ops::Program;
using et_ops::test::EtpWriter;
using et_ops::test::TempDir;
using Json = nlohmann::json;

namespace {

struct Registered {
  Registered() { et_ops::test::register_test_kernels(); }
} registered;

// Loads `bytes` and requires a load error of `kind` whose text names the
// file and contains `fragment`.
void require_load_error(const std::vector<uint8_t>& bytes, const std::string& fragment,
                        const LoadLimits& limits = {}, et_ops::StatusCode kind = et_ops::StatusCode::Format) {
  TempDir dir;
  const LoadResult result = et_ops::test::load_bytes(dir, bytes, limits);
  INFO("error: " << result.status().message());
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == kind);
  CHECK_THAT(result.status().message(), Catch::Contains(dir.file("program.etp")));
  CHECK_THAT(result.status().message(), Catch::Contains(fragment));
}

void require_header_error(const std::function<void(EtpWriter&)>& breakage, const std::string& fragment,
                          const LoadLimits& limits = {}) {
  EtpWriter w = et_ops::test::add_scale_program();
  breakage(w);
  require_load_error(w.bytes(), fragment, limits);
}

std::vector<uint8_t> raw_header(const std::string& header) { return et_ops::test::etp_file_bytes(header, {}); }

}  // namespace

TEST_CASE("a program with constants and intermediates loads and runs") {
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, et_ops::test::add_scale_program().bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  const Program& program = *loaded.value();
  CHECK(program.name() == "add_scale");
  CHECK(program.path() == dir.file("program.etp"));
  CHECK(program.instruction_count() == 2);
  CHECK(program.operators() == std::vector<std::string>{"et_test_rt::add.out", "et_test_rt::scale.out"});
  CHECK(Json::parse(program.metadata_json()) == Json{{"source", "unit test"}});
  REQUIRE(program.input_count() == 1);
  REQUIRE(program.output_count() == 1);
  CHECK(program.input_spec(0).dtype == DType::Float32);
  CHECK(program.input_spec(0).sizes == std::vector<int64_t>{2, 3});
  CHECK(program.input_spec(0).dim_order == std::vector<uint8_t>{0, 1});
  CHECK(program.output_spec(0).sizes == std::vector<int64_t>{2, 3});
  CHECK(program.planned_memory_bytes() >= 3 * 64);

  auto state = program.make_state();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  REQUIRE(state->set_input(0, x.data(), x.size() * sizeof(float)));
  const et_ops::RunResult run = program.run(*state);
  INFO(run.message());
  REQUIRE(run.ok());
  CHECK(et_ops::test::output_floats(*state, 0) == std::vector<float>{3.75f, 8.75f, 13.75f, 18.75f, 23.75f, 28.75f});
  REQUIRE(program.run(*state).ok());  // runs again with the same inputs, same result
  CHECK(et_ops::test::output_floats(*state, 0)[5] == 28.75f);
}

TEST_CASE("set_input refuses a size mismatch and an unknown input") {
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, et_ops::test::add_scale_program().bytes());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  const float x[5] = {};
  const et_ops::Status wrong_size = state->set_input(0, x, sizeof x);
  CHECK(wrong_size.code() == et_ops::StatusCode::Invalid);
  CHECK_THAT(wrong_size.message(), Catch::Contains("takes 24 bytes, got 20"));
  const et_ops::Status no_such_input = state->set_input(1, x, sizeof x);
  CHECK(no_such_input.code() == et_ops::StatusCode::Invalid);
  CHECK_THAT(no_such_input.message(), Catch::Contains("1 inputs"));
}

TEST_CASE("non-tensor values reach kernels with their tags and payloads") {
  EtpWriter w("values");
  const uint32_t i = w.int_value(-7), d = w.double_value(0.25), b = w.bool_value(true);
  const uint32_t s = w.scalar_type(DType::Int8), l = w.int_list({1, 2, 3}), n = w.none();
  const uint32_t t = w.tensor(DType::Float32, {4});
  const uint32_t out = w.tensor(DType::Int64, {14});
  w.inputs({t});
  w.outputs({out});
  w.instruction("et_test_rt::describe.out", {i, d, b, s, l, n, t, out});
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  REQUIRE(loaded.value()->run(*state).ok());
  const int64_t* o = state->output(0).data_as<int64_t>();
  CHECK(std::vector<int64_t>(o, o + 14) == std::vector<int64_t>{ET_OPS_VALUE_INT, -7, ET_OPS_VALUE_DOUBLE, 250,
                                                                 ET_OPS_VALUE_BOOL, 1, ET_OPS_VALUE_SCALAR_TYPE,
                                                                 ET_OPS_DTYPE_INT8, ET_OPS_VALUE_INT_LIST, 3006,
                                                                 ET_OPS_VALUE_NONE, -1, ET_OPS_VALUE_TENSOR, 4});
}

TEST_CASE("a tensor_list reaches the kernel as the tensors it names, in every run state") {
  // out = x + c + y, with y = copy(x): an input, a constant and an intermediate.
  EtpWriter w("lists");
  const std::vector<float> c_values = {10, 20, 30};
  const uint32_t x = w.tensor(DType::Float32, {3});
  const uint32_t c = w.constant(DType::Float32, {3}, c_values);
  const uint32_t y = w.tensor(DType::Float32, {3});
  const uint32_t out = w.tensor(DType::Float32, {3});
  const uint32_t list = w.tensor_list({x, c, y});
  const uint32_t described = w.tensor(DType::Int64, {2});
  w.inputs({x});
  w.outputs({out, described});
  w.instruction("et_test_rt::copy.out", {x, y});
  w.instruction("et_test_rt::sum_list.out", {list, out});
  w.instruction("et_test_rt::describe.out", {list, described});
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  for (float scale : {1.0f, -2.0f}) {
    auto state = loaded.value()->make_state();
    const float input[] = {1 * scale, 2 * scale, 3 * scale};
    REQUIRE(state->set_input(0, input, sizeof input));
    REQUIRE(loaded.value()->run(*state).ok());
    const float* o = state->output(0).data_as<float>();
    CHECK(std::vector<float>(o, o + 3) == std::vector<float>{10 + 2 * scale, 20 + 4 * scale, 30 + 6 * scale});
    const int64_t* d = state->output(1).data_as<int64_t>();
    CHECK(std::vector<int64_t>(d, d + 2) == std::vector<int64_t>{ET_OPS_VALUE_TENSOR_LIST, 3009});
  }
}

TEST_CASE("a tensor used last through a tensor_list keeps its memory until then") {
  // y and z are both copies of x; y's last use is the list of the third
  // instruction, so z must not take y's bytes.
  EtpWriter w("list lifetimes");
  const uint32_t x = w.tensor(DType::Float32, {256});
  const uint32_t y = w.tensor(DType::Float32, {256});
  const uint32_t x2 = w.tensor(DType::Float32, {256});
  const uint32_t z = w.tensor(DType::Float32, {256});
  const uint32_t out = w.tensor(DType::Float32, {256});
  w.inputs({x});
  w.outputs({out});
  w.instruction("et_test_rt::copy.out", {x, y});
  w.instruction("et_test_rt::scale.out", {x, w.double_value(2.0), x2});
  w.instruction("et_test_rt::copy.out", {x2, z});
  w.instruction("et_test_rt::sum_list.out", {w.tensor_list({y, z}), out});
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  std::vector<float> input(256, 1.0f);
  REQUIRE(state->set_input(0, input.data(), input.size() * sizeof(float)));
  REQUIRE(loaded.value()->run(*state).ok());
  const float* o = state->output(0).data_as<float>();
  CHECK(std::count(o, o + 256, 3.0f) == 256);
}

TEST_CASE("a constant in a written tensor_list is a load error") {
  EtpWriter w("written list");
  const std::vector<float> c_values = {1};
  const uint32_t c = w.constant(DType::Float32, {1}, c_values);
  const uint32_t t = w.tensor(DType::Float32, {1});
  w.outputs({t});
  w.instruction("et_test_rt::fill_list.out", {w.tensor_list({t, c})});
  require_load_error(w.bytes(), "a constant, where et_test_rt::fill_list.out writes its argument 0");
}

TEST_CASE("non-tensor outputs are tensors over their payload") {
  EtpWriter w("outputs");
  const std::vector<int32_t> c = {7, 8};
  const uint32_t i = w.int_value(42), d = w.double_value(-1.5), b = w.bool_value(true);
  const uint32_t s = w.scalar_type(DType::UInt8), l = w.int_list({4, 5, 6});
  const uint32_t constant = w.constant(DType::Int32, {2}, c);
  w.outputs({i, d, b, s, l, constant});
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  const Program& p = *loaded.value();
  auto state = p.make_state();
  REQUIRE(p.run(*state).ok());
  CHECK(p.output_spec(0).dtype == DType::Int64);
  CHECK(p.output_spec(0).sizes.empty());
  CHECK(*state->output(0).data_as<int64_t>() == 42);
  CHECK(p.output_spec(1).dtype == DType::Float64);
  CHECK(*state->output(1).data_as<double>() == -1.5);
  CHECK(p.output_spec(2).dtype == DType::Bool);
  CHECK(*state->output(2).data_as<uint8_t>() == 1);
  CHECK(*state->output(3).data_as<int64_t>() == ET_OPS_DTYPE_UINT8);
  CHECK(p.output_spec(4).sizes == std::vector<int64_t>{3});
  CHECK(state->output(4).data_as<int64_t>()[2] == 6);
  CHECK(state->output(5).data_as<int32_t>()[1] == 8);
}

TEST_CASE("dim_order gives the tensor its strides") {
  EtpWriter w("layout");
  const uint32_t x = w.tensor(DType::Float32, {2, 3}, {1, 0});
  const uint32_t y = w.tensor(DType::Float32, {2, 3}, {1, 0});
  w.inputs({x});
  w.outputs({y});
  w.instruction("et_test_rt::copy.out", {x, y});
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  REQUIRE(loaded.ok());
  CHECK(loaded.value()->input_spec(0).dim_order == std::vector<uint8_t>{1, 0});
  auto state = loaded.value()->make_state();
  CHECK(state->input(0).stride(0) == 1);
  CHECK(state->input(0).stride(1) == 2);
  CHECK_FALSE(state->input(0).is_contiguous());
}

TEST_CASE("kernel keys are matched against the instruction's tensor arguments") {
  for (DType dtype : {DType::Int8, DType::Float32}) {
    EtpWriter w("which");
    const uint32_t x = w.tensor(dtype, {3});
    const uint32_t out = w.tensor(DType::Int64, {1});
    w.inputs({x});
    w.outputs({out});
    w.instruction("et_test_rt::which.out", {x, out});
    TempDir dir;
    const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
    REQUIRE(loaded.ok());
    auto state = loaded.value()->make_state();
    REQUIRE(loaded.value()->run(*state).ok());
    CHECK(*state->output(0).data_as<int64_t>() == (dtype == DType::Int8 ? 1 : 0));
  }
}

TEST_CASE("unknown header keys are ignored") {
  EtpWriter w = et_ops::test::add_scale_program();
  w.header()["future_feature"] = {{"anything", Json::array({1, 2, 3})}};
  w.header()["values"][0]["layout_hint"] = "nhwc";
  w.header()["instructions"][0]["debug_name"] = "add";
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  CHECK(loaded.ok());
}

TEST_CASE("a program without name, metadata or identification keys loads") {
  EtpWriter w = et_ops::test::add_scale_program();
  for (const char* key : {"name", "metadata", "format", "version"}) w.header().erase(key);
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  CHECK(loaded.value()->name().empty());
  CHECK(loaded.value()->metadata_json() == "{}");
}

TEST_CASE("files that cannot be read are File errors naming the path") {
  TempDir dir;
  LoadResult missing = Program::load(dir.file("absent.etp"));
  CHECK(missing.status().code() == et_ops::StatusCode::File);
  CHECK_THAT(missing.status().message(), Catch::Contains(dir.file("absent.etp")) && Catch::Contains("cannot open"));
  LoadResult directory = Program::load(dir.path());
  CHECK(directory.status().code() == et_ops::StatusCode::File);
  CHECK_THAT(directory.status().message(), Catch::Contains("not a regular file"));
}

TEST_CASE("preamble errors") {
  const std::string header = et_ops::test::add_scale_program().header().dump();
  SECTION("empty file") { require_load_error({}, "0 bytes, shorter than the 16-byte"); }
  SECTION("wrong magic") { require_load_error(et_ops::test::etp_file_bytes(header, {}, 1, "\x7f" "ELF"), "wrong magic 7f 45 4c 46"); }
  SECTION("unsupported version") {
    require_load_error(et_ops::test::etp_file_bytes(header, {}, 3), "unsupported .etp format version 3");
    require_load_error(et_ops::test::etp_file_bytes(header, {}, 0), "unsupported .etp format version 0");
  }
  SECTION("header size beyond the file") {
    std::vector<uint8_t> bytes = raw_header(header);
    const uint64_t too_big = bytes.size() - 15;  // one byte more than the file holds after the preamble
    for (int i = 0; i < 8; ++i) bytes[8 + static_cast<std::size_t>(i)] = static_cast<uint8_t>(too_big >> (8 * i));
    require_load_error(bytes, "runs past the end of the file");
  }
  SECTION("header size beyond the limit") {
    LoadLimits limits;
    limits.max_header_bytes = 100;
    require_load_error(raw_header(header), "exceeds the limit of 100 bytes", limits);
  }
}

TEST_CASE("header JSON errors") {
  SECTION("invalid JSON") { require_load_error(raw_header("{\"values\": [,]}"), "not valid UTF-8 JSON"); }
  SECTION("invalid UTF-8") { require_load_error(raw_header("{\"name\": \"\xff\xfe\"}"), "not valid UTF-8 JSON"); }
  SECTION("not an object") { require_load_error(raw_header("[1, 2]"), "the header must be an object, not an array"); }
  SECTION("nesting beyond the limit") {
    std::string deep = "{\"metadata\": " + std::string(100, '[') + std::string(100, ']') + "}";
    require_load_error(raw_header(deep), "deeper than the limit of 64 levels");
  }
  SECTION("nesting deep enough to overflow a recursive parser") {
    std::string deep = std::string(1000000, '[') + std::string(1000000, ']');
    require_load_error(raw_header(deep), "deeper than the limit of 64 levels");
  }
  SECTION("brackets inside strings are not nesting") {
    EtpWriter w = et_ops::test::add_scale_program();
    w.header()["metadata"] = {{"text", std::string(100, '[') + "\"{"}};
    TempDir dir;
    const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
    INFO(loaded.status().message());
    CHECK(loaded.ok());
  }
  SECTION("a lower depth limit applies") {
    LoadLimits limits;
    limits.max_json_depth = 3;
    require_header_error([](EtpWriter& w) { w.header()["metadata"] = {{"a", {{"b", 1}}}}; }, "deeper than the limit of 3",
                         limits);
  }
}

TEST_CASE("missing required keys") {
  for (const char* key : {"values", "inputs", "outputs", "instructions"}) {
    DYNAMIC_SECTION(key) {
      require_header_error([key](EtpWriter& w) { w.header().erase(key); },
                           std::string("lacks the required key '") + key + "'");
    }
  }
  SECTION("tensor dtype") {
    require_header_error([](EtpWriter& w) { w.header()["values"][0].erase("dtype"); },
                         "values[0] lacks the required key 'dtype'");
  }
  SECTION("value type") {
    require_header_error([](EtpWriter& w) { w.header()["values"][2].erase("type"); }, "values[2] lacks the required key 'type'");
  }
  SECTION("payload") {
    require_header_error([](EtpWriter& w) { w.header()["values"][3].erase("value"); }, "values[3] lacks the required key 'value'");
  }
  SECTION("constant offset") {
    require_header_error([](EtpWriter& w) { w.header()["values"][1]["data"].erase("offset"); },
                         "values[1].data lacks the required key 'offset'");
  }
  SECTION("instruction op") {
    require_header_error([](EtpWriter& w) { w.header()["instructions"][1].erase("op"); },
                         "instructions[1] lacks the required key 'op'");
  }
}

TEST_CASE("wrong types") {
  struct Case {
    const char* what;
    std::function<void(EtpWriter&)> breakage;
    const char* fragment;
  };
  const Case cases[] = {
      {"values not an array", [](EtpWriter& w) { w.header()["values"] = Json::object(); }, "values must be an array, not an object"},
      {"value not an object", [](EtpWriter& w) { w.header()["values"][0] = 3; }, "values[0] must be an object, not an integer"},
      {"unknown value type", [](EtpWriter& w) { w.header()["values"][3]["type"] = "complex"; }, "values[3].type is 'complex', not a known value type"},
      {"sizes not an array", [](EtpWriter& w) { w.header()["values"][0]["sizes"] = "2x3"; }, "values[0].sizes must be an array, not a string"},
      {"size not an integer", [](EtpWriter& w) { w.header()["values"][0]["sizes"][1] = 1.5; }, "values[0].sizes[1] must be an integer, not a non-integer number"},
      {"dtype not a string", [](EtpWriter& w) { w.header()["values"][0]["dtype"] = 0; }, "values[0].dtype must be a string, not an integer"},
      {"int value a float", [](EtpWriter& w) { w.header()["values"][3] = {{"type", "int"}, {"value", 2.5}}; }, "values[3].value must be an integer"},
      {"double value a string", [](EtpWriter& w) { w.header()["values"][3]["value"] = "2.5"; }, "values[3].value must be a number, not a string"},
      {"bool value an integer", [](EtpWriter& w) { w.header()["values"][3] = {{"type", "bool"}, {"value", 1}}; }, "values[3].value must be a boolean"},
      {"int_list element", [](EtpWriter& w) { w.header()["values"][3] = {{"type", "int_list"}, {"value", {1, "2"}}}; }, "values[3].value[1] must be an integer"},
      {"unknown scalar type", [](EtpWriter& w) { w.header()["values"][3] = {{"type", "scalar_type"}, {"value", "qint8"}}; }, "values[3].value is 'qint8', not a known dtype"},
      {"op not a string", [](EtpWriter& w) { w.header()["instructions"][0]["op"] = 5; }, "instructions[0].op must be a string, not an integer"},
      {"empty op", [](EtpWriter& w) { w.header()["instructions"][0]["op"] = ""; }, "instructions[0].op is empty"},
      {"args not an array", [](EtpWriter& w) { w.header()["instructions"][0]["args"] = 0; }, "instructions[0].args must be an array"},
      {"arg not an integer", [](EtpWriter& w) { w.header()["instructions"][0]["args"][0] = 0.5; }, "instructions[0].args[0] must be an integer"},
      {"instruction not an object", [](EtpWriter& w) { w.header()["instructions"][0] = Json::array(); }, "instructions[0] must be an object"},
      {"name not a string", [](EtpWriter& w) { w.header()["name"] = 1; }, "name must be a string"},
      {"metadata not an object", [](EtpWriter& w) { w.header()["metadata"] = "x"; }, "metadata must be an object, not a string"},
      {"data not an object", [](EtpWriter& w) { w.header()["values"][1]["data"] = 0; }, "values[1].data must be an object"},
      {"format", [](EtpWriter& w) { w.header()["format"] = "onnx"; }, "format is 'onnx', expected 'etp'"},
      {"header version", [](EtpWriter& w) { w.header()["version"] = 2; }, "version is 2 in the header"},
  };
  for (const Case& c : cases) DYNAMIC_SECTION(c.what) { require_header_error(c.breakage, c.fragment); }
}

TEST_CASE("indices and references") {
  const struct {
    const char* what;
    std::function<void(EtpWriter&)> breakage;
    const char* fragment;
  } cases[] = {
      {"input out of range", [](EtpWriter& w) { w.header()["inputs"] = {99}; }, "inputs[0] is 99, out of range: the program has 5 values"},
      {"negative output", [](EtpWriter& w) { w.header()["outputs"] = {-1}; }, "outputs[0] is -1, out of range"},
      {"arg out of range", [](EtpWriter& w) { w.header()["instructions"][1]["args"][2] = 5; }, "instructions[1].args[2] is 5, out of range"},
      {"huge index", [](EtpWriter& w) { w.header()["instructions"][0]["args"][0] = UINT64_MAX; }, "does not fit in a 64-bit signed integer"},
      {"input naming a constant", [](EtpWriter& w) { w.header()["inputs"] = {1}; }, "inputs[0] names value 1, a constant"},
      {"input naming a double", [](EtpWriter& w) { w.header()["inputs"] = {3}; }, "inputs[0] names value 3, which is not a tensor"},
      {"input named twice", [](EtpWriter& w) { w.header()["inputs"] = {0, 0}; }, "inputs[1] names value 0 a second time"},
      {"output naming none", [](EtpWriter& w) { w.header()["values"][3] = {{"type", "none"}}; w.header()["outputs"] = {3}; }, "outputs[0] names value 3, which is none"},
      {"tensor_list element out of range", [](EtpWriter& w) { w.tensor_list({0, 9}); }, "values[5].value[1] is 9, out of range: the program has 6 values"},
      {"tensor_list element not a tensor", [](EtpWriter& w) { w.tensor_list({0, 3}); }, "values[5].value[1] names value 3, which is not a tensor"},
      {"tensor_list element negative", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "tensor_list"}, {"value", {-1}}}); }, "values[5].value[0]"},
      {"tensor_list without a list", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "tensor_list"}, {"value", 2}}); }, "values[5].value"},
      {"output naming a tensor_list", [](EtpWriter& w) { w.header()["outputs"] = {w.tensor_list({0})}; }, "outputs[0] names value 5, a tensor_list"},
      {"optional_tensor_list element not a tensor", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "optional_tensor_list"}, {"value", {0, nullptr, 3}}}); }, "values[5].value[2] names value 3, which is not a tensor"},
      {"optional_tensor_list element a string", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "optional_tensor_list"}, {"value", {"a"}}}); }, "values[5].value[0]"},
      {"null in a plain tensor_list", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "tensor_list"}, {"value", {0, nullptr}}}); }, "values[5].value[1]"},
      {"string without a string", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "string"}, {"value", 3}}); }, "values[5].value"},
      {"output naming a string", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "string"}, {"value", "tanh"}}); w.header()["outputs"] = {5}; }, "outputs[0] names value 5, a string"},
      {"output naming an optional_tensor_list", [](EtpWriter& w) { w.header()["values"].push_back({{"type", "optional_tensor_list"}, {"value", {0, nullptr}}}); w.header()["outputs"] = {5}; }, "outputs[0] names value 5, an optional_tensor_list"},
  };
  for (const auto& c : cases) DYNAMIC_SECTION(c.what) { require_header_error(c.breakage, c.fragment); }
}

TEST_CASE("tensor shapes, layouts and data ranges") {
  const struct {
    const char* what;
    std::function<void(EtpWriter&)> breakage;
    const char* fragment;
  } cases[] = {
      {"unknown dtype", [](EtpWriter& w) { w.header()["values"][2]["dtype"] = "float8"; }, "values[2].dtype is 'float8', not a known dtype (float32, float64"},
      {"negative size", [](EtpWriter& w) { w.header()["values"][2]["sizes"] = {2, -3}; }, "values[2].sizes[1] is -3; it must not be negative"},
      {"element count overflows", [](EtpWriter& w) { w.header()["values"][2]["sizes"] = {int64_t(1) << 40, int64_t(1) << 40}; }, "values[2].sizes: the element count overflows"},
      {"overflow hidden by a zero", [](EtpWriter& w) { w.header()["values"][2]["sizes"] = {0, int64_t(1) << 40, int64_t(1) << 40}; }, "the element count overflows"},
      {"bytes overflow", [](EtpWriter& w) { w.header()["values"][2]["sizes"] = {int64_t(1) << 62}; }, "the size in bytes overflows"},
      {"too many dims", [](EtpWriter& w) { w.header()["values"][2]["sizes"] = std::vector<int>(17, 1); }, "values[2].sizes has 17 dimensions; at most 16"},
      {"dim_order repeats", [](EtpWriter& w) { w.header()["values"][2]["dim_order"] = {0, 0}; }, "values[2].dim_order is not a permutation of 0..1"},
      {"dim_order out of range", [](EtpWriter& w) { w.header()["values"][2]["dim_order"] = {0, 2}; }, "values[2].dim_order is not a permutation"},
      {"dim_order length", [](EtpWriter& w) { w.header()["values"][2]["dim_order"] = {0}; }, "values[2].dim_order has 1 entries but the tensor has 2 dimensions"},
      {"nbytes mismatch", [](EtpWriter& w) { w.header()["values"][1]["data"]["nbytes"] = 20; }, "values[1].data.nbytes is 20 but the dtype and sizes make 24 bytes"},
      {"unaligned offset", [](EtpWriter& w) { w.header()["values"][1]["data"]["offset"] = 8; }, "values[1].data.offset 8 is not a multiple of 64"},
      {"range past the file", [](EtpWriter& w) { w.header()["values"][1]["data"]["offset"] = 64; }, "values[1].data: 24 bytes at offset 64 lie outside the data segment (24 bytes)"},
      {"offset far past the file", [](EtpWriter& w) { w.header()["values"][1]["data"]["offset"] = INT64_MAX - 63; }, "lie outside the data segment"},
      {"negative offset", [](EtpWriter& w) { w.header()["values"][1]["data"]["offset"] = -64; }, "values[1].data.offset is -64; it must not be negative"},
  };
  for (const auto& c : cases) DYNAMIC_SECTION(c.what) { require_header_error(c.breakage, c.fragment); }
}

TEST_CASE("load limits") {
  LoadLimits limits;
  SECTION("memory") {
    limits.max_memory_bytes = 100;
    require_header_error([](EtpWriter&) {}, "more than the limit of 100 bytes", limits);
  }
  SECTION("one tensor beyond the memory limit") {
    require_header_error([](EtpWriter& w) { w.header()["values"][2]["sizes"] = {int64_t(1) << 40}; },
                         "values[2] needs 4398046511104 bytes, more than the memory limit");
  }
  SECTION("value count") {
    limits.max_values = 4;
    require_header_error([](EtpWriter&) {}, "values has 5 entries, more than the limit of 4", limits);
  }
  SECTION("instruction count") {
    limits.max_instructions = 1;
    require_header_error([](EtpWriter&) {}, "instructions has 2 entries, more than the limit of 1", limits);
  }
}

TEST_CASE("missing operators are reported all at once, with their components") {
  EtpWriter w = et_ops::test::add_scale_program();
  const Json args = w.header()["instructions"][0]["args"];
  for (const char* op : {"quantized_decomposed::add.out", "aten::relu.out", "quantized_decomposed::add.out",
                         "quantized_decomposed::quantize_per_tensor.out", "my_namespace::custom.out"})
    w.header()["instructions"].push_back({{"op", op}, {"args", args}});
  TempDir dir;
  const LoadResult result = et_ops::test::load_bytes(dir, w.bytes());
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == et_ops::StatusCode::MissingOperators);
  REQUIRE(result.status().missing_operators().size() == 4);
  CHECK(result.status().missing_operators()[0].op == "quantized_decomposed::add.out");
  REQUIRE(result.status().missing_operators()[0].component != nullptr);
  CHECK(result.status().missing_operators()[0].component->name == "kernels_quantized");
  CHECK(result.status().missing_operators()[1].component->name == "kernels_portable");
  CHECK(result.status().missing_operators()[3].component == nullptr);
  CHECK_THAT(result.status().message(), Catch::Contains(dir.file("program.etp")) && Catch::Contains("aten::relu.out") &&
                               Catch::Contains("quantized_decomposed::quantize_per_tensor.out") &&
                               Catch::Contains("my_namespace::custom.out") && Catch::Contains("et-kernels-quantized") &&
                               Catch::Contains("packaging problem"));
  CHECK_THAT(result.status().message(), !Catch::Contains("et_test_rt::add.out"));
}

TEST_CASE("inspect lists the operators without resolving them") {
  EtpWriter w = et_ops::test::add_scale_program();
  w.instruction("vendor::fancy.out", {0, 2});
  TempDir dir;
  const std::string path = w.write(dir.file("p.etp"));
  const et_ops::Result<Program::Inspection> inspected = Program::inspect(path);
  REQUIRE(inspected.ok());
  const Program::Inspection& inspection = *inspected;
  CHECK(inspection.name == "add_scale");
  CHECK(inspection.operators ==
        std::vector<std::string>{"et_test_rt::add.out", "et_test_rt::scale.out", "vendor::fancy.out"});
  et_ops::test::write_file(path, {'E', 'T'});
  const et_ops::Result<Program::Inspection> refused = Program::inspect(path);
  CHECK(refused.status().code() == et_ops::StatusCode::Format);
  CHECK_THAT(refused.status().message(), Catch::Contains(path) && Catch::Contains("shorter than"));
}
