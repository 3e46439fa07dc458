/* mmtune's runtime, C API: GEMM with the kernel config tuned for this machine and shape.
 *
 *   mmtune_runtime* rt = NULL;
 *   if (mmtune_open("tuned.db", &rt) != MMTUNE_OK) fprintf(stderr, "%s\n", mmtune_last_error());
 *   mmtune_sgemm(rt, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS,
 *                m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
 *   mmtune_close(rt);
 *
 * Lookup tiers, threads and recording are those of the C++ API (mmtune/runtime.h) and are
 * described in docs/runtime.md. A runtime is thread-safe: any number of threads may call the
 * GEMM functions on one runtime at once. Layout and transpose values are CBLAS's, so
 * CBLAS enums can be passed as they are. */
#ifndef MMTUNE_MMTUNE_H_
#define MMTUNE_MMTUNE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mmtune_runtime mmtune_runtime;

enum { MMTUNE_ROW_MAJOR = 101, MMTUNE_COL_MAJOR = 102 };
enum { MMTUNE_NO_TRANS = 111, MMTUNE_TRANS = 112, MMTUNE_CONJ_TRANS = 113 /* = TRANS for reals */ };

typedef enum mmtune_status {
  MMTUNE_OK = 0,
  MMTUNE_INVALID_ARGUMENT = 1, /* a malformed argument: dimension, leading dimension, enum, NULL */
  MMTUNE_UNSUPPORTED = 2,      /* well-formed, but this build or CPU cannot do it */
  MMTUNE_NOT_FOUND = 3,        /* e.g. the DB file does not exist */
  MMTUNE_IO_ERROR = 4,         /* the operating system refused (permissions, ...) */
  MMTUNE_CORRUPT = 5,          /* the DB is not an mmtune DB, or of a newer schema */
  MMTUNE_INTERNAL = 6
} mmtune_status;

typedef struct mmtune_options {
  const char* db_path;     /* NULL or "": no DB, analytical defaults */
  int max_threads;         /* 0: every core; MMTUNE_NUM_THREADS caps it further */
  int allow_compatible;    /* nonzero: also use winners of machines with the same ISA and caches */
  const char* record_path; /* NULL: MMTUNE_RECORD if set; record untuned problems there */
} mmtune_options;

/* Sets every option to its default. */
void mmtune_options_init(mmtune_options* options);

/* Opens a runtime; on failure *runtime is NULL and mmtune_last_error() says why. */
mmtune_status mmtune_open(const char* db_path, mmtune_runtime** runtime);
mmtune_status mmtune_open_with_options(const mmtune_options* options, mmtune_runtime** runtime);
/* Writes the record file when recording. NULL is fine. */
void mmtune_close(mmtune_runtime* runtime);

/* C = alpha * op(A) * op(B) + beta * C, BLAS semantics. On an error nothing is written. */
mmtune_status mmtune_sgemm(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                           int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                           int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                           int64_t ldc);
mmtune_status mmtune_dgemm(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                           int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                           int64_t lda, const double* b, int64_t ldb, double beta, double* c,
                           int64_t ldc);

/* A GEMM problem fixed in advance (layout, transposes, M, N, K, leading dimensions, alpha,
 * beta): the winner is looked up and the arguments are checked once, so each run passes only
 * A, B and C, for code that repeats one shape (docs/runtime.md, "Fixed problems"). Binding fails
 * where mmtune_sgemm / mmtune_dgemm would fail for that problem; *fixed is then NULL. A fixed
 * GEMM does not depend on its runtime (it may be used after mmtune_close; its calls are then no
 * longer recorded); any number of threads may run one at once. A run returns MMTUNE_OK, or
 * MMTUNE_INVALID_ARGUMENT for a NULL fixed GEMM or a NULL matrix the problem needs. */
