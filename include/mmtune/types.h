// The vocabulary shared by every mmtune component: element types, storage layout, transposes and
// the GEMM problem a tuning run or a runtime call is about.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "mmtune/result.h"

namespace mmtune {

// The element types of a GEMM. f32 and f64: A, B and C of that type. The low-precision ones
// accumulate in 32 bits: bf16 is A, B bfloat16 and C f32; s8 is A u8, B s8 and C s32 (the
// operand signs of x86 VNNI; docs/low-precision.md has the conventions).
enum class DType : std::uint8_t { kF32, kF64, kBF16, kS8 };
enum class Layout : std::uint8_t { kRowMajor, kColMajor };
enum class Trans : std::uint8_t { kNo, kYes };
// How a GEMM is called, which tuning keeps apart because the fastest config differs: with B
// packed once beforehand (Runtime::PackB) no call pays for B's packing, so tiles and blocks
// that pack B slowly but run fast win there and not in a plain call. (A batch of GEMMs of one
// shape is a plain call with Problem::batch > 1.)
enum class CallForm : std::uint8_t {
  kPlain,    // every operand as stored, B packed (where the config packs) on every call
  kPackedB,  // B packed once for the config beforehand, its packing not part of the call
};

const char* ToString(DType dtype);
const char* ToString(Layout layout);
const char* ToString(CallForm form);  // "plain", "packed-b"
// Two letters, for A then B: "NN", "NT", "TN", "TT".
std::string TransPairToString(Trans trans_a, Trans trans_b);

Result<DType> ParseDType(std::string_view text);
Result<Layout> ParseLayout(std::string_view text);
Result<CallForm> ParseCallForm(std::string_view text);
// "NN", "NT", "TN", "TT" (either case): op(A) then op(B).
Result<std::pair<Trans, Trans>> ParseTransPair(std::string_view text);

// Bytes of one A or B element, and of one C element (they differ for bf16 and s8).
std::size_t DTypeSize(DType dtype);
std::size_t CTypeSize(DType dtype);
// bf16 and s8: inputs narrower than the 32-bit accumulator, packed in k groups.
bool IsLowPrecision(DType dtype);

// C (M x N) = alpha * op(A) (M x K) * op(B) (K x N) + beta * C, as in BLAS GEMM.
struct Problem {
  DType dtype = DType::kF32;
  Layout layout = Layout::kRowMajor;
  Trans trans_a = Trans::kNo;
  Trans trans_b = Trans::kNo;
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  int threads = 1;
  CallForm form = CallForm::kPlain;
  // GEMMs of this shape per call (Runtime::GemmBatch), each on its own operands; 1 for a single
  // GEMM. A batch is timed and tuned as a whole: its items come from beyond L1/L2 and its
  // threads may run whole items each, so its fastest config differs from one GEMM's.
  std::int64_t batch = 1;

  // Floating-point operations of one call (every item of a batch), counting a fused
  // multiply-add as two.
  double Flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(batch);
  }
  // Bytes of A, B and C of one GEMM of the problem (one item of a batch).
  double OperandBytes() const;
  Status Validate() const;
  // e.g. "f32 row NN 128x768x768 t1", "... t1 packed-b", "... t2 batch:64"
  std::string ToString() const;

  friend bool operator==(const Problem&, const Problem&) = default;
};

// The call form as the tuning DB and reports name it: "plain", "packed-b", or "batch:B" for a
// batch of B GEMMs; and the parse of that name into `problem`'s form and batch.
std::string FormName(const Problem& problem);
Status ParseFormName(std::string_view text, Problem& problem);
// Whether `problem` is one GEMM called plain (FormName "plain"), which names and keys leave
// without a form and shape ranges stand for.
inline bool IsPlainCall(const Problem& problem) {
  return problem.form == CallForm::kPlain && problem.batch == 1;
}

// Where the items of a strided batch of GEMMs of one shape lie: item i's A, B and C start i *
// `a`, i * `b` and i * `c` elements past item 0's. A and B may be shared by every item (stride
// 0) or overlap; C items may not (`c` at least the extent of one C).
struct BatchStrides {
  std::int64_t count = 0;
  std::int64_t a = 0;
  std::int64_t b = 0;
  std::int64_t c = 0;
};

// What a GEMM applies to C after the product, in the same pass (a fused epilogue, as in a
// linear layer): C = act(alpha * op(A) op(B) + beta * C + bias).
//  - bias: one value per column of C (N of them) or per row (M), of C's element type; in C's
//    logical rows and columns whatever its layout.
//  - act: relu (NaN stays NaN), gelu in its tanh form
//    0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), or silu x / (1 + exp(-x)); gelu and silu
//    give NaN for NaN, +inf for +inf and 0 for -inf, within a few units in the last place
//    (results of magnitude below 1e-30 for f32, 1e-300 for f64, may come out as zero). For s8
//    (C s32) only relu, and the bias adds modulo 2^32 like the accumulation.
enum class Activation : std::uint8_t { kNone, kRelu, kGelu, kSilu };
enum class BiasKind : std::uint8_t { kNone, kPerColumn, kPerRow };
const char* ToString(Activation activation);
const char* ToString(BiasKind bias);
// "none", "relu", "gelu", "silu"; "none", "column", "row".
Result<Activation> ParseActivation(std::string_view text);
Result<BiasKind> ParseBiasKind(std::string_view text);

template <typename C>
struct Epilogue {
  BiasKind bias_kind = BiasKind::kNone;
  const C* bias = nullptr;  // N (per column) or M (per row) elements, contiguous
  Activation activation = Activation::kNone;
  bool Empty() const { return bias_kind == BiasKind::kNone && activation == Activation::kNone; }
};

// How a quantized layer's 8-bit product becomes f32: with A's real values a_scale * (A -
// a_zero_point) (one scale and zero point for the whole tensor) and B's b_scale_j * B (one
// scale per column of op(B), or b_scale for all), C = a_scale * b_scale_j * sum_p (A_ip -
// a_zero_point) B_pj, then an f32 epilogue's bias and activation, all in the GEMM's pass.
struct Dequantization {
  float a_scale = 1.0f;
  std::int32_t a_zero_point = 0;
  const float* b_scales = nullptr;  // N values; null: b_scale for every column
  float b_scale = 1.0f;
};

// Parses "MxNxK" (also "MXNXK"): three integers in [0, 2^31), nothing else.
struct Shape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  friend bool operator==(const Shape&, const Shape&) = default;
};
Result<Shape> ParseShape(std::string_view text);

}  // namespace mmtune
