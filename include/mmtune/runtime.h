// mmtune's runtime, C++ API: GEMM with the kernel config tuned for this machine and shape.
//
//   auto runtime = mmtune::Runtime::Open({.db_path = "tuned.db"});
//   if (!runtime) { /* runtime.error().message says why */ }
//   (*runtime)->Gemm(mmtune::Layout::kRowMajor, mmtune::Trans::kNo, mmtune::Trans::kNo,
//                    m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
//
// At open, the winners of this machine (by fingerprint) are loaded from the DB into memory; a
// call then picks, without any SQL: the winner of the exact problem, else the winner of the
// nearest tuned problem (its config re-checked for the new shape), else the analytical default.
// A stored config this CPU cannot run is never used: it is skipped with one warning at open.
// A Runtime is thread-safe: any number of threads may call Gemm on one instance at once.
// docs/runtime.md has the whole story (threads, recording, environment variables).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "mmtune/bf16.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

struct RuntimeOptions {
  // The tuning DB (a `mmtune tune` DB or a `mmtune export`); empty: none, analytical defaults.
  std::string db_path;
  // The most threads one GEMM may use; 0: every core this process may run on. The environment
  // variable MMTUNE_NUM_THREADS caps it further.
  int max_threads = 0;
  // Also use the winners of machines with another fingerprint but the same ISA level and data
  // cache sizes (e.g. a DB tuned on a sibling instance type).
  bool allow_compatible = false;
  // Whether the DB's winners are used. Without them every problem runs the analytical default
  // as a runtime with this DB runs an untuned shape: sized by what the DB measured of this
  // machine (its effective last-level cache, its zmm FMA pipes). `mmtune bench` opens one for
  // its default rows.
  bool use_winners = true;
  // Record the problems that had no exact winner (calls and time) into this file when the
  // runtime closes, for `mmtune tune --from-record`. Empty: the MMTUNE_RECORD environment
  // variable, if set; else nothing is recorded.
  std::string record_path;
  // Whether an empty `record_path` falls back to MMTUNE_RECORD. Tools that call GEMMs for their
  // own purposes (mmtune bench) turn it off, so they never record into an application's file.
  bool record_from_environment = true;
};

// The most threads one GEMM of a Runtime opened with `max_threads` = 0 uses: every core this
// process may run on, capped by MMTUNE_NUM_THREADS. `mmtune tune` tunes for this count unless
// told otherwise, so that its winners are the ones the runtime can use.
int DefaultRuntimeThreads();

// In the order the runtime tries them: exact, bucket, nearest, default. (kBucket is last in the
// enum so that the values of the others stay what they were.)
enum class LookupTier { kExact, kNearest, kDefault, kBucket };
const char* ToString(LookupTier tier);  // "exact", "nearest", "default", "bucket"

// What the runtime would run for a problem, for people and tools (`mmtune lookup`).
struct LookupReport {
  LookupTier tier = LookupTier::kDefault;
  Problem tuned;             // exact / bucket / nearest: the tuned problem whose winner is used
  std::string config_json;   // the kernel config, as stored in the DB
  std::string config_text;   // the same on one line, for people
  double gflops = 0.0;       // measured on `tuned` when it was tuned; 0 for the default
  int threads = 1;           // threads the call runs with
  std::string threads_reason;  // why that many, in a phrase (`mmtune lookup` prints it)
  // bucket: the tuned range and its bucket policy, e.g. "1..2048x4096x4096 (pow2)"; else empty.
  std::string bucket_range;
  // Packed weights (CallForm::kPackedB) held as panels: the config a GEMM of the problem's M
  // runs on them, where it is not `config_text` (another tile or split of the threads on the
  // same panels: docs/runtime.md, Packed weights); else empty.
  std::string runs_text;
};

// One GEMM problem fixed in advance (layout, transposes, M, N, K, leading dimensions, alpha,
// beta), made by Runtime::Bind: the winner is looked up and the arguments are checked once, so
// a call passes only A, B and C and fails only where memory runs out. For code that runs the same shape many times
// (a layer's weights in a decode loop), as libxsmm's dispatched kernels are used; the saving
// shows on small shapes (docs/runtime.md, "Fixed problems"). T is float or double.
//
// Independent of the Runtime that made it: it may be kept after the runtime closes (calls it
// makes then are no longer recorded). Any number of threads may call Run on one at once. A
// moved-from FixedGemm may only be destroyed or assigned to.
template <typename T>
class FixedGemm {
 public:
  FixedGemm(FixedGemm&&) noexcept;
  FixedGemm& operator=(FixedGemm&&) noexcept;
  ~FixedGemm();