typedef struct mmtune_fixed_sgemm mmtune_fixed_sgemm;
typedef struct mmtune_fixed_dgemm mmtune_fixed_dgemm;
mmtune_status mmtune_bind_sgemm(const mmtune_runtime* runtime, int layout, int trans_a,
                                int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                int64_t lda, int64_t ldb, float beta, int64_t ldc,
                                mmtune_fixed_sgemm** fixed);
mmtune_status mmtune_bind_dgemm(const mmtune_runtime* runtime, int layout, int trans_a,
                                int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                                int64_t lda, int64_t ldb, double beta, int64_t ldc,
                                mmtune_fixed_dgemm** fixed);
mmtune_status mmtune_fixed_sgemm_run(const mmtune_fixed_sgemm* fixed, const float* a,
                                     const float* b, float* c);
mmtune_status mmtune_fixed_dgemm_run(const mmtune_fixed_dgemm* fixed, const double* a,
                                     const double* b, double* c);
/* NULL is fine. */
void mmtune_fixed_sgemm_free(mmtune_fixed_sgemm* fixed);
void mmtune_fixed_dgemm_free(mmtune_fixed_dgemm* fixed);

/* bf16 values are the upper 16 bits of an IEEE binary32 (sign, 8-bit exponent, 7-bit mantissa). */
typedef uint16_t mmtune_bf16;

/* bf16 GEMM: A and B bf16, C f32, products accumulated in f32. Same semantics and errors as
 * mmtune_sgemm. */
mmtune_status mmtune_gemm_bf16(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                               int64_t m, int64_t n, int64_t k, float alpha, const mmtune_bf16* a,
                               int64_t lda, const mmtune_bf16* b, int64_t ldb, float beta,
                               float* c, int64_t ldc);
/* Integer GEMM: A unsigned 8-bit, B signed 8-bit, C 32-bit signed; exact modulo 2^32 (results
 * wrap, never saturate). */
mmtune_status mmtune_gemm_u8s8s32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, int32_t alpha,
                                  const uint8_t* a, int64_t lda, const int8_t* b, int64_t ldb,
                                  int32_t beta, int32_t* c, int64_t ldc);
/* Integer GEMM with both operands signed 8-bit (symmetric quantization), C 32-bit signed;
 * exact modulo 2^32 like mmtune_gemm_u8s8s32, which it runs on A + 128 with alpha x 128 x the
 * column sums of op(B) subtracted from each row of C as it is written (docs/low-precision.md). */
mmtune_status mmtune_gemm_s8s8s32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, int32_t alpha,
                                  const int8_t* a, int64_t lda, const int8_t* b, int64_t ldb,
                                  int32_t beta, int32_t* c, int64_t ldc);

/* Fused epilogues (mmtune/types.h, Epilogue): C = act(alpha * op(A) op(B) + beta * C + bias),
 * applied to each tile of C as it is finished. The bias has N elements (per column of C) or M
 * (per row) of C's type; gelu is the tanh form. s32 C takes no activation but relu, and adds
 * its bias modulo 2^32. */
enum { MMTUNE_BIAS_NONE = 0, MMTUNE_BIAS_PER_COLUMN = 1, MMTUNE_BIAS_PER_ROW = 2 };
enum { MMTUNE_ACT_NONE = 0, MMTUNE_ACT_RELU = 1, MMTUNE_ACT_GELU = 2, MMTUNE_ACT_SILU = 3 };
typedef struct mmtune_epilogue {
  int bias_kind;    /* MMTUNE_BIAS_* */
  const void* bias; /* float for sgemm and bf16, double for dgemm, int32_t for u8s8s32 */
  int activation;   /* MMTUNE_ACT_* */
} mmtune_epilogue;

/* The GEMMs above with an epilogue (NULL: none). Their semantics and errors, and
 * MMTUNE_INVALID_ARGUMENT (nothing written) for an unknown bias kind or activation, a bias kind
 * with a NULL bias, or an s32 activation other than relu. */
mmtune_status mmtune_sgemm_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                    int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                    const float* a, int64_t lda, const float* b, int64_t ldb,
                                    float beta, float* c, int64_t ldc,
                                    const mmtune_epilogue* epilogue);
