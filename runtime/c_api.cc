// The C API over mmtune::Runtime: translates enums, turns Status values into status codes and a
// per-thread message, and never lets a C++ exception cross into C.
#include "mmtune/mmtune.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "mmtune/bf16.h"
#include "mmtune/runtime.h"

struct mmtune_runtime {
  std::unique_ptr<mmtune::Runtime> runtime;
};

// Which matrices a GEMM touches, so which pointers must not be NULL: C where M, N > 0, A and
// B where also K > 0 and alpha != 0.
struct PointerNeeds {
  bool writes_c = false;
  bool reads_operands = false;

  template <typename Scalar>
  static PointerNeeds Of(int64_t m, int64_t n, int64_t k, Scalar alpha) {
    const bool writes_c = m > 0 && n > 0;
    return {writes_c, writes_c && k > 0 && alpha != Scalar(0)};
  }
};

// A bound problem and what its calls need of their pointers.
template <typename T>
struct FixedFromC {
  mmtune::FixedGemm<T> gemm;
  PointerNeeds needs;
};
struct mmtune_fixed_sgemm : FixedFromC<float> {};
struct mmtune_fixed_dgemm : FixedFromC<double> {};

// Packed weights of any dtype behind one C handle.
struct mmtune_packed_b {
  std::variant<mmtune::PackedWeights<float>, mmtune::PackedWeights<double>,
               mmtune::PackedWeights<mmtune::BFloat16>, mmtune::PackedWeights<std::int8_t>>
      weights;
};

namespace {

thread_local std::string tls_last_error;

mmtune_status CodeOf(mmtune::ErrorCode code) {
  switch (code) {
    case mmtune::ErrorCode::kInvalidArgument: return MMTUNE_INVALID_ARGUMENT;
    case mmtune::ErrorCode::kUnsupported: return MMTUNE_UNSUPPORTED;
    case mmtune::ErrorCode::kNotFound: return MMTUNE_NOT_FOUND;
    case mmtune::ErrorCode::kIo: return MMTUNE_IO_ERROR;
    case mmtune::ErrorCode::kCorrupt: return MMTUNE_CORRUPT;
    case mmtune::ErrorCode::kInternal: return MMTUNE_INTERNAL;
    // Only the tuner verifies results; a library call never reports this.
    case mmtune::ErrorCode::kWrongResult: return MMTUNE_INTERNAL;
  }
  return MMTUNE_INTERNAL;
}

mmtune_status Fail(mmtune_status code, std::string message) {
  tls_last_error = std::move(message);
  return code;
}

// A failure of `routine`: its message says where. The message is built only here, so that a
// call that succeeds makes no string at all.
mmtune_status FailIn(const char* routine, mmtune_status code, const std::string& message) {
  return Fail(code, std::string(routine) + ": " + message);
}

// A lookup report as the JSON object of mmtune_lookup_json, written snprintf-style: at most
// `size` bytes (NUL included) into `json`; returns the whole text's length, or -1 (with the
// error set) for a NULL `json` with room or a negative `size`.
int64_t CopyLookupJson(const char* routine, const mmtune::LookupReport& report, char* json,
                       int64_t size) {
  if (size < 0 || (size > 0 && json == nullptr)) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "json is NULL or size negative"), -1;
  }
  nlohmann::json out = {{"tier", mmtune::ToString(report.tier)},
                        {"config", report.config_text},
                        {"config_json", nlohmann::json::parse(report.config_json, nullptr, false)},
                        {"threads", report.threads},
                        {"threads_reason", report.threads_reason},
                        {"tuned", nullptr},
                        {"bucket_range", nullptr},
                        {"runs", nullptr},
                        {"gflops", report.gflops}};
  if (report.tier != mmtune::LookupTier::kDefault) out["tuned"] = report.tuned.ToString();
  if (!report.bucket_range.empty()) out["bucket_range"] = report.bucket_range;
  if (!report.runs_text.empty()) out["runs"] = report.runs_text;
  const std::string text = out.dump();
  if (size > 0) {
    const std::size_t copied = std::min(text.size(), static_cast<std::size_t>(size - 1));
    text.copy(json, copied);
    json[copied] = '\0';
  }
  return static_cast<int64_t>(text.size());
}

// A GEMM's layout and transposes in C++ terms.
struct KindFromC {
  mmtune::Layout layout;
  mmtune::Trans trans_a;
  mmtune::Trans trans_b;
};

// The runtime and the CBLAS enum values checked and translated; MMTUNE_OK, else the error with
// its message set.
mmtune_status CheckKind(const char* routine, const mmtune_runtime* handle, int layout,
                        int trans_a, int trans_b, KindFromC* kind) {
  if (handle == nullptr) return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "runtime is NULL");
  if (layout != MMTUNE_ROW_MAJOR && layout != MMTUNE_COL_MAJOR) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT,
                  "layout = " + std::to_string(layout) +
                      " (expected MMTUNE_ROW_MAJOR or MMTUNE_COL_MAJOR)");
  }
  auto trans = [](int value) -> int {
    if (value == MMTUNE_NO_TRANS) return 0;
    if (value == MMTUNE_TRANS || value == MMTUNE_CONJ_TRANS) return 1;
    return -1;
  };
  if (trans(trans_a) < 0 || trans(trans_b) < 0) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT,
                  (trans(trans_a) < 0 ? "trans_a = " + std::to_string(trans_a)
                                      : "trans_b = " + std::to_string(trans_b)) +
                      " (expected MMTUNE_NO_TRANS, MMTUNE_TRANS or MMTUNE_CONJ_TRANS)");
  }
  *kind = KindFromC{
      layout == MMTUNE_ROW_MAJOR ? mmtune::Layout::kRowMajor : mmtune::Layout::kColMajor,
      trans(trans_a) ? mmtune::Trans::kYes : mmtune::Trans::kNo,
      trans(trans_b) ? mmtune::Trans::kYes : mmtune::Trans::kNo};
  return MMTUNE_OK;
}

