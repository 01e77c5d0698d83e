// Runs portable kernels on tensors read from raw files, for the PyTorch
// comparison (torch_reference_test.py). The kernels are registered with
// register_kernels() and found with et_ops::lookup, so the comparison goes
// through the registry and the C-ABI wrappers, as a program would.
//
// Usage: torch_driver REQUEST.json
// The request lists calls: {"calls": [{"op": "aten::add.out", "args": [...]}]}
// with one entry per schema argument, out arguments last:
//   {"tensor": {"dtype": "float32", "sizes": [2, 3], "dim_order": [0, 1],
//               "input": "a.bin" | "output": "out.bin"}}
//   {"int": 1}  {"double": 0.5}  {"bool": true}  {"int_list": [1, 2]}  {"none": null}
//   {"scalar_type": "float32"}  {"tensor_list": [{"dtype": ..., "input": ...}, ...]}
// Files are relative to the request's directory and hold the elements in
// memory order (little-endian). Input tensors are read from "input";
// output tensors start filled with 0xA5 bytes and are written to "output"
// after the call. One line per call goes to stdout: "ok" or "error: ...".
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "et_ops/registry.h"
#include "et_ops/value.h"

namespace {

using nlohmann::json;

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path));
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw std::runtime_error(fmt::format("cannot write {}", path));
}

// Storage for one call's arguments; deques keep addresses stable while
// later arguments are added.
struct CallStorage {
  std::deque<std::vector<uint64_t>> buffers;  // uint64_t: 8-byte aligned elements
  std::deque<et_ops::Tensor> tensors;
  std::deque<std::vector<int64_t>> lists;
  std::deque<std::vector<et_ops_tensor*>> tensor_lists;
  std::vector<std::pair<std::string, et_ops::Tensor*>> outputs;
};

et_ops_value tensor_arg(const json& spec, const std::string& directory, CallStorage& storage) {
  const auto dtype = et_ops::parse_dtype(spec.at("dtype").get<std::string>());
  if (!dtype) throw std::runtime_error(dtype.status().message());
  const auto sizes = spec.at("sizes").get<std::vector<int64_t>>();
  const auto dim_order = spec.at("dim_order").get<std::vector<uint8_t>>();
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  const std::size_t nbytes = static_cast<std::size_t>(numel) * et_ops::dtype_size(*dtype);
  auto& buffer = storage.buffers.emplace_back((nbytes + 7) / 8 + 1, 0xA5A5A5A5A5A5A5A5ULL);
  auto& tensor = storage.tensors.emplace_back(*dtype, buffer.data(), sizes, dim_order);
  if (spec.contains("input")) {
    const auto bytes = read_file(directory + "/" + spec.at("input").get<std::string>());
    if (bytes.size() != nbytes)
      throw std::runtime_error(fmt::format("{} holds {} bytes, expected {}", spec.at("input").dump(), bytes.size(),
                                           nbytes));
    if (nbytes > 0) std::memcpy(buffer.data(), bytes.data(), nbytes);  // an empty file's data() may be null
  } else {
    storage.outputs.emplace_back(directory + "/" + spec.at("output").get<std::string>(), &tensor);
  }
  return et_ops::tensor_value(tensor);
}

et_ops_value value_arg(const json& spec, const std::string& directory, CallStorage& storage) {
  if (spec.contains("tensor")) return tensor_arg(spec.at("tensor"), directory, storage);
  if (spec.contains("int")) return et_ops::int_value(spec.at("int").get<int64_t>());
  if (spec.contains("double")) return et_ops::double_value(spec.at("double").get<double>());
  if (spec.contains("bool")) return et_ops::bool_value(spec.at("bool").get<bool>());
  if (spec.contains("none")) return et_ops::none_value();
  if (spec.contains("scalar_type")) {
    const auto dtype = et_ops::parse_dtype(spec.at("scalar_type").get<std::string>());
    if (!dtype) throw std::runtime_error(dtype.status().message());
    return et_ops::scalar_type_value(*dtype);
  }
  if (spec.contains("tensor_list")) {
    auto& list = storage.tensor_lists.emplace_back();
    for (const json& element : spec.at("tensor_list")) list.push_back(tensor_arg(element, directory, storage).u.tensor);
    return et_ops::tensor_list_value(list.data(), static_cast<int64_t>(list.size()));
  }
  if (spec.contains("int_list")) {
    const auto& list = storage.lists.emplace_back(spec.at("int_list").get<std::vector<int64_t>>());
    return et_ops::int_list_value(list.data(), static_cast<int64_t>(list.size()));
  }
  throw std::runtime_error(fmt::format("unknown argument {}", spec.dump()));
}

// Runs one call; returns the line to print.
std::string run_call(const json& call, const std::string& directory) {
  const auto op = call.at("op").get<std::string>();
  et_ops_kernel_fn fn = et_ops::lookup(op);
  if (fn == nullptr) return fmt::format("error: no kernel registered for {}", op);
  CallStorage storage;
  std::vector<et_ops_value> args;
  for (const json& spec : call.at("args")) args.push_back(value_arg(spec, directory, storage));
  const et_ops::KernelContext ctx = et_ops::call_kernel(fn, args);
  if (!ctx.ok()) return fmt::format("error: {}", ctx.message());
  for (const auto& [path, tensor] : storage.outputs)
    write_file(path, tensor->data(), static_cast<std::size_t>(tensor->numel()) * et_ops::dtype_size(tensor->dtype()));
  return "ok";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: torch_driver REQUEST.json\n";
    return 2;
  }
  const std::string request_path = argv[1];
  const std::string directory = request_path.substr(0, request_path.find_last_of('/') + 1);
  try {
    const auto registration = et_ops::kernels::portable::register_kernels();
    if (!registration.ok()) {
      std::cerr << "register_kernels failed: " << registration.status().message() << "\n";
      return 1;
    }
    const auto text = read_file(request_path);
    const json request = json::parse(text.begin(), text.end());
    for (const json& call : request.at("calls")) std::cout << run_call(call, directory.empty() ? "." : directory) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "torch_driver: " << request_path << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}
