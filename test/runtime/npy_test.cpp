// .npy reading and writing: every program dtype round trips, any dim order
// is written in logical C order, versions 1.0-3.0 are read, and malformed
// files are clear errors (never crashes).
#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "et_ops/npy.h"
#include "et_ops/tensor.h"
#include "etp_writer.h"
#include "temp_dir.h"

using et_ops::DType;
using et_ops::NpyArray;
using et_ops::Tensor;

namespace {

std::vector<uint8_t> pattern(std::size_t n) {
  std::vector<uint8_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  return bytes;
}

// A .npy file with the given version and dict, then `data`.
std::vector<uint8_t> npy_bytes(int major, const std::string& dict, const std::vector<uint8_t>& data) {
  std::string header = dict;
  const std::size_t preamble = major == 1 ? 10 : 12;
  while ((preamble + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<uint8_t> bytes = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(major), 0};
  for (std::size_t i = 0; i < preamble - 8; ++i) bytes.push_back(static_cast<uint8_t>(header.size() >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

et_ops::Result<NpyArray> parse(const std::vector<uint8_t>& bytes) { return et_ops::parse_npy(bytes.data(), bytes.size(), "in.npy"); }

void require_npy_error(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  const et_ops::Result<NpyArray> array = parse(bytes);
  INFO("error: " << array.status().message());
  REQUIRE_FALSE(array.ok());
  CHECK_THAT(array.status().message(), Catch::StartsWith("in.npy: ") && Catch::Contains(fragment));
}

}  // namespace

TEST_CASE("every program dtype round trips through .npy") {
  for (int raw = 0; raw < et_ops::kDTypeCount; ++raw) {
    const auto dtype = static_cast<DType>(raw);
    DYNAMIC_SECTION(et_ops::dtype_name(dtype)) {
      std::vector<uint8_t> data = pattern(6 * et_ops::dtype_size(dtype));
      if (dtype == DType::Bool)
        for (uint8_t& b : data) b &= 1;
      Tensor tensor(dtype, data.data(), {2, 3});
      const std::vector<uint8_t> encoded = et_ops::encode_npy(tensor);
      CHECK((encoded.size() - data.size()) % 64 == 0);  // the data starts 64-byte aligned
      const et_ops::Result<NpyArray> array = parse(encoded);
      INFO(array.status().message());
      REQUIRE(array.ok());
      // NumPy has no bfloat16: its raw bits travel as uint16.
      CHECK(array->dtype == (dtype == DType::BFloat16 ? DType::UInt16 : dtype));
      CHECK(array->shape == std::vector<int64_t>{2, 3});
      CHECK(array->data == data);
    }
  }
}

TEST_CASE("a tensor in any dim order is written in logical C order") {
  // Logical [[0, 1, 2], [3, 4, 5]] stored column-major (dim_order 1, 0).
  std::vector<int32_t> column_major = {0, 3, 1, 4, 2, 5};
  Tensor tensor(DType::Int32, column_major.data(), {2, 3}, {1, 0});
  const et_ops::Result<NpyArray> array = parse(et_ops::encode_npy(tensor));
  REQUIRE(array.ok());
  std::vector<int32_t> logical(6);
  std::memcpy(logical.data(), array->data.data(), 24);
  CHECK(logical == std::vector<int32_t>{0, 1, 2, 3, 4, 5});
}

TEST_CASE("a 3-d channels-last tensor is written in logical order") {
  // sizes [2, 2, 3], dim_order [0, 2, 1]: memory walks dim 0, then 2, then 1.
  std::vector<int16_t> memory(12);
  const int64_t strides[3] = {6, 1, 2};
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) memory[size_t(a * strides[0] + b * strides[1] + c * strides[2])] = int16_t(a * 100 + b * 10 + c);
  Tensor tensor(DType::Int16, memory.data(), {2, 2, 3}, {0, 2, 1});
  const et_ops::Result<NpyArray> array = parse(et_ops::encode_npy(tensor));
  REQUIRE(array.ok());
  std::vector<int16_t> logical(12);
  std::memcpy(logical.data(), array->data.data(), 24);
  CHECK(logical == std::vector<int16_t>{0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112});
}

TEST_CASE("0-d, 1-d and empty arrays") {
  int64_t scalar = 42;
  const et_ops::Result<NpyArray> zero_d = parse(et_ops::encode_npy(Tensor(DType::Int64, &scalar, {})));
  REQUIRE(zero_d.ok());
  CHECK(zero_d->shape.empty());
  CHECK(zero_d->data.size() == 8);
  float five[5] = {1, 2, 3, 4, 5};
  const std::vector<uint8_t> one_d = et_ops::encode_npy(Tensor(DType::Float32, five, {5}));
  CHECK(std::string(one_d.begin() + 10, one_d.begin() + 70).find("'shape': (5,)") != std::string::npos);
  CHECK(parse(one_d)->shape == std::vector<int64_t>{5});
  const et_ops::Result<NpyArray> empty = parse(et_ops::encode_npy(Tensor(DType::Float32, five, {0, 3})));
  REQUIRE(empty.ok());
  CHECK(empty->shape == std::vector<int64_t>{0, 3});
  CHECK(empty->data.empty());
}

TEST_CASE("format versions 1.0, 2.0 and 3.0 are read") {
  const std::vector<uint8_t> data = pattern(8);
  for (int major : {1, 2, 3}) {
    const et_ops::Result<NpyArray> array = parse(npy_bytes(major, "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }", data));
    INFO(array.status().message());
    REQUIRE(array.ok());
    CHECK(array->dtype == DType::Int16);
    CHECK(array->data == data);
  }
  const et_ops::Result<NpyArray> reordered = parse(npy_bytes(1, "{\"shape\": (4,), \"fortran_order\": False, \"descr\": \"|u1\"}", pattern(4)));
  CHECK(reordered.ok());
}

TEST_CASE("malformed .npy files are clear errors") {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  const std::vector<uint8_t> data = pattern(8);
  SECTION("bad magic") {
    std::vector<uint8_t> bytes = npy_bytes(1, good, data);
    bytes[1] = 'X';
    require_npy_error(bytes, "not a .npy file");
  }
  SECTION("too short") { require_npy_error({0x93, 'N'}, "not a .npy file"); }
  SECTION("version") { require_npy_error(npy_bytes(4, good, data), "unsupported .npy format version 4.0"); }
  SECTION("header length past the end") {
    std::vector<uint8_t> bytes = npy_bytes(1, good, data);
    bytes[9] = 0xFF;
    require_npy_error(bytes, "runs past the end of the file");
  }
  SECTION("Fortran order") {
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", data), "Fortran-order");
  }
  SECTION("big-endian") {
    require_npy_error(npy_bytes(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", data), "big-endian");
  }
  SECTION("unsupported dtype") {
    require_npy_error(npy_bytes(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (2,), }", data),
                      "dtype '<u4' is not supported");
    require_npy_error(npy_bytes(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data),
                      "dtype '<c8' is not supported");
  }
  SECTION("structured dtype") {
    require_npy_error(npy_bytes(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data),
                      "structured dtypes are not supported");
  }
  SECTION("missing key") {
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'shape': (2,), }", data), "the dict lacks 'fortran_order'");
  }
  SECTION("unknown key") {
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'order': 'C', 'fortran_order': False, 'shape': (2,)}", data),
                      "unexpected key 'order'");
  }
  SECTION("negative dimension") {
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", data),
                      "expected a non-negative integer");
  }
  SECTION("overflowing shape") {
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", data),
                      "the array size overflows");
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }", data),
                      "a dimension overflows");
  }
  SECTION("an empty shape whose strides would overflow") {  // found by fuzz_npy_reader
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 4611686018427387904, 4), }", {}),
                      "the array size overflows");
  }
  SECTION("too many dimensions") {
    require_npy_error(npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", data),
                      "17 dimensions");
  }
  SECTION("truncated data") { require_npy_error(npy_bytes(1, good, pattern(7)), "needs 8 bytes of data but the file has 7"); }
  SECTION("extra data") { require_npy_error(npy_bytes(1, good, pattern(9)), "needs 8 bytes of data but the file has 9"); }
  SECTION("garbage dict") { require_npy_error(npy_bytes(1, "descr=<f4", data), "malformed header"); }
  SECTION("text after the dict") { require_npy_error(npy_bytes(1, good + " x", data), "unexpected text after the dict"); }
}

