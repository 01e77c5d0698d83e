// Status and Result<T>: how every function of the C++ API reports an error.
//
// A Status is a code and a message that names what is wrong (the file, the
// argument, the bound); a Result<T> is a T or the Status that says why there
// is none. Nothing in the API throws: a caller tests ok() (or the object in a
// condition) and reads status().message(). The C ABI keeps et_ops_status,
// whose values are the first StatusCode values.
#ifndef ET_OPS_STATUS_H
#define ET_OPS_STATUS_H

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/diagnostics.h"

namespace et_ops {

enum class StatusCode : int32_t {
  Ok = ET_OPS_OK,
  Conflict = ET_OPS_ERROR_CONFLICT,  // registration: first-wins met a different copy of a kernel
  Invalid = ET_OPS_ERROR_INVALID,    // an argument, text or manifest that is not valid
  Policy = ET_OPS_ERROR_POLICY,      // ET_OPS_DUPLICATE_POLICY is not a policy
  NoMemory = ET_OPS_ERROR_NO_MEMORY, // an allocation failed; nothing was changed
  File = 16,                         // a file cannot be opened, read or written
  Format,                            // the bytes are not a valid .etp program or .npy array
  MissingOperators,                  // a program needs operators this process has not registered
  LibraryOpen,                       // dlopen refused a kernel library
  EntryPoint,                        // a kernel library has no usable entry point
  KernelFailed,                      // a kernel reported an error (while preparing or running)
};

// "ok", "conflict", "invalid", "policy", "no_memory", "file", "format",
// "missing_operators", "library_open", "entry_point", "kernel_failed".
constexpr std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::Ok: return "ok";
    case StatusCode::Conflict: return "conflict";
    case StatusCode::Invalid: return "invalid";
    case StatusCode::Policy: return "policy";
    case StatusCode::NoMemory: return "no_memory";
    case StatusCode::File: return "file";
    case StatusCode::Format: return "format";
    case StatusCode::MissingOperators: return "missing_operators";
    case StatusCode::LibraryOpen: return "library_open";
    case StatusCode::EntryPoint: return "entry_point";
    case StatusCode::KernelFailed: return "kernel_failed";
  }
  return "unknown";
}

class Status {
 public:
  Status() = default;  // ok
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  // A MissingOperators status: the report's message, and its operators.
  explicit Status(MissingOperatorReport report)
      : code_(StatusCode::MissingOperators),
        message_(std::move(report.message)),
        missing_(std::make_shared<const std::vector<MissingOperator>>(std::move(report.missing))) {}

  bool ok() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The operators that are not registered (code MissingOperators), with the
  // component that provides each; empty for every other code.
  const std::vector<MissingOperator>& missing_operators() const {
    static const std::vector<MissingOperator> none;
    return missing_ ? *missing_ : none;
  }

  // The same status with `context` and ": " before the message.
  Status prefixed(std::string_view context) const {
    Status out = *this;
    out.message_ = std::string(context) + ": " + message_;
    return out;
  }

 private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
  std::shared_ptr<const std::vector<MissingOperator>> missing_;  // shared: statuses copy cheaply
};

// A T, or the Status that says why there is none. value(), * and -> need
// ok() (like std::optional's *).
template <typename T>
class Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Status>, "use Status itself for functions with no value");

 public:
  Result(const T& value) : value_(value) {}  // NOLINT: implicit, like std::optional
  Result(T&& value) : value_(std::move(value)) {}  // NOLINT (and `return local;` moves)
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Status(StatusCode::Invalid, "a Result was made from an ok status without a value");
  }
  Result(StatusCode code, std::string message) : Result(Status(code, std::move(message))) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace et_ops

#endif  // ET_OPS_STATUS_H