// mmtune_lookup_json, mmtune_lookup_packed_b_json and mmtune_lookup_batch_json: the problem's
// lookup in `form`, in batches of `batch`.
int64_t LookupJsonFromC(const char* routine, mmtune::CallForm form, int64_t batch,
                        const mmtune_runtime* runtime, const char* dtype, int layout,
                        int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, char* json,
                        int64_t size) {
  try {
    KindFromC kind;
    if (CheckKind(routine, runtime, layout, trans_a, trans_b, &kind) != MMTUNE_OK) return -1;
    auto parsed = mmtune::ParseDType(dtype == nullptr ? "" : dtype);
    if (!parsed) return FailIn(routine, MMTUNE_INVALID_ARGUMENT, parsed.error().message), -1;
    const mmtune::Problem problem{*parsed, kind.layout, kind.trans_a, kind.trans_b, m, n, k, 1,
                                  form, batch};
    if (auto valid = problem.Validate(); !valid) {
      return FailIn(routine, MMTUNE_INVALID_ARGUMENT, valid.error().message), -1;
    }
    return CopyLookupJson(routine, runtime->runtime->Lookup(problem), json, size);
  } catch (const std::exception& e) {
    return FailIn(routine, MMTUNE_INTERNAL, e.what()), -1;
  }
}

// The pointers a call needs (PointerNeeds) are not NULL; MMTUNE_OK, else the error.
mmtune_status CheckPointers(const char* routine, PointerNeeds needs, const void* a,
                            const void* b, const void* c) {
  if (needs.writes_c && c == nullptr) [[unlikely]] {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "C is NULL");
  }
  if (needs.reads_operands && (a == nullptr || b == nullptr)) [[unlikely]] {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT, a == nullptr ? "A is NULL" : "B is NULL");
  }
  return MMTUNE_OK;
}

// Runs `call` (returning an mmtune::Status) for the C routine `routine`: its error becomes the
// routine's status and message, an exception MMTUNE_INTERNAL; success clears the last error.
template <typename Call>
mmtune_status CallFromC(const char* routine, Call&& call) {
  try {
    const mmtune::Status status = call();
    if (!status) return FailIn(routine, CodeOf(status.error().code), status.error().message);
    tls_last_error.clear();
    return MMTUNE_OK;
  } catch (const std::exception& e) {
    return FailIn(routine, MMTUNE_INTERNAL, e.what());
  }
}

// `epilogue` (not NULL) as the library's, its values checked; MMTUNE_OK, else the error.
template <typename TC>
mmtune_status EpilogueFromC(const char* routine, const mmtune_epilogue& epilogue,
                            mmtune::Epilogue<TC>* fused) {
  if (epilogue.bias_kind < MMTUNE_BIAS_NONE || epilogue.bias_kind > MMTUNE_BIAS_PER_ROW) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT,
                  "unknown bias kind " + std::to_string(epilogue.bias_kind) +
                      " (expected MMTUNE_BIAS_NONE, _PER_COLUMN or _PER_ROW)");
  }
  if (epilogue.activation < MMTUNE_ACT_NONE || epilogue.activation > MMTUNE_ACT_SILU) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT,
                  "unknown activation " + std::to_string(epilogue.activation) +
                      " (expected MMTUNE_ACT_NONE, _RELU, _GELU or _SILU)");
  }
  fused->bias_kind = static_cast<mmtune::BiasKind>(epilogue.bias_kind);
  fused->bias = static_cast<const TC*>(epilogue.bias);
  fused->activation = static_cast<mmtune::Activation>(epilogue.activation);
  return MMTUNE_OK;
}

template <typename Scalar, typename TA, typename TB, typename TC>
mmtune_status GemmFromC(const char* routine, mmtune_runtime* handle, int layout, int trans_a,
                        int trans_b, int64_t m, int64_t n, int64_t k, Scalar alpha, const TA* a,
                        int64_t lda, const TB* b, int64_t ldb, Scalar beta, TC* c, int64_t ldc,
                        const mmtune_epilogue* epilogue = nullptr) {
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, trans_a, trans_b, &kind); code != MMTUNE_OK) {
    return code;
  }
  if (auto code = CheckPointers(routine, PointerNeeds::Of(m, n, k, alpha), a, b, c);
      code != MMTUNE_OK) {
    return code;
  }
  if (epilogue == nullptr) {
    return CallFromC(routine, [&] {
      return handle->runtime->Gemm(kind.layout, kind.trans_a, kind.trans_b, m, n, k, alpha, a,
                                   lda, b, ldb, beta, c, ldc);
    });
  }
  if constexpr (std::is_same_v<TA, int8_t>) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "the s8s8s32 GEMM has no epilogue form");
  } else {
    mmtune::Epilogue<TC> fused;
    if (auto code = EpilogueFromC(routine, *epilogue, &fused); code != MMTUNE_OK) return code;
    return CallFromC(routine, [&] {
      return handle->runtime->Gemm(kind.layout, kind.trans_a, kind.trans_b, m, n, k, alpha, a,
                                   lda, b, ldb, beta, c, ldc, fused);
    });
  }
}

// `dequantization` (not NULL) and `epilogue` (NULL: none) as the library's, checked; MMTUNE_OK,
// else the error.
mmtune_status DequantizationFromC(const char* routine,
                                  const mmtune_dequantization* dequantization,
                                  const mmtune_epilogue* epilogue, mmtune::Dequantization* scales,
                                  mmtune::Epilogue<float>* fused) {
  if (dequantization == nullptr) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "the dequantization is NULL");
  }
  if (epilogue != nullptr) {
    if (auto code = EpilogueFromC(routine, *epilogue, fused); code != MMTUNE_OK) return code;
  }
  *scales = {dequantization->a_scale, dequantization->a_zero_point, dequantization->b_scales,
             dequantization->b_scale};
  return MMTUNE_OK;
}

