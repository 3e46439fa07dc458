#include "mmtune/result.h"

namespace mmtune {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid argument";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kNotFound: return "not found";
    case ErrorCode::kIo: return "I/O error";
    case ErrorCode::kCorrupt: return "corrupt data";
    case ErrorCode::kInternal: return "internal error";
    case ErrorCode::kWrongResult: return "wrong result";
  }
  return "unknown error";
}

}  // namespace mmtune
