// Errors cross mmtune's library boundaries as values. `Result<T>` holds either a value or an
// `Error`; `Status` is `Result<void>`. Exceptions are reserved for bugs (and for the CLI11 parser,
// which is caught at the CLI edge), never for bad input or a missing file.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace mmtune {

enum class ErrorCode {
  kInvalidArgument,  // the caller passed something malformed (shape, option, leading dimension)
  kUnsupported,      // well-formed, but this build or CPU cannot do it (ISA, dtype)
  kNotFound,         // a file, object or entry that should exist does not
  kIo,               // the operating system refused (permissions, disk full)
  kCorrupt,          // data on disk is not what mmtune wrote (foreign or damaged file)
  kInternal,         // a third-party library failed in a way we did not expect
  kWrongResult,      // a kernel's output disagreed with the reference, or it wrote outside it
};

const char* ErrorCodeName(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;  // one line, for a person; names the offending value

  std::string ToString() const { return std::string(ErrorCodeName(code)) + ": " + message; }
};

inline Error MakeError(ErrorCode code, std::string message) {
  return Error{code, std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}     // NOLINT: implicit by design

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  const T& value() const& { assert(ok()); return std::get<T>(state_); }
  T& value() & { assert(ok()); return std::get<T>(state_); }
  T&& value() && { assert(ok()); return std::get<T>(std::move(state_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<Error>(state_); }

 private:
  std::variant<T, Error> state_;
};

// The success case carries no string: every GEMM call returns a Status, and an OK one must cost
// no more than a flag to make, move and destroy.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  const Error& error() const { assert(!ok()); return *error_; }

 private:
  std::optional<Error> error_;
};

using Status = Result<void>;

inline Status OkStatus() { return Status(); }

}  // namespace mmtune