// The 8-bit GEMMs dequantized to f32 (TA: uint8_t or int8_t).
template <typename TA>
mmtune_status DequantizedGemmFromC(const char* routine, mmtune_runtime* handle, int layout,
                                   int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                   const TA* a, int64_t lda, const int8_t* b, int64_t ldb,
                                   float* c, int64_t ldc,
                                   const mmtune_dequantization* dequantization,
                                   const mmtune_epilogue* epilogue) {
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, trans_a, trans_b, &kind); code != MMTUNE_OK) {
    return code;
  }
  if (auto code = CheckPointers(routine, PointerNeeds::Of(m, n, k, 1), a, b, c);
      code != MMTUNE_OK) {
    return code;
  }
  mmtune::Dequantization scales;
  mmtune::Epilogue<float> fused;
  if (auto code = DequantizationFromC(routine, dequantization, epilogue, &scales, &fused);
      code != MMTUNE_OK) {
    return code;
  }
  return CallFromC(routine, [&] {
    return handle->runtime->Gemm(kind.layout, kind.trans_a, kind.trans_b, m, n, k, a, lda, b,
                                 ldb, c, ldc, scales, fused);
  });
}

template <typename Scalar, typename TA, typename TB, typename TC>
mmtune_status StridedBatchFromC(const char* routine, mmtune_runtime* handle, int layout,
                                int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                Scalar alpha, const TA* a, int64_t lda, int64_t stride_a,
                                const TB* b, int64_t ldb, int64_t stride_b, Scalar beta, TC* c,
                                int64_t ldc, int64_t stride_c, int64_t count,
                                const mmtune_epilogue* epilogue = nullptr) {
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, trans_a, trans_b, &kind); code != MMTUNE_OK) {
    return code;
  }
  if (count > 0) {
    if (auto code = CheckPointers(routine, PointerNeeds::Of(m, n, k, alpha), a, b, c);
        code != MMTUNE_OK) {
      return code;
    }
  }
  mmtune::Epilogue<TC> fused;
  if (epilogue != nullptr) {
    if (auto code = EpilogueFromC(routine, *epilogue, &fused); code != MMTUNE_OK) return code;
  }
  return CallFromC(routine, [&] {
    return handle->runtime->GemmBatch(kind.layout, kind.trans_a, kind.trans_b, m, n, k, alpha, a,
                                      lda, b, ldb, beta, c, ldc,
                                      mmtune::BatchStrides{count, stride_a, stride_b, stride_c},
                                      fused);
  });
}

template <typename Scalar, typename TA, typename TB, typename TC>
mmtune_status ListedBatchFromC(const char* routine, mmtune_runtime* handle, int layout,
                               int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                               Scalar alpha, const TA* const* a, int64_t lda, const TB* const* b,
                               int64_t ldb, Scalar beta, TC* const* c, int64_t ldc,
                               int64_t count) {
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, trans_a, trans_b, &kind); code != MMTUNE_OK) {
    return code;
  }
  if (count > 0 && (a == nullptr || b == nullptr || c == nullptr)) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT,
                  std::string(a == nullptr ? "A" : b == nullptr ? "B" : "C") +
                      "'s pointer array is NULL");
  }
  const PointerNeeds needs = PointerNeeds::Of(m, n, k, alpha);
  for (int64_t item = 0; item < count; ++item) {
    if (auto code = CheckPointers(routine, needs, a[item], b[item], c[item]); code != MMTUNE_OK) {
      tls_last_error += " (item " + std::to_string(item) + ")";
      return code;
    }
  }
  return CallFromC(routine, [&] {
    return handle->runtime->GemmBatch(kind.layout, kind.trans_a, kind.trans_b, m, n, k, alpha, a,
                                      lda, b, ldb, beta, c, ldc, count);
  });
}

template <class Fixed, typename T>
mmtune_status BindFromC(const char* routine, const mmtune_runtime* handle, int layout,
                        int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, T alpha,
                        int64_t lda, int64_t ldb, T beta, int64_t ldc, Fixed** out,
                        const mmtune_epilogue* epilogue = nullptr) {
  if (out == nullptr) return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "out is NULL");
  *out = nullptr;
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, trans_a, trans_b, &kind); code != MMTUNE_OK) {
    return code;
  }
  mmtune::Epilogue<T> fused;
  if (epilogue != nullptr) {
    if (auto code = EpilogueFromC(routine, *epilogue, &fused); code != MMTUNE_OK) return code;
  }
  return CallFromC(routine, [&]() -> mmtune::Status {
    auto bound = handle->runtime->Bind(kind.layout, kind.trans_a, kind.trans_b, m, n, k, alpha,
                                       lda, ldb, beta, ldc, fused);
    if (!bound) return bound.error();
    *out = new Fixed{{std::move(*bound), PointerNeeds::Of(m, n, k, alpha)}};
    return mmtune::OkStatus();
  });
}

template <class Fixed, typename T>
mmtune_status RunFromC(const char* routine, const Fixed* fixed, const T* a, const T* b, T* c) {
  if (fixed == nullptr) [[unlikely]] {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "fixed GEMM is NULL");
  }
  if (auto code = CheckPointers(routine, fixed->needs, a, b, c); code != MMTUNE_OK) return code;
  // Fails only where the run's scratch memory cannot be had.
  if (const mmtune::Status status = fixed->gemm.Run(a, b, c); !status) {
    return FailIn(routine, CodeOf(status.error().code), status.error().message);
  }
  return MMTUNE_OK;
}

// The dtype names of the packed handles' alternatives, in the variant's order.
constexpr const char* kPackedDTypes[] = {"f32", "f64", "bf16", "s8"};