mmtune_status mmtune_dgemm_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                    int trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                                    const double* a, int64_t lda, const double* b, int64_t ldb,
                                    double beta, double* c, int64_t ldc,
                                    const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_bf16_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                        int trans_b, int64_t m, int64_t n, int64_t k,
                                        float alpha, const mmtune_bf16* a, int64_t lda,
                                        const mmtune_bf16* b, int64_t ldb, float beta, float* c,
                                        int64_t ldc, const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_u8s8s32_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                           int trans_b, int64_t m, int64_t n, int64_t k,
                                           int32_t alpha, const uint8_t* a, int64_t lda,
                                           const int8_t* b, int64_t ldb, int32_t beta,
                                           int32_t* c, int64_t ldc,
                                           const mmtune_epilogue* epilogue);

/* mmtune_bind_sgemm / mmtune_bind_dgemm with an epilogue fixed too (NULL: none); its bias is
 * read at every run, so it must outlive the fixed GEMM. Epilogue errors fail the binding. */
mmtune_status mmtune_bind_sgemm_epilogue(const mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         float alpha, int64_t lda, int64_t ldb, float beta,
                                         int64_t ldc, const mmtune_epilogue* epilogue,
                                         mmtune_fixed_sgemm** fixed);
mmtune_status mmtune_bind_dgemm_epilogue(const mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         double alpha, int64_t lda, int64_t ldb, double beta,
                                         int64_t ldc, const mmtune_epilogue* epilogue,
                                         mmtune_fixed_dgemm** fixed);

/* Quantized layers (mmtune/runtime.h, the Runtime::Gemm taking a Dequantization): the 8-bit
 * GEMM of A (u8, or s8) and B (s8) with its s32 sums turned into f32 C in the same pass,
 * C = act(a_scale * b_scale_j * sum_p (A_ip - a_zero_point) B_pj + bias), the epilogue (NULL:
 * none) with a float bias. C is only written. MMTUNE_INVALID_ARGUMENT (nothing written) for a
 * NULL dequantization and the epilogue errors above. */
typedef struct mmtune_dequantization {
  float a_scale;          /* A's real values: a_scale * (A - a_zero_point) */
  int32_t a_zero_point;
  const float* b_scales;  /* N values, one per column of op(B); NULL: b_scale for all */
  float b_scale;
} mmtune_dequantization;
mmtune_status mmtune_gemm_u8s8f32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, const uint8_t* a, int64_t lda,
                                  const int8_t* b, int64_t ldb, float* c, int64_t ldc,
                                  const mmtune_dequantization* dequantization,
                                  const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_s8s8f32(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                  int64_t m, int64_t n, int64_t k, const int8_t* a, int64_t lda,
                                  const int8_t* b, int64_t ldb, float* c, int64_t ldc,
                                  const mmtune_dequantization* dequantization,
                                  const mmtune_epilogue* epilogue);

/* Batches of GEMMs of one shape (mmtune/runtime.h, Runtime::GemmBatch): item i is the GEMM of
 * the same name without _batch, its A, B and C moved by i times stride_a, stride_b and stride_c
 * elements (>= 0; B may be shared with stride 0; C items must not overlap), or taken from
 * arrays of `count` pointers. With at least as many items as threads, each thread runs whole
 * items; else as mmtune/runtime.h's Runtime::GemmBatch says. On MMTUNE_INVALID_ARGUMENT nothing is
 * written; on MMTUNE_IO_ERROR (no scratch memory) each item is done or unchanged. */
mmtune_status mmtune_sgemm_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         float alpha, const float* a, int64_t lda,
                                         int64_t stride_a, const float* b, int64_t ldb,
                                         int64_t stride_b, float beta, float* c, int64_t ldc,
                                         int64_t stride_c, int64_t count);
