#include "kernels/packed_b.h"

#include <algorithm>
#include <new>

#include "kernels/gemm_internal.h"

namespace mmtune {

template <typename X>
bool PackedB<X>::PackedFor(const KernelConfig& config) const {
  return config.family == KernelFamily::kPacked && config.isa == config_.isa &&
         config.mr == config_.mr && config.nr == config_.nr &&
         config.k_unroll == config_.k_unroll &&
         std::min<std::int64_t>(config.kc, detail::RoundUp(k_, a_group_)) == kc_;
}

template <typename X>
void PackedB<X>::Free::operator()(B* p) const {
  ::operator delete(p, std::align_val_t{kAlignment});
}

template class PackedB<float>;
template class PackedB<double>;
template class PackedB<Bf16Gemm>;
template class PackedB<S8Gemm>;

}  // namespace mmtune
