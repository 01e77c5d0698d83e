// Writes the programs and inputs the CLI tests (cli_test.py) run et-ops on.
// usage: make_cli_programs DIR
#include <fmt/format.h>

#include <cstdio>
#include <string>
#include <vector>

#include "et_ops/npy.h"
#include "et_ops/tensor.h"
#include "etp_writer.h"

using et_ops::DType;
using et_ops::test::EtpWriter;

namespace {

// x float32 [2, 4] -> quantize(scale, zero point 0, int8) -> q -> dequantize -> y.
EtpWriter quantized_program(double scale) {
  EtpWriter w("qdq");
  const uint32_t x = w.tensor(DType::Float32, {2, 4});
  const uint32_t q = w.tensor(DType::Int8, {2, 4});
  const uint32_t y = w.tensor(DType::Float32, {2, 4});
  const uint32_t s = w.double_value(scale), zp = w.int_value(0), qmin = w.int_value(-128), qmax = w.int_value(127);
  const uint32_t int8 = w.scalar_type(DType::Int8), none = w.none();
  w.inputs({x});
  w.outputs({q, y});
  w.instruction("quantized_decomposed::quantize_per_tensor.out", {x, s, zp, qmin, qmax, int8, q});
  w.instruction("quantized_decomposed::dequantize_per_tensor.out", {q, s, zp, qmin, qmax, int8, none, y});
  return w;
}

EtpWriter plugin_program() {
  EtpWriter w("negate");
  const uint32_t x = w.tensor(DType::Float32, {3});
  const uint32_t y = w.tensor(DType::Float32, {3});
  w.inputs({x});
  w.outputs({y});
  w.instruction("et_test_plugin::negate.out", {x, y});
  return w;
}

// relu over a column-major input and output: exercises dim-order I/O.
EtpWriter portable_program() {
  EtpWriter w("relu");
  const uint32_t x = w.tensor(DType::Float32, {2, 4}, {1, 0});
  const uint32_t y = w.tensor(DType::Float32, {2, 4}, {1, 0});
  w.inputs({x});
  w.outputs({y});
  w.instruction("aten::relu.out", {x, y});
  return w;
}

// Needs operators from both shipped sets and one nobody provides.
EtpWriter needs_everything_program() {
  EtpWriter w = quantized_program(0.1);
  w.header()["name"] = "needs_everything";
  w.instruction("aten::relu.out", {2, 2});
  w.instruction("vendor::secret.out", {2, 2});
  return w;
}

// y = a + b for a and b of [T, 2], T in [1, 4]: bounded dynamic shapes.
EtpWriter dynamic_program() {
  EtpWriter w("dynamic_add");
  w.symbol("T", 1, 4);
  const nlohmann::json shape = nlohmann::json::array({EtpWriter::sym("T"), 2});
  const uint32_t a = w.dynamic_tensor(DType::Float32, shape);
  const uint32_t b = w.dynamic_tensor(DType::Float32, shape);
  const uint32_t y = w.dynamic_tensor(DType::Float32, shape);
  w.inputs({a, b});
  w.outputs({y});
  w.instruction("aten::add.out", {a, b, w.int_value(1), y});
  return w;
}

// A program without a name that holds every kind of value: constants of
// three dtypes, a channels-last input, an int list, a tensor list, a bool
// and a none. Its operators belong to no component; `et-ops inspect` reads
// it all the same.
EtpWriter inspect_program() {
  EtpWriter w;
  w.header().erase("name");
  w.header()["metadata"] = {{"purpose", "inspect"}};
  const uint32_t x = w.tensor(DType::Float32, {1, 2, 3, 3}, {0, 2, 3, 1});
  const uint32_t weight = w.constant(DType::Int8, {2, 3}, std::vector<int8_t>{1, -2, 3, -4, 5, -6});
  const uint32_t scales = w.constant(DType::Float64, {2}, std::vector<double>{0.5, 0.25});
  const uint32_t zero_points = w.constant(DType::Int64, {2}, std::vector<int64_t>{0, 0});
  const uint32_t mixed = w.tensor(DType::Float32, {1, 2, 3, 3});
  const uint32_t dims = w.int_list({0, 1});
  const uint32_t both = w.tensor_list({x, mixed});
  const uint32_t flag = w.bool_value(true), none = w.none(), scale = w.double_value(0.125);
  const uint32_t y = w.tensor(DType::Float32, {2, 2, 3, 3});
  w.inputs({x});
  w.outputs({y});
  w.instruction("vendor::mix.out", {x, weight, scales, zero_points, dims, flag, none, scale, mixed});
  w.instruction("vendor::cat.out", {both, w.int_value(0), y});
  return w;
}

// 10000 instructions of `op` on one-element tensors, ping-ponging between
// two intermediates: a run costs 10000 dispatches of a cheap kernel. Not
// used by the tests; `et-ops run dispatch_relu.etp --input one.npy --repeat N`
// measures the per-instruction cost (see the runtime's report).
EtpWriter dispatch_program(const std::string& op) {
  EtpWriter w("dispatch");
  const uint32_t x = w.tensor(DType::Float32, {1});
  const uint32_t ping = w.tensor(DType::Float32, {1});
  const uint32_t pong = w.tensor(DType::Float32, {1});
  w.inputs({x});
  w.outputs({pong});
  w.instruction(op, {x, ping});
  for (int i = 1; i < 10000; ++i) {
    const bool odd = i % 2 == 1;
    w.instruction(op, {odd ? ping : pong, odd ? pong : ping});
  }
  return w;
}

void write_array(const std::string& path, DType dtype, std::vector<int64_t> shape, void* data) {
  if (const et_ops::Status written = et_ops::write_npy(path, et_ops::Tensor(dtype, data, std::move(shape))); !written)
    throw std::runtime_error(written.message());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    fmt::print(stderr, "usage: {} DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  quantized_program(0.1).write(dir + "/quantized.etp");
  quantized_program(-1.0).write(dir + "/bad_scale.etp");
  plugin_program().write(dir + "/plugin.etp");
  portable_program().write(dir + "/portable.etp");
  dynamic_program().write(dir + "/dynamic.etp");
  needs_everything_program().write(dir + "/needs_everything.etp");
  inspect_program().write(dir + "/inspect.etp");
  et_ops::test::write_file(dir + "/broken.etp", {'E', 'T', 'O', 'P', 1, 0, 0, 0, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0});
  float x[8] = {-1.0f, -0.26f, 0.0f, 0.12f, 0.5f, 1.04f, 3.0f, 20.0f};
  write_array(dir + "/x.npy", DType::Float32, {2, 4}, x);
  int8_t wrong_dtype[8] = {};
  write_array(dir + "/x_int8.npy", DType::Int8, {2, 4}, wrong_dtype);
  write_array(dir + "/x_flat.npy", DType::Float32, {8}, x);
  dispatch_program("aten::relu.out").write(dir + "/dispatch_relu.etp");
  dispatch_program("et_test_plugin::negate.out").write(dir + "/dispatch_negate.etp");
  float one[1] = {0.5f};
  write_array(dir + "/one.npy", DType::Float32, {1}, one);
  float three[3] = {1.5f, -2.0f, 0.0f};
  write_array(dir + "/three.npy", DType::Float32, {3}, three);
  return 0;
}