template <typename T>
mmtune_status PackFromC(const char* routine, const mmtune_runtime* handle, int layout,
                        int trans_b, int64_t m, int64_t n, int64_t k, const T* b, int64_t ldb,
                        mmtune_packed_b** out) {
  if (out == nullptr) return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "packed is NULL");
  *out = nullptr;
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, MMTUNE_NO_TRANS, trans_b, &kind);
      code != MMTUNE_OK) {
    return code;
  }
  return CallFromC(routine, [&]() -> mmtune::Status {
    auto packed = handle->runtime->PackB(kind.layout, kind.trans_b, m, n, k, b, ldb);
    if (!packed) return packed.error();
    *out = new (std::nothrow) mmtune_packed_b{std::move(*packed)};
    if (*out == nullptr) return mmtune::MakeError(mmtune::ErrorCode::kIo, "not enough memory");
    return mmtune::OkStatus();
  });
}

// The weights of T behind `b`, else the error that says why not.
template <typename T>
mmtune_status WeightsFromC(const char* routine, const mmtune_packed_b* b,
                           const mmtune::PackedWeights<T>** weights) {
  if (b == nullptr) return FailIn(routine, MMTUNE_INVALID_ARGUMENT, "packed B is NULL");
  *weights = std::get_if<mmtune::PackedWeights<T>>(&b->weights);
  if (*weights == nullptr) {
    return FailIn(routine, MMTUNE_INVALID_ARGUMENT,
                  std::string("the packed B holds ") + kPackedDTypes[b->weights.index()] +
                      " weights");
  }
  return MMTUNE_OK;
}

template <typename T, typename Scalar, typename TA, typename TC>
mmtune_status PackedGemmFromC(const char* routine, mmtune_runtime* handle, int layout,
                              int trans_a, int64_t m, Scalar alpha, const TA* a, int64_t lda,
                              const mmtune_packed_b* b, Scalar beta, TC* c, int64_t ldc,
                              const mmtune_epilogue* epilogue = nullptr) {
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, trans_a, MMTUNE_NO_TRANS, &kind);
      code != MMTUNE_OK) {
    return code;
  }
  const mmtune::PackedWeights<T>* weights = nullptr;
  if (auto code = WeightsFromC(routine, b, &weights); code != MMTUNE_OK) return code;
  // B's pointer is the packed copy's: only A and C can be NULL.
  if (auto code = CheckPointers(routine, PointerNeeds::Of(m, weights->n(), weights->k(), alpha),
                                a, weights, c);
      code != MMTUNE_OK) {
    return code;
  }
  mmtune::Epilogue<TC> fused;
  if (epilogue != nullptr) {
    if (auto code = EpilogueFromC(routine, *epilogue, &fused); code != MMTUNE_OK) return code;
  }
  return CallFromC(routine, [&] {
    return handle->runtime->Gemm(kind.layout, kind.trans_a, m, alpha, a, lda, *weights, beta, c,
                                 ldc, fused);
  });
}

// The 8-bit GEMMs dequantized to f32 with packed weights (TA: uint8_t or int8_t).
template <typename TA>
mmtune_status PackedDequantizedGemmFromC(const char* routine, mmtune_runtime* handle,
                                         int layout, int trans_a, int64_t m, const TA* a,
                                         int64_t lda, const mmtune_packed_b* b, float* c,
                                         int64_t ldc,
                                         const mmtune_dequantization* dequantization,
                                         const mmtune_epilogue* epilogue) {
  KindFromC kind;
  if (auto code = CheckKind(routine, handle, layout, trans_a, MMTUNE_NO_TRANS, &kind);
      code != MMTUNE_OK) {
    return code;
  }
  const mmtune::PackedWeights<std::int8_t>* weights = nullptr;
  if (auto code = WeightsFromC(routine, b, &weights); code != MMTUNE_OK) return code;
  if (auto code = CheckPointers(routine, PointerNeeds::Of(m, weights->n(), weights->k(), 1), a,
                                weights, c);
      code != MMTUNE_OK) {
    return code;
  }
  mmtune::Dequantization scales;
  mmtune::Epilogue<float> fused;
  if (auto code = DequantizationFromC(routine, dequantization, epilogue, &scales, &fused);
      code != MMTUNE_OK) {
    return code;
  }
  return CallFromC(routine, [&] {
    return handle->runtime->Gemm(kind.layout, kind.trans_a, m, a, lda, *weights, c, ldc, scales,
                                 fused);
  });
}

}  // namespace

extern "C" {

mmtune_status mmtune_pack_b_f32(const mmtune_runtime* runtime, int layout, int trans_b,
                                int64_t m, int64_t n, int64_t k, const float* b, int64_t ldb,
                                mmtune_packed_b** packed) {
  return PackFromC("mmtune_pack_b_f32", runtime, layout, trans_b, m, n, k, b, ldb, packed);
}

mmtune_status mmtune_pack_b_f64(const mmtune_runtime* runtime, int layout, int trans_b,
                                int64_t m, int64_t n, int64_t k, const double* b, int64_t ldb,
                                mmtune_packed_b** packed) {
  return PackFromC("mmtune_pack_b_f64", runtime, layout, trans_b, m, n, k, b, ldb, packed);
}

mmtune_status mmtune_pack_b_bf16(const mmtune_runtime* runtime, int layout, int trans_b,
                                 int64_t m, int64_t n, int64_t k, const mmtune_bf16* b,
                                 int64_t ldb, mmtune_packed_b** packed) {
  return PackFromC("mmtune_pack_b_bf16", runtime, layout, trans_b, m, n, k,
                   reinterpret_cast<const mmtune::BFloat16*>(b), ldb, packed);
}

mmtune_status mmtune_pack_b_s8(const mmtune_runtime* runtime, int layout, int trans_b,
                               int64_t m, int64_t n, int64_t k, const int8_t* b, int64_t ldb,
                               mmtune_packed_b** packed) {
  return PackFromC("mmtune_pack_b_s8", runtime, layout, trans_b, m, n, k, b, ldb, packed);
}

mmtune_status mmtune_gemm_f32_packed(mmtune_runtime* runtime, int layout, int trans_a, int64_t m,
                                     float alpha, const float* a, int64_t lda,
                                     const mmtune_packed_b* b, float beta, float* c,
                                     int64_t ldc) {
  return PackedGemmFromC<float>("mmtune_gemm_f32_packed", runtime, layout, trans_a, m, alpha, a,
                                lda, b, beta, c, ldc);
}

mmtune_status mmtune_gemm_f64_packed(mmtune_runtime* runtime, int layout, int trans_a, int64_t m,
                                     double alpha, const double* a, int64_t lda,
                                     const mmtune_packed_b* b, double beta, double* c,
                                     int64_t ldc) {
  return PackedGemmFromC<double>("mmtune_gemm_f64_packed", runtime, layout, trans_a, m, alpha, a,
                                 lda, b, beta, c, ldc);
}

mmtune_status mmtune_gemm_bf16_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                      int64_t m, float alpha, const mmtune_bf16* a, int64_t lda,
                                      const mmtune_packed_b* b, float beta, float* c,
                                      int64_t ldc) {
  return PackedGemmFromC<mmtune::BFloat16>("mmtune_gemm_bf16_packed", runtime, layout, trans_a,
                                           m, alpha,
                                           reinterpret_cast<const mmtune::BFloat16*>(a), lda, b,
                                           beta, c, ldc);
}