TEST_CASE("every truncation of a .npy file is an error, never a crash") {
  float values[3] = {1, 2, 3};
  const std::vector<uint8_t> bytes = et_ops::encode_npy(Tensor(DType::Float32, values, {3}));
  for (std::size_t size = 0; size < bytes.size(); ++size) {
    INFO("truncated to " << size);
    CHECK_FALSE(et_ops::parse_npy(bytes.data(), size).ok());
  }
}

TEST_CASE("files: write, read back, and errors naming the path") {
  et_ops::test::TempDir dir;
  double values[4] = {0.5, -1, 2, 1e300};
  REQUIRE(et_ops::write_npy(dir.file("a.npy"), Tensor(DType::Float64, values, {2, 2})).ok());
  const et_ops::Result<NpyArray> array = et_ops::read_npy(dir.file("a.npy"));
  REQUIRE(array.ok());
  CHECK(std::memcmp(array->data.data(), values, sizeof values) == 0);
  const et_ops::Result<NpyArray> absent = et_ops::read_npy(dir.file("absent.npy"));
  CHECK(absent.status().code() == et_ops::StatusCode::File);
  CHECK_THAT(absent.status().message(), Catch::Contains(dir.file("absent.npy")) && Catch::Contains("cannot open"));
  const et_ops::Status unwritten = et_ops::write_npy(dir.file("no/such/dir.npy"), Tensor(DType::Float64, values, {4}));
  CHECK(unwritten.code() == et_ops::StatusCode::File);
  CHECK_THAT(unwritten.message(), Catch::Contains(dir.file("no/such/dir.npy")) && Catch::Contains("cannot create"));
  et_ops::test::write_file(dir.file("bad.npy"), {1, 2, 3});
  const et_ops::Result<NpyArray> bad = et_ops::read_npy(dir.file("bad.npy"));
  CHECK(bad.status().code() == et_ops::StatusCode::Format);
  CHECK_THAT(bad.status().message(), Catch::StartsWith(dir.file("bad.npy")));
}