mmtune_status mmtune_dgemm_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                         int trans_b, int64_t m, int64_t n, int64_t k,
                                         double alpha, const double* a, int64_t lda,
                                         int64_t stride_a, const double* b, int64_t ldb,
                                         int64_t stride_b, double beta, double* c, int64_t ldc,
                                         int64_t stride_c, int64_t count);
mmtune_status mmtune_gemm_bf16_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                             int trans_b, int64_t m, int64_t n, int64_t k,
                                             float alpha, const mmtune_bf16* a, int64_t lda,
                                             int64_t stride_a, const mmtune_bf16* b,
                                             int64_t ldb, int64_t stride_b, float beta, float* c,
                                             int64_t ldc, int64_t stride_c, int64_t count);
mmtune_status mmtune_gemm_u8s8s32_batch_strided(mmtune_runtime* runtime, int layout, int trans_a,
                                                int trans_b, int64_t m, int64_t n, int64_t k,
                                                int32_t alpha, const uint8_t* a, int64_t lda,
                                                int64_t stride_a, const int8_t* b, int64_t ldb,
                                                int64_t stride_b, int32_t beta, int32_t* c,
                                                int64_t ldc, int64_t stride_c, int64_t count);
/* The strided batches with a fused epilogue (NULL: none) applied to every item, the same bias
 * vector to each, as mmtune_sgemm_epilogue and the others apply it. */
mmtune_status mmtune_sgemm_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, float alpha, const float* a, int64_t lda, int64_t stride_a, const float* b,
    int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc, int64_t stride_c,
    int64_t count, const mmtune_epilogue* epilogue);
mmtune_status mmtune_dgemm_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, double alpha, const double* a, int64_t lda, int64_t stride_a, const double* b,
    int64_t ldb, int64_t stride_b, double beta, double* c, int64_t ldc, int64_t stride_c,
    int64_t count, const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_bf16_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, float alpha, const mmtune_bf16* a, int64_t lda, int64_t stride_a,
    const mmtune_bf16* b, int64_t ldb, int64_t stride_b, float beta, float* c, int64_t ldc,
    int64_t stride_c, int64_t count, const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_u8s8s32_batch_strided_epilogue(
    mmtune_runtime* runtime, int layout, int trans_a, int trans_b, int64_t m, int64_t n,
    int64_t k, int32_t alpha, const uint8_t* a, int64_t lda, int64_t stride_a, const int8_t* b,
    int64_t ldb, int64_t stride_b, int32_t beta, int32_t* c, int64_t ldc, int64_t stride_c,
    int64_t count, const mmtune_epilogue* epilogue);
mmtune_status mmtune_sgemm_batch(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                 int64_t m, int64_t n, int64_t k, float alpha,
                                 const float* const* a, int64_t lda, const float* const* b,
                                 int64_t ldb, float beta, float* const* c, int64_t ldc,
                                 int64_t count);
mmtune_status mmtune_dgemm_batch(mmtune_runtime* runtime, int layout, int trans_a, int trans_b,
                                 int64_t m, int64_t n, int64_t k, double alpha,
                                 const double* const* a, int64_t lda, const double* const* b,
                                 int64_t ldb, double beta, double* const* c, int64_t ldc,
                                 int64_t count);
mmtune_status mmtune_gemm_bf16_batch(mmtune_runtime* runtime, int layout, int trans_a,
                                     int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                                     const mmtune_bf16* const* a, int64_t lda,
                                     const mmtune_bf16* const* b, int64_t ldb, float beta,
                                     float* const* c, int64_t ldc, int64_t count);
mmtune_status mmtune_gemm_u8s8s32_batch(mmtune_runtime* runtime, int layout, int trans_a,
                                        int trans_b, int64_t m, int64_t n, int64_t k,
                                        int32_t alpha, const uint8_t* const* a, int64_t lda,
                                        const int8_t* const* b, int64_t ldb, int32_t beta,
                                        int32_t* const* c, int64_t ldc, int64_t count);

