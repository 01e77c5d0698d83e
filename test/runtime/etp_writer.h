// A test-only writer of .etp programs: builds the header JSON with nlohmann
// and the data segment, and lays them out as DESIGN.md "Program format"
// says. Tests reach into header() to break programs on purpose.
#ifndef ET_OPS_TEST_RUNTIME_ETP_WRITER_H
#define ET_OPS_TEST_RUNTIME_ETP_WRITER_H

#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "et_ops/dtype.h"

namespace et_ops::test {

// preamble (magic, version, header size) + header + zero pad to 64 + data.
inline std::vector<uint8_t> etp_file_bytes(const std::string& header, const std::vector<uint8_t>& data,
                                           uint32_t version = 1, const char* magic = "ETOP") {
  const std::size_t data_start = (16 + header.size() + 63) / 64 * 64;
  std::vector<uint8_t> bytes(data_start + data.size(), 0);
  std::memcpy(bytes.data(), magic, 4);
  const uint64_t size = header.size();
  for (int i = 0; i < 4; ++i) bytes[4 + i] = static_cast<uint8_t>(version >> (8 * i));
  for (int i = 0; i < 8; ++i) bytes[8 + i] = static_cast<uint8_t>(size >> (8 * i));
  if (!header.empty()) std::memcpy(bytes.data() + 16, header.data(), header.size());
  if (!data.empty()) std::memcpy(bytes.data() + data_start, data.data(), data.size());
  return bytes;
}

inline void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

class EtpWriter {
 public:
  explicit EtpWriter(std::string name = "test") {
    header_ = {{"format", "etp"}, {"version", 1},      {"name", std::move(name)}, {"values", nlohmann::json::array()},
               {"inputs", nlohmann::json::array()}, {"outputs", nlohmann::json::array()},
               {"instructions", nlohmann::json::array()}, {"metadata", nlohmann::json::object()}};
  }

  // A tensor without data: an input or an intermediate.
  uint32_t tensor(DType dtype, std::vector<int64_t> sizes, std::vector<int> dim_order = {}) {
    nlohmann::json value = {{"type", "tensor"}, {"dtype", dtype_name(dtype)}, {"sizes", sizes}};
    if (!dim_order.empty()) value["dim_order"] = dim_order;
    return add(std::move(value));
  }

  // A constant whose bytes go to the data segment (at a 64-byte aligned offset).
  uint32_t constant(DType dtype, std::vector<int64_t> sizes, const void* bytes, std::size_t nbytes,
                    std::vector<int> dim_order = {}) {
    const std::size_t offset = (data_.size() + 63) / 64 * 64;
    data_.resize(offset, 0);
    data_.insert(data_.end(), static_cast<const uint8_t*>(bytes), static_cast<const uint8_t*>(bytes) + nbytes);
    nlohmann::json value = {{"type", "tensor"}, {"dtype", dtype_name(dtype)}, {"sizes", sizes},
                            {"data", {{"offset", offset}, {"nbytes", nbytes}}}};
    if (!dim_order.empty()) value["dim_order"] = dim_order;
    return add(std::move(value));
  }
  template <typename T>
  uint32_t constant(DType dtype, std::vector<int64_t> sizes, const std::vector<T>& elements) {
    return constant(dtype, std::move(sizes), elements.data(), elements.size() * sizeof(T));
  }

  // Version 2: a symbol, symbolic entries (`mul * name + add`), tensors with
  // symbolic sizes, state tensors, symbolic ints.
  void symbol(const std::string& name, int64_t min, int64_t max) {
    use_version_2();
    header_["symbols"].push_back({{"name", name}, {"min", min}, {"max", max}});
  }
  static nlohmann::json sym(const std::string& name, int64_t mul = 1, int64_t add = 0) {
    return {{"sym", name}, {"mul", mul}, {"add", add}};
  }
  uint32_t dynamic_tensor(DType dtype, nlohmann::json sizes) {
    return add({{"type", "tensor"}, {"dtype", dtype_name(dtype)}, {"sizes", std::move(sizes)}});
  }
  template <typename T>
  uint32_t state(DType dtype, std::vector<int64_t> sizes, const std::vector<T>& elements) {
    use_version_2();
    const uint32_t v = constant(dtype, std::move(sizes), elements);
    header_["values"][v]["state"] = true;
    return v;
  }
  uint32_t symbolic_int(nlohmann::json v) { return add({{"type", "int"}, {"value", std::move(v)}}); }

  uint32_t int_value(int64_t v) { return add({{"type", "int"}, {"value", v}}); }
  uint32_t double_value(double v) { return add({{"type", "double"}, {"value", v}}); }
  uint32_t bool_value(bool v) { return add({{"type", "bool"}, {"value", v}}); }
  uint32_t scalar_type(DType t) { return add({{"type", "scalar_type"}, {"value", dtype_name(t)}}); }
  uint32_t int_list(std::vector<int64_t> v) { return add({{"type", "int_list"}, {"value", v}}); }
  uint32_t none() { return add({{"type", "none"}}); }
  uint32_t tensor_list(std::vector<uint32_t> elements) { return add({{"type", "tensor_list"}, {"value", elements}}); }

  void inputs(std::vector<uint32_t> values) { header_["inputs"] = values; }
  void outputs(std::vector<uint32_t> values) { header_["outputs"] = values; }
  void instruction(const std::string& op, std::vector<uint32_t> args) {
    header_["instructions"].push_back({{"op", op}, {"args", args}});
  }

  nlohmann::json& header() { return header_; }
  const nlohmann::json& header() const { return header_; }
  std::vector<uint8_t>& data() { return data_; }
  const std::vector<uint8_t>& data() const { return data_; }

  std::vector<uint8_t> bytes() const {
    return etp_file_bytes(header_.dump(), data_, version_);
  }
  std::string write(const std::string& path) const {
    write_file(path, bytes());
    return path;
  }

 private:
  void use_version_2() {
    version_ = 2;
    header_["version"] = 2;
  }
  uint32_t add(nlohmann::json value) {
    header_["values"].push_back(std::move(value));
    return static_cast<uint32_t>(header_["values"].size() - 1);
  }

  nlohmann::json header_;
  std::vector<uint8_t> data_;
  uint32_t version_ = 1;
};

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_RUNTIME_ETP_WRITER_H
