#include "mmtune/types.h"

#include <charconv>
#include <optional>

#include "common/shape_range.h"

namespace mmtune {

const char* ToString(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kBF16: return "bf16";
    case DType::kS8: return "s8";
  }
  return "?";
}

const char* ToString(Layout layout) {
  return layout == Layout::kRowMajor ? "row" : "col";
}

std::string TransPairToString(Trans trans_a, Trans trans_b) {
  std::string text;
  text += trans_a == Trans::kYes ? 'T' : 'N';
  text += trans_b == Trans::kYes ? 'T' : 'N';
  return text;
}

Result<DType> ParseDType(std::string_view text) {
  if (text == "f32") return DType::kF32;
  if (text == "f64") return DType::kF64;
  if (text == "bf16") return DType::kBF16;
  if (text == "s8") return DType::kS8;
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown dtype '" + std::string(text) + "' (expected f32, f64, bf16 or s8)");
}

Result<Layout> ParseLayout(std::string_view text) {
  if (text == "row") return Layout::kRowMajor;
  if (text == "col") return Layout::kColMajor;
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown layout '" + std::string(text) + "' (expected row or col)");
}

const char* ToString(CallForm form) {
  switch (form) {
    case CallForm::kPlain: return "plain";
    case CallForm::kPackedB: return "packed-b";
  }
  return "?";
}

Result<CallForm> ParseCallForm(std::string_view text) {
  if (text == "plain") return CallForm::kPlain;
  if (text == "packed-b") return CallForm::kPackedB;
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown call form '" + std::string(text) + "' (expected plain or packed-b)");
}

Result<std::pair<Trans, Trans>> ParseTransPair(std::string_view text) {
  auto one = [](char c) -> std::optional<Trans> {
    if (c == 'N' || c == 'n') return Trans::kNo;
    if (c == 'T' || c == 't') return Trans::kYes;
    return std::nullopt;
  };
  if (text.size() == 2) {
    const auto a = one(text[0]), b = one(text[1]);
    if (a && b) return std::make_pair(*a, *b);
  }
  return MakeError(ErrorCode::kInvalidArgument,
                   "unknown transpose pair '" + std::string(text) + "' (expected NN, NT, TN or TT)");
}

const char* ToString(Activation activation) {
  switch (activation) {
    case Activation::kNone: return "none";
    case Activation::kRelu: return "relu";
    case Activation::kGelu: return "gelu";
    case Activation::kSilu: return "silu";
  }
  return "?";
}

const char* ToString(BiasKind bias) {
  switch (bias) {
    case BiasKind::kNone: return "none";
    case BiasKind::kPerColumn: return "column";
    case BiasKind::kPerRow: return "row";
  }
  return "?";
}

Result<Activation> ParseActivation(std::string_view text) {
  for (Activation a :
       {Activation::kNone, Activation::kRelu, Activation::kGelu, Activation::kSilu}) {
    if (text == ToString(a)) return a;
  }
  return MakeError(ErrorCode::kInvalidArgument, "unknown activation '" + std::string(text) +
                                                    "' (expected none, relu, gelu or silu)");
}

Result<BiasKind> ParseBiasKind(std::string_view text) {
  for (BiasKind b : {BiasKind::kNone, BiasKind::kPerColumn, BiasKind::kPerRow}) {
    if (text == ToString(b)) return b;
  }
  return MakeError(ErrorCode::kInvalidArgument, "unknown bias '" + std::string(text) +
                                                    "' (expected none, column or row)");
}

std::size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32: return sizeof(float);
    case DType::kF64: return sizeof(double);
    case DType::kBF16: return 2;
    case DType::kS8: return 1;
  }
  return 0;
}

std::size_t CTypeSize(DType dtype) {
  return dtype == DType::kF64 ? sizeof(double) : 4;  // f32, s32 for the low-precision types
}

bool IsLowPrecision(DType dtype) { return dtype == DType::kBF16 || dtype == DType::kS8; }

Status Problem::Validate() const {
  if (m < 0 || n < 0 || k < 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "negative dimension in " + ToString() + " (M, N and K must be >= 0)");
  }
  if (threads < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "thread count " + std::to_string(threads) + " must be >= 1");
  }
  if (batch < 1) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "batch count " + std::to_string(batch) + " must be >= 1");
  }
  if (batch > 1 && form != CallForm::kPlain) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a batch of GEMMs has no " + std::string(mmtune::ToString(form)) + " form");
  }
  return OkStatus();
}

double Problem::OperandBytes() const {
  const double inputs = static_cast<double>(m) * static_cast<double>(k) +
                        static_cast<double>(k) * static_cast<double>(n);
  return static_cast<double>(DTypeSize(dtype)) * inputs +
         static_cast<double>(CTypeSize(dtype)) * static_cast<double>(m) * static_cast<double>(n);
}

std::string Problem::ToString() const {
  return std::string(mmtune::ToString(dtype)) + " " + mmtune::ToString(layout) + " " +
         TransPairToString(trans_a, trans_b) + " " + std::to_string(m) + "x" +
         std::to_string(n) + "x" + std::to_string(k) + " t" + std::to_string(threads) +
         (IsPlainCall(*this) ? "" : " " + FormName(*this));
}

std::string FormName(const Problem& problem) {
  if (problem.batch != 1) return "batch:" + std::to_string(problem.batch);
  return ToString(problem.form);
}

Status ParseFormName(std::string_view text, Problem& problem) {
  constexpr std::string_view kBatch = "batch:";
  if (text.starts_with(kBatch)) {
    const std::string_view digits = text.substr(kBatch.size());
    std::int64_t count = 0;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
    if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
        count < 2) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "malformed call form '" + std::string(text) +
                           "' (a batch is batch:B with B >= 2)");
    }
    problem.form = CallForm::kPlain;
    problem.batch = count;
    return OkStatus();
  }
  auto form = ParseCallForm(text);
  if (!form) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "unknown call form '" + std::string(text) +
                         "' (expected plain, packed-b or batch:B)");
  }
  problem.form = *form;
  problem.batch = 1;
  return OkStatus();
}

Result<Shape> ParseShape(std::string_view text) {
  std::int64_t dims[3] = {0, 0, 0};
  std::string_view rest = text;
  for (int i = 0; i < 3; ++i) {
    std::size_t cut = i < 2 ? rest.find_first_of("xX") : std::string_view::npos;
    if (i < 2 && cut == std::string_view::npos) {
      return MakeError(ErrorCode::kInvalidArgument,
                       "malformed shape '" + std::string(text) +
                           "': expected three dimensions MxNxK, e.g. 128x768x768");
    }
    auto dim = ParseShapeDimension(rest.substr(0, cut), text);
    if (!dim) return dim.error();
    dims[i] = *dim;
    if (i < 2) rest.remove_prefix(cut + 1);
  }
  return Shape{dims[0], dims[1], dims[2]};
}

}  // namespace mmtune