mmtune_status mmtune_gemm_u8s8s32_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                         int64_t m, int32_t alpha, const uint8_t* a, int64_t lda,
                                         const mmtune_packed_b* b, int32_t beta, int32_t* c,
                                         int64_t ldc) {
  return PackedGemmFromC<std::int8_t>("mmtune_gemm_u8s8s32_packed", runtime, layout, trans_a, m,
                                      alpha, a, lda, b, beta, c, ldc);
}

mmtune_status mmtune_gemm_f32_packed_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                              int64_t m, float alpha, const float* a,
                                              int64_t lda, const mmtune_packed_b* b, float beta,
                                              float* c, int64_t ldc,
                                              const mmtune_epilogue* epilogue) {
  return PackedGemmFromC<float>("mmtune_gemm_f32_packed_epilogue", runtime, layout, trans_a, m,
                                alpha, a, lda, b, beta, c, ldc, epilogue);
}

mmtune_status mmtune_gemm_f64_packed_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                              int64_t m, double alpha, const double* a,
                                              int64_t lda, const mmtune_packed_b* b, double beta,
                                              double* c, int64_t ldc,
                                              const mmtune_epilogue* epilogue) {
  return PackedGemmFromC<double>("mmtune_gemm_f64_packed_epilogue", runtime, layout, trans_a, m,
                                 alpha, a, lda, b, beta, c, ldc, epilogue);
}

mmtune_status mmtune_gemm_bf16_packed_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                               int64_t m, float alpha, const mmtune_bf16* a,
                                               int64_t lda, const mmtune_packed_b* b, float beta,
                                               float* c, int64_t ldc,
                                               const mmtune_epilogue* epilogue) {
  return PackedGemmFromC<mmtune::BFloat16>("mmtune_gemm_bf16_packed_epilogue", runtime, layout,
                                           trans_a, m, alpha,
                                           reinterpret_cast<const mmtune::BFloat16*>(a), lda, b,
                                           beta, c, ldc, epilogue);
}

mmtune_status mmtune_gemm_u8s8s32_packed_epilogue(mmtune_runtime* runtime, int layout,
                                                  int trans_a, int64_t m, int32_t alpha,
                                                  const uint8_t* a, int64_t lda,
                                                  const mmtune_packed_b* b, int32_t beta,
                                                  int32_t* c, int64_t ldc,
                                                  const mmtune_epilogue* epilogue) {
  return PackedGemmFromC<std::int8_t>("mmtune_gemm_u8s8s32_packed_epilogue", runtime, layout,
                                      trans_a, m, alpha, a, lda, b, beta, c, ldc, epilogue);
}

mmtune_status mmtune_gemm_u8s8f32_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                         int64_t m, const uint8_t* a, int64_t lda,
                                         const mmtune_packed_b* b, float* c, int64_t ldc,
                                         const mmtune_dequantization* dequantization,
                                         const mmtune_epilogue* epilogue) {
  return PackedDequantizedGemmFromC("mmtune_gemm_u8s8f32_packed", runtime, layout, trans_a, m, a,
                                    lda, b, c, ldc, dequantization, epilogue);
}

mmtune_status mmtune_gemm_s8s8f32_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                         int64_t m, const int8_t* a, int64_t lda,
                                         const mmtune_packed_b* b, float* c, int64_t ldc,
                                         const mmtune_dequantization* dequantization,
                                         const mmtune_epilogue* epilogue) {
  return PackedDequantizedGemmFromC("mmtune_gemm_s8s8f32_packed", runtime, layout, trans_a, m, a,
                                    lda, b, c, ldc, dequantization, epilogue);
}

int64_t mmtune_packed_b_bytes(const mmtune_packed_b* packed) {
  if (packed == nullptr) return 0;
  return std::visit([](const auto& w) { return static_cast<int64_t>(w.bytes()); },
                    packed->weights);
}

void mmtune_packed_b_free(mmtune_packed_b* packed) { delete packed; }

void mmtune_options_init(mmtune_options* options) {
  if (options == nullptr) return;
  options->db_path = nullptr;
  options->max_threads = 0;
  options->allow_compatible = 0;
  options->record_path = nullptr;
}

