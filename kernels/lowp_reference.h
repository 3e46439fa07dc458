// The test oracle of the low-precision GEMMs, in the spirit of reference_gemm.h: a plain triple
// loop. bf16 products are widened to double and summed there (far more precise than any f32
// accumulation it judges); s8 sums are exact in 64 bits and then reduced modulo 2^32, which is
// what the wrapping s32 kernels must produce bit for bit.
#pragma once

#include "kernels/gemm.h"

namespace mmtune {

// Full BLAS semantics (M or N = 0: nothing; alpha = 0 or K = 0: C = beta * C; beta = 0 never
// reads C); an error, and nothing touched, for arguments CheckGemmArguments rejects.
template <class Kind>
Status ReferenceLowpGemm(const GemmArgs<Kind>& args);

extern template Status ReferenceLowpGemm<Bf16Gemm>(const GemmArgs<Bf16Gemm>&);
extern template Status ReferenceLowpGemm<S8Gemm>(const GemmArgs<S8Gemm>&);

}  // namespace mmtune
