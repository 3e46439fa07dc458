// The 8-bit GEMMs built on the u8s8s32 GEMM that the VNNI dot products compute.
//  - s8s8s32 (both operands signed 8-bit, as symmetric quantization makes them): A + 128 is
//    unsigned (its sign bit flipped), and
//      A op(B) = (A + 128) op(B) - 128 * (column sums of op(B)),
//    so C = alpha * (A + 128) op(B) + beta * C - alpha * 128 * colsum(op(B)) on every row, all
//    modulo 2^32: exact like u8s8s32, with the same wrap-around. The last term is the GEMM's
//    epilogue, a bias per column, applied to each tile as it is finished.
//  - u8s8 and s8s8 dequantized to f32 (mmtune/types.h: Dequantization): A's zero point z (and
//    the +128 of a signed A) is the same kind of column term, -(z [+ 128]) * colsum(op(B)), and
//    the per-column scales and the f32 epilogue follow in the same per-tile call (epilogue.h:
//    DequantizeToF32), which writes the floats over the s32 sums in C's own storage.
#pragma once

#include <cstdint>
#include <functional>

#include "kernels/epilogue.h"
#include "kernels/gemm.h"
#include "mmtune/result.h"
#include "mmtune/types.h"

namespace mmtune {

// Runs the s8s8s32 GEMM with `u8s8s32`, which computes the u8s8s32 GEMM of its arguments with
// that epilogue (the runtime's, with its tuned winners). Checks the arguments first: an error
// means nothing was written. Costs a pass over A (copied, shifted) and one over op(B) beside
// the GEMM.
using U8S8S32Gemm = std::function<Status(std::int64_t lda, const std::uint8_t* a,
                                         const Epilogue<std::int32_t>& compensation)>;
Status SignedInt8Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                      std::int64_t n, std::int64_t k, std::int32_t alpha, const std::int8_t* a,
                      std::int64_t lda, const std::int8_t* b, std::int64_t ldb,
                      std::int64_t ldc, const U8S8S32Gemm& u8s8s32);

// The column sums of op(B), K x N stored as `layout` / `trans_b`, into sums[0, n), modulo 2^32.
void ColumnSumsOf(Layout layout, Trans trans_b, std::int64_t n, std::int64_t k,
                  const std::int8_t* b, std::int64_t ldb, std::uint32_t* sums);

// Runs an 8-bit GEMM dequantized to f32 with `u8s8s32`, which runs the u8s8s32 GEMM it is given
// (alpha 1, beta 0, C's f32 storage holding the sums, the dequantizing epilogue). A is unsigned
// (`a_signed` false) or signed (then copied, shifted, as above). Checks the arguments first: an
// error means nothing was written. Costs a pass over op(B) where A has a zero point or a sign,
// unless `b_column_sums` gives its column sums (ColumnSumsOf; then `b` is not read: packed
// weights pass null and fill in B in `u8s8s32`).
using DequantizedU8S8Gemm = std::function<Status(const GemmArgs<S8Gemm>& args)>;
Status DequantizedInt8Gemm(Layout layout, Trans trans_a, Trans trans_b, std::int64_t m,
                           std::int64_t n, std::int64_t k, const std::uint8_t* a, bool a_signed,
                           std::int64_t lda, const std::int8_t* b, std::int64_t ldb, float* c,
                           std::int64_t ldc, const Dequantization& dequantization,
                           const Epilogue<float>& epilogue, const DequantizedU8S8Gemm& u8s8s32,
                           const std::uint32_t* b_column_sums = nullptr);

}  // namespace mmtune