/* Weights packed once (mmtune/runtime.h, PackedWeights): op(B), K x N stored as `layout` /
 * `trans_b` with leading dimension `ldb`, copied into the panel order of the config that runs
 * it, chosen for GEMMs of about `m` rows (m >= 1); a GEMM of any M may use it and skips B's
 * packing. One handle type for every dtype: the _f32, _f64, _bf16 and _s8 (the int8 B of
 * mmtune_gemm_u8s8s32) packers make it, the GEMM of the same dtype uses it (another dtype's is
 * MMTUNE_INVALID_ARGUMENT). It does not depend on its runtime; any number of threads may use
 * one at once. On failure *packed is NULL. */
typedef struct mmtune_packed_b mmtune_packed_b;
mmtune_status mmtune_pack_b_f32(const mmtune_runtime* runtime, int layout, int trans_b,
                                int64_t m, int64_t n, int64_t k, const float* b, int64_t ldb,
                                mmtune_packed_b** packed);
mmtune_status mmtune_pack_b_f64(const mmtune_runtime* runtime, int layout, int trans_b,
                                int64_t m, int64_t n, int64_t k, const double* b, int64_t ldb,
                                mmtune_packed_b** packed);
mmtune_status mmtune_pack_b_bf16(const mmtune_runtime* runtime, int layout, int trans_b,
                                 int64_t m, int64_t n, int64_t k, const mmtune_bf16* b,
                                 int64_t ldb, mmtune_packed_b** packed);
mmtune_status mmtune_pack_b_s8(const mmtune_runtime* runtime, int layout, int trans_b,
                               int64_t m, int64_t n, int64_t k, const int8_t* b, int64_t ldb,
                               mmtune_packed_b** packed);
/* C = alpha * op(A) * B + beta * C with B packed: N and K are the packed B's, `layout` must be
 * the one it was packed with. Semantics and errors of mmtune_sgemm and the others. */
mmtune_status mmtune_gemm_f32_packed(mmtune_runtime* runtime, int layout, int trans_a, int64_t m,
                                     float alpha, const float* a, int64_t lda,
                                     const mmtune_packed_b* b, float beta, float* c, int64_t ldc);
mmtune_status mmtune_gemm_f64_packed(mmtune_runtime* runtime, int layout, int trans_a, int64_t m,
                                     double alpha, const double* a, int64_t lda,
                                     const mmtune_packed_b* b, double beta, double* c,
                                     int64_t ldc);
mmtune_status mmtune_gemm_bf16_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                      int64_t m, float alpha, const mmtune_bf16* a, int64_t lda,
                                      const mmtune_packed_b* b, float beta, float* c,
                                      int64_t ldc);
mmtune_status mmtune_gemm_u8s8s32_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                         int64_t m, int32_t alpha, const uint8_t* a, int64_t lda,
                                         const mmtune_packed_b* b, int32_t beta, int32_t* c,
                                         int64_t ldc);
/* The same with a fused epilogue (NULL: none), as mmtune_sgemm_epilogue and the others. */
mmtune_status mmtune_gemm_f32_packed_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                              int64_t m, float alpha, const float* a,
                                              int64_t lda, const mmtune_packed_b* b, float beta,
                                              float* c, int64_t ldc,
                                              const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_f64_packed_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                              int64_t m, double alpha, const double* a,
                                              int64_t lda, const mmtune_packed_b* b, double beta,
                                              double* c, int64_t ldc,
                                              const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_bf16_packed_epilogue(mmtune_runtime* runtime, int layout, int trans_a,
                                               int64_t m, float alpha, const mmtune_bf16* a,
                                               int64_t lda, const mmtune_packed_b* b, float beta,
                                               float* c, int64_t ldc,
                                               const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_u8s8s32_packed_epilogue(mmtune_runtime* runtime, int layout,
                                                  int trans_a, int64_t m, int32_t alpha,
                                                  const uint8_t* a, int64_t lda,
                                                  const mmtune_packed_b* b, int32_t beta,
                                                  int32_t* c, int64_t ldc,
                                                  const mmtune_epilogue* epilogue);
/* Quantized layers with packed s8 weights (mmtune_pack_b_s8): mmtune_gemm_u8s8f32 and
 * mmtune_gemm_s8s8f32 with B packed. The column sums of B that a zero point or a signed A needs
 * were taken when B was packed. */
mmtune_status mmtune_gemm_u8s8f32_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                         int64_t m, const uint8_t* a, int64_t lda,
                                         const mmtune_packed_b* b, float* c, int64_t ldc,
                                         const mmtune_dequantization* dequantization,
                                         const mmtune_epilogue* epilogue);