mmtune_status mmtune_open_with_options(const mmtune_options* options, mmtune_runtime** out) {
  if (out == nullptr) return Fail(MMTUNE_INVALID_ARGUMENT, "mmtune_open: runtime is NULL");
  *out = nullptr;
  if (options == nullptr) return Fail(MMTUNE_INVALID_ARGUMENT, "mmtune_open: options is NULL");
  if (options->max_threads < 0) {
    return Fail(MMTUNE_INVALID_ARGUMENT, "mmtune_open: max_threads = " +
                                             std::to_string(options->max_threads) + " < 0");
  }
  try {
    mmtune::RuntimeOptions cxx;
    cxx.db_path = options->db_path != nullptr ? options->db_path : "";
    cxx.max_threads = options->max_threads;
    cxx.allow_compatible = options->allow_compatible != 0;
    cxx.record_path = options->record_path != nullptr ? options->record_path : "";
    auto runtime = mmtune::Runtime::Open(cxx);
    if (!runtime) return Fail(CodeOf(runtime.error().code), runtime.error().message);
    *out = new mmtune_runtime{std::move(*runtime)};
    tls_last_error.clear();
    return MMTUNE_OK;
  } catch (const std::exception& e) {
    return Fail(MMTUNE_INTERNAL, std::string("mmtune_open: ") + e.what());
  }
}

mmtune_status mmtune_open(const char* db_path, mmtune_runtime** out) {
  mmtune_options options;
  mmtune_options_init(&options);
  options.db_path = db_path;
  return mmtune_open_with_options(&options, out);
}

void mmtune_close(mmtune_runtime* runtime) { delete runtime; }

mmtune_status mmtune_sgemm(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                           int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                           int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                           int64_t ldc) {
  return GemmFromC("mmtune_sgemm", runtime, layout, trans_a, trans_b, m, n, k, alpha, a, lda, b,
                   ldb, beta, c, ldc);
}

mmtune_status mmtune_dgemm(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                           int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                           int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                           int64_t ldc) {
  return GemmFromC("mmtune_dgemm", runtime, layout, trans_a, trans_b, m, n, k, alpha, a, lda, b,
                   ldb, beta, c, ldc);
}

mmtune_status mmtune_bind_sgemm(const mmtune_runtime* runtime, int layout, int trans_a,
                                int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                int64_t lda, int64_t ldb, float beta, int64_t ldc,
                                mmtune_fixed_sgemm** fixed) {
  return BindFromC("mmtune_bind_sgemm", runtime, layout, trans_a, trans_b, m, n, k, alpha, lda,
                   ldb, beta, ldc, fixed);
}

mmtune_status mmtune_bind_dgemm(const mmtune_runtime* runtime, int layout, int trans_a,
                                int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                                int64_t lda, int64_t ldb, double beta, int64_t ldc,
                                mmtune_fixed_dgemm** fixed) {
  return BindFromC("mmtune_bind_dgemm", runtime, layout, trans_a, trans_b, m, n, k, alpha, lda,
                   ldb, beta, ldc, fixed);
}

mmtune_status mmtune_bind_sgemm_epilogue(const mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         float alpha, int64_t lda, int64_t ldb, float beta,
                                         int64_t ldc, const mmtune_epilogue* epilogue,
                                         mmtune_fixed_sgemm** fixed) {
  return BindFromC("mmtune_bind_sgemm_epilogue", runtime, layout, trans_a, trans_b, m, n, k,
                   alpha, lda, ldb, beta, ldc, fixed, epilogue);
}

mmtune_status mmtune_bind_dgemm_epilogue(const mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         double alpha, int64_t lda, int64_t ldb, double beta,
                                         int64_t ldc, const mmtune_epilogue* epilogue,
                                         mmtune_fixed_dgemm** fixed) {
  return BindFromC("mmtune_bind_dgemm_epilogue", runtime, layout, trans_a, trans_b, m, n, k,
                   alpha, lda, ldb, beta, ldc, fixed, epilogue);
}

mmtune_status mmtune_fixed_sgemm_run(const mmtune_fixed_sgemm* fixed, const float* a,
                                     const float* b, float* c) {
  return RunFromC("mmtune_fixed_sgemm_run", fixed, a, b, c);
}

mmtune_status mmtune_fixed_dgemm_run(const mmtune_fixed_dgemm* fixed, const double* a,
                                     const double* b, double* c) {
  return RunFromC("mmtune_fixed_dgemm_run", fixed, a, b, c);
}

void mmtune_fixed_sgemm_free(mmtune_fixed_sgemm* fixed) { delete fixed; }

void mmtune_fixed_dgemm_free(mmtune_fixed_dgemm* fixed) { delete fixed; }

// mmtune_bf16 is the bit pattern of mmtune::BFloat16 (a struct of one uint16_t, same size and
// alignment): the C API passes the application's buffers through without a copy.
static_assert(sizeof(mmtune_bf16) == sizeof(mmtune::BFloat16) &&
              alignof(mmtune_bf16) == alignof(mmtune::BFloat16));

mmtune_status mmtune_gemm_bf16(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                               int64_t m, int64_t n, int64_t k, float alpha, const mmtune_bf16* a,
                               int64_t lda, const mmtune_bf16* b, int64_t ldb, float beta,
                               float* c, int64_t ldc) {
  return GemmFromC("mmtune_gemm_bf16", runtime, layout, trans_a, trans_b, m, n, k, alpha,
                   reinterpret_cast<const mmtune::BFloat16*>(a), lda,
                   reinterpret_cast<const mmtune::BFloat16*>(b), ldb, beta, c, ldc);
}

mmtune_status mmtune_gemm_u8s8s32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, int32_t alpha,
                                  const uint8_t* a, int64_t lda, const int8_t* b, int64_t ldb,
                                  int32_t beta, int32_t* c, int64_t ldc) {
  return GemmFromC("mmtune_gemm_u8s8s32", runtime, layout, trans_a, trans_b, m, n, k, alpha, a,
                   lda, b, ldb, beta, c, ldc);
}

mmtune_status mmtune_sgemm_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                    int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                    const float* a, int64_t lda, const float* b, int64_t ldb,
                                    float beta, float* c, int64_t ldc,
                                    const mmtune_epilogue* epilogue) {
  return GemmFromC("mmtune_sgemm_epilogue", runtime, layout, trans_a, trans_b, m, n, k, alpha, a,
                   lda, b, ldb, beta, c, ldc, epilogue);
}