  // C = alpha * op(A) * op(B) + beta * C for the bound problem, A, B and C stored as bound.
  // Fails only where the scratch memory of the run cannot be had (kIo), with C unchanged.
  Status Run(const T* a, const T* b, T* c) const;

  // What runs (as Runtime::Lookup reports it). M or N = 0: the default tier with an empty
  // config, since nothing runs.
  const LookupReport& lookup() const;

  struct Impl;

 private:
  friend class Runtime;
  explicit FixedGemm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Weights packed once: op(B) of a K x N problem (a layer's weight matrix) copied into the panel
// order of the config that will run it, made by Runtime::PackB, used by the Runtime::Gemm
// overloads that take it. Such a GEMM skips B's packing, which for a few rows of A is most of
// the work. T is B's element type: float, double, BFloat16, or std::int8_t (the u8s8s32 GEMM).
//
// The config is looked up when B is packed, for the M given there (lookup() says which and
// why). Where it is of the packed family, B is held as its panels and every GEMM runs that
// config, a GEMM with fewer rows than its tile a shorter tile of the same panels. Where it reads
// B unpacked (direct, gemv: small problems, M = 1), B is held as a copy, and each GEMM runs the
// runtime's own lookup for its M on it. Independent of the Runtime that made it; any number of
// threads may use one at once. A moved-from PackedWeights may only be destroyed or assigned to.
template <typename T>
class PackedWeights {
 public:
  PackedWeights(PackedWeights&&) noexcept;
  PackedWeights& operator=(PackedWeights&&) noexcept;
  ~PackedWeights();

  Layout layout() const;
  std::int64_t k() const;
  std::int64_t n() const;
  // Bytes of the packed copy (panels zero-padded to whole tiles).
  std::size_t bytes() const;
  // Whether B is held as panels (else as a copy; see above).
  bool holds_panels() const;
  // The config the weights were packed for, as Runtime::Lookup reports one.
  const LookupReport& lookup() const;

  struct Impl;

 private:
  friend class Runtime;
  explicit PackedWeights(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Runtime {
 public:
  // Fails when the DB cannot be read (missing, not an mmtune DB, newer schema) or the machine
  // cannot be described; never because of a bad row inside the DB (those are skipped).
  static Result<std::unique_ptr<Runtime>> Open(const RuntimeOptions& options = {});
  ~Runtime();  // writes the record file, when recording
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // C = alpha * op(A) * op(B) + beta * C with BLAS semantics (M, N, K >= 0, leading dimensions
  // at least the minimum, beta = 0 never reads C). An error means nothing was written.
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
              std::int64_t ldb, float beta, float* c, std::int64_t ldc);
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, double alpha, const double* a, std::int64_t lda, const double* b,
              std::int64_t ldb, double beta, double* c, std::int64_t ldc);

  // bf16: A and B bfloat16 (mmtune/bf16.h converts f32 data), C, alpha and beta f32, products
  // accumulated in f32.
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, float alpha, const BFloat16* a, std::int64_t lda, const BFloat16* b,
              std::int64_t ldb, float beta, float* c, std::int64_t ldc);
  // s8: A unsigned 8-bit, B signed 8-bit, C, alpha and beta s32; exact, modulo 2^32 (wraps,
  // never saturates). docs/low-precision.md has the conventions.
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, std::int32_t alpha, const std::uint8_t* a, std::int64_t lda,
              const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
              std::int64_t ldc);
  // The GEMMs above followed by a fused epilogue (mmtune/types.h): C = act(alpha * op(A) op(B)
  // + beta * C + bias), applied to each tile of C as it is finished, not in a pass of its own.
  // A bias kind without a bias pointer, or an s8 activation other than relu, is an error
  // (kInvalidArgument, nothing written). The tuned winners of the plain GEMM run it.
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
              std::int64_t ldb, float beta, float* c, std::int64_t ldc,
              const Epilogue<float>& epilogue);
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, double alpha, const double* a, std::int64_t lda, const double* b,
              std::int64_t ldb, double beta, double* c, std::int64_t ldc,
              const Epilogue<double>& epilogue);
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, float alpha, const BFloat16* a, std::int64_t lda, const BFloat16* b,
              std::int64_t ldb, float beta, float* c, std::int64_t ldc,
              const Epilogue<float>& epilogue);
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, std::int32_t alpha, const std::uint8_t* a, std::int64_t lda,
              const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
              std::int64_t ldc, const Epilogue<std::int32_t>& epilogue);

  // s8s8s32: A and B signed 8-bit (symmetric quantization), C, alpha and beta s32; exact,
  // modulo 2^32. Runs the u8s8s32 GEMM above on A + 128 (the s8 winners serve it) with the
  // +128's share, alpha x 128 x the column sums of op(B), subtracted from every row of C as a
  // column bias of its epilogue; costs a pass over A and one over op(B) beside it
  // (docs/low-precision.md).
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, std::int32_t alpha, const std::int8_t* a, std::int64_t lda,
              const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
              std::int64_t ldc);

  // Quantized layers: the s8 GEMM of A (unsigned, or signed: then run on A + 128 as above) and
  // B with its s32 sums dequantized to f32 C (mmtune/types.h: Dequantization) and put through
  // `epilogue`, tile by tile in the GEMM's pass; C is only written (no alpha or beta). Where A
  // is signed or has a zero point, costs a pass over op(B) for its column sums. The s8 winners
  // run it. An error means nothing was written.
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, const std::uint8_t* a, std::int64_t lda, const std::int8_t* b,
              std::int64_t ldb, float* c, std::int64_t ldc, const Dequantization& dequantization,
              const Epilogue<float>& epilogue = {});
  Status Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
              std::int64_t k, const std::int8_t* a, std::int64_t lda, const std::int8_t* b,
              std::int64_t ldb, float* c, std::int64_t ldc, const Dequantization& dequantization,
              const Epilogue<float>& epilogue = {});

  // A batch of GEMMs of one shape (attention's heads, many small products): item i is the Gemm
  // above with A, B and C moved by i times `batch`'s strides (mmtune/types.h; B may be shared,
  // stride 0). With at least max_threads() items, each thread runs whole items with the config
  // of one item on one thread; with fewer, the config of one plain call of the item's shape
  // runs them (whole items per thread where its threads are no more than the items, else the
  // items in turn on its team). `epilogue` (the fused epilogue of Gemm) applies to every item,
  // the same bias vector to each. An error: malformed arguments (nothing written), or no
  // scratch memory (kIo; each item is then done or unchanged). The dtypes of Gemm, but s8s8s32.
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, float alpha, const float* a, std::int64_t lda,
                   const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                   const BatchStrides& batch,
                   const Epilogue<float>& epilogue = {});
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, double alpha, const double* a, std::int64_t lda,
                   const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc,
                   const BatchStrides& batch,
                   const Epilogue<double>& epilogue = {});
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, float alpha, const BFloat16* a, std::int64_t lda,
                   const BFloat16* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                   const BatchStrides& batch,
                   const Epilogue<float>& epilogue = {});
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, std::int32_t alpha, const std::uint8_t* a, std::int64_t lda,
                   const std::int8_t* b, std::int64_t ldb, std::int32_t beta, std::int32_t* c,
                   std::int64_t ldc, const BatchStrides& batch,
                   const Epilogue<std::int32_t>& epilogue = {});
  // The same with an array of `count` pointers per operand (item i: a[i], b[i], c[i]); the C
  // items must not overlap.
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, float alpha, const float* const* a, std::int64_t lda,
                   const float* const* b, std::int64_t ldb, float beta, float* const* c,
                   std::int64_t ldc, std::int64_t count, const Epilogue<float>& epilogue = {});
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, double alpha, const double* const* a, std::int64_t lda,
                   const double* const* b, std::int64_t ldb, double beta, double* const* c,
                   std::int64_t ldc, std::int64_t count, const Epilogue<double>& epilogue = {});
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, float alpha, const BFloat16* const* a, std::int64_t lda,
                   const BFloat16* const* b, std::int64_t ldb, float beta, float* const* c,
                   std::int64_t ldc, std::int64_t count, const Epilogue<float>& epilogue = {});
  Status GemmBatch(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m, std::int64_t n,
                   std::int64_t k, std::int32_t alpha, const std::uint8_t* const* a,
                   std::int64_t lda, const std::int8_t* const* b, std::int64_t ldb,
                   std::int32_t beta, std::int32_t* const* c, std::int64_t ldc,
                   std::int64_t count,
                   const Epilogue<std::int32_t>& epilogue = {});

  // The f32 or f64 Gemm above with everything but the matrices fixed now: fails where Gemm
  // would fail for that problem (negative dimensions, a leading dimension below the minimum).
  // T comes from alpha: Bind(..., 1.0f, lda, ldb, 0, ldc) is f32.
  template <typename T>
    requires std::is_same_v<T, float> || std::is_same_v<T, double>
  Result<FixedGemm<T>> Bind(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                            std::int64_t n, std::int64_t k, T alpha, std::int64_t lda,
                            std::int64_t ldb, std::type_identity_t<T> beta,
                            std::int64_t ldc) const;
  // The same with a fused epilogue fixed too (as the Gemm overloads with one take it; its bias
  // is read at every run, so it must outlive the FixedGemm). A malformed epilogue fails here.
  template <typename T>
    requires std::is_same_v<T, float> || std::is_same_v<T, double>
  Result<FixedGemm<T>> Bind(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                            std::int64_t n, std::int64_t k, T alpha, std::int64_t lda,
                            std::int64_t ldb, std::type_identity_t<T> beta, std::int64_t ldc,
                            const Epilogue<std::type_identity_t<T>>& epilogue) const;

  // Packs op(B), K x N stored as `layout` / `trans_b` with leading dimension `ldb`, for GEMMs
  // of about `m` rows (M >= 1: the config is looked up for that M, see PackedWeights; a GEMM of
  // any M may use the weights). Fails on bad arguments (kInvalidArgument) or where the memory of
  // the copy cannot be had (kIo). The weights' GEMMs on panels run on this runtime's threads.
  template <typename T>
    requires std::is_same_v<T, float> || std::is_same_v<T, double> ||
             std::is_same_v<T, BFloat16> || std::is_same_v<T, std::int8_t>
  Result<PackedWeights<T>> PackB(Layout layout, Trans trans_b, std::int64_t m, std::int64_t n,
                                 std::int64_t k, const T* b, std::int64_t ldb) const;

  // C = alpha * op(A) * B + beta * C with B packed: N and K are the weights', `layout` must be
  // theirs (kInvalidArgument otherwise). The dtypes and semantics of the Gemm overloads above.
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha, const float* a,
              std::int64_t lda, const PackedWeights<float>& b, float beta, float* c,
              std::int64_t ldc);
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, double alpha, const double* a,
              std::int64_t lda, const PackedWeights<double>& b, double beta, double* c,
              std::int64_t ldc);
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha, const BFloat16* a,
              std::int64_t lda, const PackedWeights<BFloat16>& b, float beta, float* c,
              std::int64_t ldc);
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, std::int32_t alpha,
              const std::uint8_t* a, std::int64_t lda, const PackedWeights<std::int8_t>& b,
              std::int32_t beta, std::int32_t* c, std::int64_t ldc);
  // The same followed by a fused epilogue, as the unpacked Gemm overloads with one take it.
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha, const float* a,
              std::int64_t lda, const PackedWeights<float>& b, float beta, float* c,
              std::int64_t ldc, const Epilogue<float>& epilogue);
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, double alpha, const double* a,
              std::int64_t lda, const PackedWeights<double>& b, double beta, double* c,
              std::int64_t ldc, const Epilogue<double>& epilogue);
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, float alpha, const BFloat16* a,
              std::int64_t lda, const PackedWeights<BFloat16>& b, float beta, float* c,
              std::int64_t ldc, const Epilogue<float>& epilogue);
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, std::int32_t alpha,
              const std::uint8_t* a, std::int64_t lda, const PackedWeights<std::int8_t>& b,
              std::int32_t beta, std::int32_t* c, std::int64_t ldc,
              const Epilogue<std::int32_t>& epilogue);
  // A quantized layer with its weights packed: the dequantized s8 Gemm overloads above, B
  // packed. The column sums of op(B) that A's zero point and a signed A need were taken when B
  // was packed, so no call reads B beyond the GEMM itself.
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, const std::uint8_t* a,
              std::int64_t lda, const PackedWeights<std::int8_t>& b, float* c, std::int64_t ldc,
              const Dequantization& dequantization, const Epilogue<float>& epilogue = {});
  Status Gemm(Layout layout, Trans trans_a, std::int64_t m, const std::int8_t* a,
              std::int64_t lda, const PackedWeights<std::int8_t>& b, float* c, std::int64_t ldc,
              const Dequantization& dequantization, const Epilogue<float>& epilogue = {});

  // What Gemm would run for `problem` (its `threads` field is ignored: the runtime decides).
  LookupReport Lookup(const Problem& problem) const;

  int max_threads() const;
  std::size_t winners_loaded() const;
  // One line per DB row that was skipped at open, and why.
  const std::vector<std::string>& skipped_winners() const;
  // Writes what was recorded so far (merged with the file's earlier content); also done when
  // the runtime closes. A no-op when not recording.
  Status FlushRecord();

  struct Impl;

 private:
  explicit Runtime(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace mmtune