mmtune_status mmtune_gemm_s8s8f32_packed(mmtune_runtime* runtime, int layout, int trans_a,
                                         int64_t m, const int8_t* a, int64_t lda,
                                         const mmtune_packed_b* b, float* c, int64_t ldc,
                                         const mmtune_dequantization* dequantization,
                                         const mmtune_epilogue* epilogue);
/* The bytes of the packed copy; 0 for NULL. */
int64_t mmtune_packed_b_bytes(const mmtune_packed_b* packed);
/* NULL is fine. */
void mmtune_packed_b_free(mmtune_packed_b* packed);

/* What the runtime would run for a problem of `dtype` ("f32", "f64", "bf16" or "s8"), as a JSON
 * object: {"tier": "exact"|"bucket"|"nearest"|"default", "config": one line, "config_json": the
 * config, "threads": N, "threads_reason": why, "tuned": the tuned problem or null,
 * "bucket_range": the tuned range of the bucket tier or null, "runs": for packed weights, the
 * config a GEMM of the problem's M runs on their panels where it is another, else null,
 * "gflops": measured when tuned}. Writes at most `size` bytes (NUL included) into `json` and
 * returns the length of the whole text without the NUL, so a call with size 0 asks how much
 * room it needs; -1 on a bad argument (mmtune_last_error says which). */
int64_t mmtune_lookup_json(const mmtune_runtime* runtime, const char* dtype, int layout,
                           int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, char* json,
                           int64_t size);
/* The same for weights of that problem packed with mmtune_pack_b_*: what their GEMMs would run
 * (a winner of `mmtune tune --packed-b`, else the plain call's of that shape, else the nearest,
 * else the default). */
int64_t mmtune_lookup_packed_b_json(const mmtune_runtime* runtime, const char* dtype, int layout,
                                    int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                    char* json, int64_t size);
/* The same for a batch of `count` GEMMs of that problem (mmtune_*_batch*): a winner of `mmtune
 * tune --batch count`, else the nearest such, else the batch default, where any shape was tuned
 * for that count; else what the items run. A count < 1 is -1. */
int64_t mmtune_lookup_batch_json(const mmtune_runtime* runtime, const char* dtype, int layout,
                                 int trans_a, int trans_b, int64_t m, int64_t n, int64_t k,
                                 int64_t count, char* json, int64_t size);
/* What GEMMs with `packed` run, chosen when the weights were packed (a winner of `mmtune tune
 * --packed-b`, else the plain call's of that shape, else the nearest, else the default), as
 * mmtune_lookup_json's JSON object and with its conventions; -1 for a NULL `packed`. */
int64_t mmtune_packed_b_lookup_json(const mmtune_packed_b* packed, char* json, int64_t size);

/* Conversions of `count` values: f32 to bf16 rounds to nearest, ties to even (NaN stays NaN,
 * overflow becomes Inf); bf16 to f32 is exact. */
void mmtune_f32_to_bf16(const float* values, mmtune_bf16* out, int64_t count);
void mmtune_bf16_to_f32(const mmtune_bf16* values, float* out, int64_t count);

/* The message of the last failed call on this thread ("" when none); valid until the next call
 * on this thread. */
const char* mmtune_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* MMTUNE_MMTUNE_H_ */
