#include "kernels/epilogue.h"

#include <string>
#include <type_traits>

namespace mmtune {

const EpilogueEntry& GenericEpilogues();
#if MMTUNE_X86_KERNELS
const EpilogueEntry& Avx2Epilogues();
const EpilogueEntry& Avx512Epilogues();
#endif

const EpilogueEntry& EpilogueKernels(IsaLevel isa) {
#if MMTUNE_X86_KERNELS
  if (isa == IsaLevel::kAvx512) return Avx512Epilogues();
  if (isa == IsaLevel::kAvx2) return Avx2Epilogues();
#endif
  (void)isa;
  return GenericEpilogues();
}

template <typename C>
Status CheckEpilogue(const Epilogue<C>& epilogue) {
  if (epilogue.bias_kind != BiasKind::kNone && epilogue.bias == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     std::string("the epilogue's ") + ToString(epilogue.bias_kind) +
                         " bias is a null pointer");
  }
  if constexpr (std::is_integral_v<C>) {
    if (epilogue.activation != Activation::kNone && epilogue.activation != Activation::kRelu) {
      return MakeError(ErrorCode::kInvalidArgument,
                       std::string("activation ") + ToString(epilogue.activation) +
                           " needs a floating-point C; s32 C takes none or relu");
    }
  }
  return OkStatus();
}

Status CheckDequantize(const DequantizeToF32& dequantize, const Epilogue<std::int32_t>& s32,
                       std::int32_t beta) {
  if (dequantize.column_scales == nullptr || dequantize.column_offsets == nullptr) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the dequantization's column scales or offsets are a null pointer");
  }
  if (!s32.Empty() || beta != 0) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "a GEMM dequantized to f32 takes beta = 0 and no s32 epilogue");
  }
  return CheckEpilogue(dequantize.output);
}

template <typename C>
EpilogueCall<C>::EpilogueCall(const Epilogue<C>& epilogue, const DequantizeToF32* dequantize,
                              IsaLevel isa)
    : epilogue_(epilogue) {
  if constexpr (std::is_same_v<C, std::int32_t>) {
    if (dequantize != nullptr) {
      dequantize_ = dequantize;
      const Epilogue<float>& out = dequantize->output;
      dequantize_fn_ = EpilogueKernels(isa)
                           .dequantize[static_cast<std::size_t>(out.bias_kind)]
                                      [static_cast<std::size_t>(out.activation)];
      return;
    }
  }
  if (epilogue.Empty()) return;
  fn_ = FindEpilogue<C>(EpilogueKernels(isa), epilogue.bias_kind, epilogue.activation);
}

template Status CheckEpilogue(const Epilogue<float>&);
template Status CheckEpilogue(const Epilogue<double>&);
template Status CheckEpilogue(const Epilogue<std::int32_t>&);
template class EpilogueCall<float>;
template class EpilogueCall<double>;
template class EpilogueCall<std::int32_t>;

}  // namespace mmtune