mmtune_status mmtune_dgemm_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                    int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                                    const double* a, int64_t lda, const double* b, int64_t ldb,
                                    double beta, double* c, int64_t ldc,
                                    const mmtune_epilogue* epilogue) {
  return GemmFromC("mmtune_dgemm_epilogue", runtime, layout, trans_a, trans_b, m, n, k, alpha, a,
                   lda, b, ldb, beta, c, ldc, epilogue);
}

mmtune_status mmtune_gemm_bf16_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                        int trans_b, int64_t m, int64_t n, int64_t k,
                                        float alpha, const mmtune_bf16* a, int64_t lda,
                                        const mmtune_bf16* b, int64_t ldb, float beta, float* c,
                                        int64_t ldc, const mmtune_epilogue* epilogue) {
  return GemmFromC("mmtune_gemm_bf16_epilogue", runtime, layout, trans_a, trans_b, m, n, k, alpha,
                   reinterpret_cast<const mmtune::BFloat16*>(a), lda,
                   reinterpret_cast<const mmtune::BFloat16*>(b), ldb, beta, c, ldc, epilogue);
}

mmtune_status mmtune_gemm_u8s8s32_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                           int trans_b, int64_t m, int64_t n, int64_t k,
                                           int32_t alpha, const uint8_t* a, int64_t lda,
                                           const int8_t* b, int64_t ldb, int32_t beta,
                                           int32_t* c, int64_t ldc,
                                           const mmtune_epilogue* epilogue) {
  return GemmFromC("mmtune_gemm_u8s8s32_epilogue", runtime, layout, trans_a, trans_b, m, n, k,
                   alpha, a, lda, b, ldb, beta, c, ldc, epilogue);
}

mmtune_status mmtune_gemm_s8s8s32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, int32_t alpha,
                                  const int8_t* a, int64_t lda, const int8_t* b, int64_t ldb,
                                  int32_t beta, int32_t* c, int64_t ldc) {
  return GemmFromC("mmtune_gemm_s8s8s32", runtime, layout, trans_a, trans_b, m, n, k, alpha, a,
                   lda, b, ldb, beta, c, ldc);
}

mmtune_status mmtune_gemm_u8s8f32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda,
                                  const int8_t* b, int64_t ldb, float* c, int64_t ldc,
                                  const mmtune_dequantization* dequantization,
                                  const mmtune_epilogue* epilogue) {
  return DequantizedGemmFromC("mmtune_gemm_u8s8f32", runtime, layout, trans_a, trans_b, m, n, k,
                              a, lda, b, ldb, c, ldc, dequantization, epilogue);
}

mmtune_status mmtune_gemm_s8s8f32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                                  const int8_t* b, int64_t ldb, float* c, int64_t ldc,
                                  const mmtune_dequantization* dequantization,
                                  const mmtune_epilogue* epilogue) {
  return DequantizedGemmFromC("mmtune_gemm_s8s8f32", runtime, layout, trans_a, trans_b, m, n, k,
                              a, lda, b, ldb, c, ldc, dequantization, epilogue);
}

mmtune_status mmtune_sgemm_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         float alpha, const float* a, int64_t lda,
                                         int64_t stride_a, const float* b, int64_t ldb,
                                         int64_t stride_b, float beta, float* c, int64_t ldc,
                                         int64_t stride_c, int64_t count) {
  return StridedBatchFromC("mmtune_sgemm_batch_strided", runtime, layout, trans_a, trans_b, m, n,
                           k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                           count);
}

mmtune_status mmtune_dgemm_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         double alpha, const double* a, int64_t lda,
                                         int64_t stride_a, const double* b, int64_t ldb,
                                         int64_t stride_b, double beta, double* c, int64_t ldc,
                                         int64_t stride_c, int64_t count) {
  return StridedBatchFromC("mmtune_dgemm_batch_strided", runtime, layout, trans_a, trans_b, m, n,
                           k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c, ldc, stride_c,
                           count);
}

mmtune_status mmtune_gemm_bf16_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                             int trans_b, int64_t m, int64_t n, int64_t k,
                                             float alpha, const mmtune_bf16* a, int64_t lda,
                                             int64_t stride_a, const mmtune_bf16* b,
                                             int64_t ldb, int64_t stride_b, float beta, float* c,
                                             int64_t ldc, int64_t stride_c, int64_t count) {
  return StridedBatchFromC("mmtune_gemm_bf16_batch_strided", runtime, layout, trans_a, trans_b,
                           m, n, k, alpha, reinterpret_cast<const mmtune::BFloat16*>(a), lda,
                           stride_a, reinterpret_cast<const mmtune::BFloat16*>(b), ldb, stride_b,
                           beta, c, ldc, stride_c, count);
}

mmtune_status mmtune_gemm_u8s8s32_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                                int trans_b, int64_t m, int64_t n, int64_t k,
                                                int32_t alpha, const uint8_t* a, int64_t lda,
                                                int64_t stride_a, const int8_t* b, int64_t ldb,
                                                int64_t stride_b, int32_t beta, int32_t* c,
                                                int64_t ldc, int64_t stride_c, int64_t count) {
  return StridedBatchFromC("mmtune_gemm_u8s8s32_batch_strided", runtime, layout, trans_a,
                           trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                           ldc, stride_c, count);
}

mmtune_status mmtune_sgemm_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, float alpha, const float* a, int64_t lda, int64_t stride_a, const float* b,
    int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc, int64_t stride_c,
    int64_t count, const mmtune_epilogue* epilogue) {
  return StridedBatchFromC("mmtune_sgemm_batch_strided_epilogue", runtime, layout, trans_a,
                           trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                           ldc, stride_c, count, epilogue);
}

mmtune_status mmtune_dgemm_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, double alpha, const double* a, int64_t lda, int64_t stride_a, const double* b,
    int64_t ldb, int64_t stride_b, double beta, double* c, int64_t ldc, int64_t stride_c,
    int64_t count, const mmtune_epilogue* epilogue) {
  return StridedBatchFromC("mmtune_dgemm_batch_strided_epilogue", runtime, layout, trans_a,
                           trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b, beta, c,
                           ldc, stride_c, count, epilogue);
}

