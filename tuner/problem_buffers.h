// Operand buffers for timing one problem: allocated once, every operand of a copy the same
// distance past a 4 KiB page (PlacementBytes: large buffers from one allocator share their
// offset from a page, so their rows fall in the same cache sets as in the applications the
// tuner tunes for), first touched by the threads that will compute on them (so pages land on
// their NUMA node), filled with random values (never zeros: some hardware is faster on zeros,
// and a kernel that ignores its inputs must not pass verification). C is surrounded by canaries that reveal out-of-bounds writes.
//
// Element types: A, B and C of one type for f32 and f64; bf16 x bf16 -> f32 and u8 x s8 -> s32
// for the low-precision GEMMs. Floating values are uniform in [-1, 1) (rounded to bf16 for
// bf16), integers uniform over their whole range (so s32 results wrap).
//
// For cold-cache timing there are several copies of the operands whose total exceeds the
// last-level cache; each timed call uses the next copy, so none is still cached when reused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/thread_pool.h"
#include "mmtune/bf16.h"
#include "mmtune/types.h"

namespace mmtune {

// Page-aligned (4 KiB) array, freed with std::free.
template <typename T>
class AlignedArray {
 public:
  static constexpr std::size_t kAlignment = 4096;

  AlignedArray() = default;
  explicit AlignedArray(std::size_t count);
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(T* pointer) const;
  };
  std::unique_ptr<T, Free> data_;
  std::size_t size_ = 0;
};

template <typename TA, typename TB = TA, typename TC = TA>
class ProblemBuffers {
 public:
  // Canary elements before and after C's storage.
  static constexpr std::int64_t kCanaryElements = 64;
  // Where C starts in its allocation: one page in, so that C starts on a page as A and B do,
  // its leading canaries just before. With C only the canaries past a page, its rows would sit
  // 256 bytes (f32) past B's in every L1 set, unlike in applications' buffers, and the tuner
  // could rank tile orders the other way round from applications (docs/tuning.md, Operands).
  static constexpr std::int64_t kCOffset =
      static_cast<std::int64_t>(AlignedArray<TC>::kAlignment / sizeof(TC));
  static_assert(kCOffset >= kCanaryElements);
  // Where copy `copy`'s A, B and C start past their pages, in bytes: even copies on the page,
  // as aligned allocators give (64 bytes, a page), odd copies 16 bytes in, where glibc's malloc
  // puts large blocks (numpy's, std::vector's, plain malloc's). A kernel that reads operands in
  // place can run at very different speeds at the two, so the runner verifies and times every
  // candidate at both (docs/tuning.md, Operands). 16 bytes keep every element type aligned.
  static constexpr std::int64_t kMallocOffsetBytes = 16;
  static constexpr std::int64_t PlacementBytes(int copy) {
    return copy % 2 == 1 ? kMallocOffsetBytes : 0;
  }

  // `copies` >= 1 operand sets; `pool` members 0 .. threads - 1 first-touch their share.
  ProblemBuffers(const Problem& problem, int copies, std::uint64_t seed, ThreadPool& pool);

  int copies() const { return static_cast<int>(sets_.size()); }
  std::int64_t lda() const { return lda_; }
  std::int64_t ldb() const { return ldb_; }
  std::int64_t ldc() const { return ldc_; }
  const TA* a(int copy) const {
    return sets_[static_cast<std::size_t>(copy)].a.data() + Shift<TA>(copy);
  }
  const TB* b(int copy) const {
    return sets_[static_cast<std::size_t>(copy)].b.data() + Shift<TB>(copy);
  }
  TC* c(int copy) {
    return sets_[static_cast<std::size_t>(copy)].c.data() + kCOffset + Shift<TC>(copy);
  }
  const TC* c(int copy) const {
    return sets_[static_cast<std::size_t>(copy)].c.data() + kCOffset + Shift<TC>(copy);
  }
  // Every copy's A, B and C, in copy order: the pointer arrays of a batch whose items are the
  // copies (GemmPlan::RunBatch).
  struct ItemPointers {
    std::vector<const TA*> a;
    std::vector<const TB*> b;
    std::vector<TC*> c;
  };
  ItemPointers Items();

  // The random initial C that runs with beta != 0 start from.
  const TC* c_initial() const { return c_initial_.data(); }
  std::int64_t c_elements() const { return c_elements_; }

  // Copies the initial C into copy `copy` (for a beta != 0 verification run).
  void ResetC(int copy);
  // Fills copy `copy` of C with NaN (with beta = 0 a correct GEMM never reads it), or for an
  // integer C with a fixed garbage pattern.
  void PoisonC(int copy);
  // Whether the canaries around C of copy `copy` are intact.
  bool CanariesIntact(int copy) const;

  // The GEMM arguments on copy `copy`: `Args` is GemmArgs<T> or GemmArgs<Kind>, whose
  // fields are named alike.
  template <class Args>
  Args ArgsFor(int copy, decltype(Args::alpha) alpha, decltype(Args::beta) beta) {
    Args args;
    args.layout = problem_.layout;
    args.trans_a = problem_.trans_a;
    args.trans_b = problem_.trans_b;
    args.m = problem_.m;
    args.n = problem_.n;
    args.k = problem_.k;
    args.alpha = alpha;
    args.a = a(copy);
    args.lda = lda_;
    args.b = b(copy);
    args.ldb = ldb_;
    args.beta = beta;
    args.c = c(copy);
    args.ldc = ldc_;
    return args;
  }

 private:
  // PlacementBytes(copy) in elements of T.
  template <typename T>
  static constexpr std::int64_t Shift(int copy) {
    return PlacementBytes(copy) / static_cast<std::int64_t>(sizeof(T));
  }
  struct OperandSet {
    AlignedArray<TA> a;
    AlignedArray<TB> b;
    AlignedArray<TC> c;
  };
  Problem problem_;
  std::int64_t lda_ = 1, ldb_ = 1, ldc_ = 1;
  std::int64_t a_elements_ = 0, b_elements_ = 0, c_elements_ = 0;
  std::vector<OperandSet> sets_;
  AlignedArray<TC> c_initial_;
};

// How many operand copies cold-cache timing needs so that the copies together exceed twice the
// last-level cache (`llc_bytes`); at least 2, and at most what fits in `memory_limit_bytes`.
int ColdCacheCopies(const Problem& problem, std::uint64_t llc_bytes,
                    std::uint64_t memory_limit_bytes);

extern template class AlignedArray<float>;
extern template class AlignedArray<double>;
extern template class AlignedArray<BFloat16>;
extern template class AlignedArray<std::uint8_t>;
extern template class AlignedArray<std::int8_t>;
extern template class AlignedArray<std::int32_t>;
extern template class ProblemBuffers<float>;
extern template class ProblemBuffers<double>;
extern template class ProblemBuffers<BFloat16, BFloat16, float>;
extern template class ProblemBuffers<std::uint8_t, std::int8_t, std::int32_t>;

}  // namespace mmtune