mmtune_status mmtune_gemm_bf16_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, float alpha, const mmtune_bf16* a, int64_t lda, int64_t stride_a,
    const mmtune_bf16* b, int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
    int64_t stride_c, int64_t count, const mmtune_epilogue* epilogue) {
  return StridedBatchFromC("mmtune_gemm_bf16_batch_strided_epilogue", runtime, layout, trans_a,
                           trans_b, m, n, k, alpha, reinterpret_cast<const mmtune::BFloat16*>(a),
                           lda, stride_a, reinterpret_cast<const mmtune::BFloat16*>(b), ldb,
                           stride_b, beta, c, ldc, stride_c, count, epilogue);
}

mmtune_status mmtune_gemm_u8s8s32_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, int32_t alpha, const uint8_t* a, int64_t lda, int64_t stride_a, const int8_t* b,
    int64_t ldb, int64_t stride_b, int32_t beta, int32_t* c, int64_t ldc, int64_t stride_c,
    int64_t count, const mmtune_epilogue* epilogue) {
  return StridedBatchFromC("mmtune_gemm_u8s8s32_batch_strided_epilogue", runtime, layout,
                           trans_a, trans_b, m, n, k, alpha, a, lda, stride_a, b, ldb, stride_b,
                           beta, c, ldc, stride_c, count, epilogue);
}

mmtune_status mmtune_sgemm_batch(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                 int64_t m, int64_t n, int64_t k, float alpha,
                                 const float* const* a, int64_t lda, const float* const* b,
                                 int64_t ldb, float beta, float* const* c, int64_t ldc,
                                 int64_t count) {
  return ListedBatchFromC("mmtune_sgemm_batch", runtime, layout, trans_a, trans_b, m, n, k,
                          alpha, a, lda, b, ldb, beta, c, ldc, count);
}

mmtune_status mmtune_dgemm_batch(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                 int64_t m, int64_t n, int64_t k, double alpha,
                                 const double* const* a, int64_t lda, const double* const* b,
                                 int64_t ldb, double beta, double* const* c, int64_t ldc,
                                 int64_t count) {
  return ListedBatchFromC("mmtune_dgemm_batch", runtime, layout, trans_a, trans_b, m, n, k,
                          alpha, a, lda, b, ldb, beta, c, ldc, count);
}

mmtune_status mmtune_gemm_bf16_batch(mmtune_runtime* runtime, int layout, int trans_a,
                                     int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                     const mmtune_bf16* const* a, int64_t lda,
                                     const mmtune_bf16* const* b, int64_t ldb, float beta,
                                     float* const* c, int64_t ldc, int64_t count) {
  return ListedBatchFromC("mmtune_gemm_bf16_batch", runtime, layout, trans_a, trans_b, m, n, k,
                          alpha, reinterpret_cast<const mmtune::BFloat16* const*>(a), lda,
                          reinterpret_cast<const mmtune::BFloat16* const*>(b), ldb, beta, c,
                          ldc, count);
}

mmtune_status mmtune_gemm_u8s8s32_batch(mmtune_runtime* runtime, int layout, int trans_a,
                                        int trans_b, int64_t m, int64_t n, int64_t k,
                                        int32_t alpha, const uint8_t* const* a, int64_t lda,
                                        const int8_t* const* b, int64_t ldb, int32_t beta,
                                        int32_t* const* c, int64_t ldc, int64_t count) {
  return ListedBatchFromC("mmtune_gemm_u8s8s32_batch", runtime, layout, trans_a, trans_b, m, n,
                          k, alpha, a, lda, b, ldb, beta, c, ldc, count);
}

int64_t mmtune_lookup_json(const mmtune_runtime* runtime, const char* dtype, int layout,
                           int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, char* json,
                           int64_t size) {
  return LookupJsonFromC("mmtune_lookup_json", mmtune::CallForm::kPlain, 1, runtime, dtype,
                         layout, trans_a, trans_b, m, n, k, json, size);
}

int64_t mmtune_lookup_packed_b_json(const mmtune_runtime* runtime, const char* dtype, int layout,
                                    int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                    char* json, int64_t size) {
  return LookupJsonFromC("mmtune_lookup_packed_b_json", mmtune::CallForm::kPackedB, 1, runtime,
                         dtype, layout, trans_a, trans_b, m, n, k, json, size);
}

int64_t mmtune_lookup_batch_json(const mmtune_runtime* runtime, const char* dtype, int layout,
                                 int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                 int64_t count, char* json, int64_t size) {
  return LookupJsonFromC("mmtune_lookup_batch_json", mmtune::CallForm::kPlain, count, runtime,
                         dtype, layout, trans_a, trans_b, m, n, k, json, size);
}

int64_t mmtune_packed_b_lookup_json(const mmtune_packed_b* packed, char* json, int64_t size) {
  constexpr const char* kRoutine = "mmtune_packed_b_lookup_json";
  try {
    if (packed == nullptr) return FailIn(kRoutine, MMTUNE_INVALID_ARGUMENT, "packed is NULL"), -1;
    const mmtune::LookupReport& report =
        std::visit([](const auto& w) -> const mmtune::LookupReport& { return w.lookup(); },
                   packed->weights);
    return CopyLookupJson(kRoutine, report, json, size);
  } catch (const std::exception& e) {
    return FailIn(kRoutine, MMTUNE_INTERNAL, e.what()), -1;
  }
}

void mmtune_f32_to_bf16(const float* values, mmtune_bf16* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = mmtune::ToBFloat16(values[i]).bits;
}

void mmtune_bf16_to_f32(const mmtune_bf16* values, float* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) out[i] = mmtune::ToFloat(mmtune::BFloat16{values[i]});
}

const char* mmtune_last_error(void) { return tls_last_error.c_str(); }

}  // extern "C"
