#include "tuner/problem_buffers.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <random>

#include "kernels/gemm_args.h"

namespace mmtune {
namespace {

template <typename T>
constexpr T kCanary = T(-98765.25);

std::int64_t StoredElements(Layout layout, Trans trans, std::int64_t rows, std::int64_t cols,
                            std::int64_t ld) {
  const std::int64_t stored_rows = trans == Trans::kYes ? cols : rows;
  const std::int64_t stored_cols = trans == Trans::kYes ? rows : cols;
  const std::int64_t outer = layout == Layout::kRowMajor ? stored_rows : stored_cols;
  return std::max<std::int64_t>(1, outer * ld);
}

// Each pool member writes its contiguous share first, so the OS places those pages near it.
// Values are uniform in [-1, 1), from a generator seeded per (seed, member): reproducible for a
// given thread count.
template <typename T>
void FirstTouchRandom(T* data, std::int64_t count, std::uint64_t seed, ThreadPool& pool,
                      int team) {
  const std::int64_t share = (count + team - 1) / team;
  pool.Run(team, [&](int member) {
    const std::int64_t begin = std::min(count, member * share);
    const std::int64_t end = std::min(count, begin + share);
    std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(member));
    for (std::int64_t i = begin; i < end; ++i) {
      // 24 random bits, centred: exact in float and double, never all zero.
      const auto bits = static_cast<std::int64_t>(rng() >> 40);
      data[i] = static_cast<T>(static_cast<double>(bits - (1 << 23)) / (1 << 23));
    }
  });
}

}  // namespace

template <typename T>
AlignedArray<T>::AlignedArray(std::size_t count) : size_(count) {
  const std::size_t bytes = std::max<std::size_t>(64, (count * sizeof(T) + 63) / 64 * 64);
  void* memory = std::aligned_alloc(64, bytes);
  if (memory == nullptr) throw std::bad_alloc();
  data_.reset(static_cast<T*>(memory));
}

template <typename T>
void AlignedArray<T>::Free::operator()(T* pointer) const {
  std::free(pointer);
}

template <typename T>
ProblemBuffers<T>::ProblemBuffers(const Problem& problem, int copies, std::uint64_t seed,
                                  ThreadPool& pool)
    : problem_(problem) {
  const Layout layout = problem.layout;
  lda_ = MinLeadingDimension(layout, problem.trans_a, problem.m, problem.k);
  ldb_ = MinLeadingDimension(layout, problem.trans_b, problem.k, problem.n);
  ldc_ = MinLeadingDimension(layout, Trans::kNo, problem.m, problem.n);
  a_elements_ = StoredElements(layout, problem.trans_a, problem.m, problem.k, lda_);
  b_elements_ = StoredElements(layout, problem.trans_b, problem.k, problem.n, ldb_);
  c_elements_ = StoredElements(layout, Trans::kNo, problem.m, problem.n, ldc_);
  const int team = std::clamp(problem.threads, 1, pool.size());
  sets_.resize(static_cast<std::size_t>(std::max(1, copies)));
  std::uint64_t stream = seed;
  for (OperandSet& set : sets_) {
    set.a = AlignedArray<T>(static_cast<std::size_t>(a_elements_));
    set.b = AlignedArray<T>(static_cast<std::size_t>(b_elements_));
    set.c = AlignedArray<T>(static_cast<std::size_t>(c_elements_ + 2 * kCanaryElements));
    FirstTouchRandom(set.a.data(), a_elements_, ++stream, pool, team);
    FirstTouchRandom(set.b.data(), b_elements_, ++stream, pool, team);
    FirstTouchRandom(set.c.data() + kCanaryElements, c_elements_, ++stream, pool, team);
    std::fill_n(set.c.data(), kCanaryElements, kCanary<T>);
    std::fill_n(set.c.data() + kCanaryElements + c_elements_, kCanaryElements, kCanary<T>);
  }
  // Every copy holds the same operands, so any copy verifies like the first.
  for (std::size_t i = 1; i < sets_.size(); ++i) {
    std::memcpy(sets_[i].a.data(), sets_[0].a.data(), sizeof(T) * a_elements_);
    std::memcpy(sets_[i].b.data(), sets_[0].b.data(), sizeof(T) * b_elements_);
  }
  c_initial_ = AlignedArray<T>(static_cast<std::size_t>(c_elements_));
  FirstTouchRandom(c_initial_.data(), c_elements_, ++stream, pool, team);
}

template <typename T>
void ProblemBuffers<T>::ResetC(int copy) {
  std::memcpy(c(copy), c_initial_.data(), sizeof(T) * static_cast<std::size_t>(c_elements_));
}

template <typename T>
void ProblemBuffers<T>::PoisonC(int copy) {
  std::fill_n(c(copy), c_elements_, std::numeric_limits<T>::quiet_NaN());
}

template <typename T>
bool ProblemBuffers<T>::CanariesIntact(int copy) const {
  const T* storage = sets_[static_cast<std::size_t>(copy)].c.data();
  const T* after = storage + kCanaryElements + c_elements_;
  for (std::int64_t i = 0; i < kCanaryElements; ++i) {
    if (storage[i] != kCanary<T> || after[i] != kCanary<T>) return false;
  }
  return true;
}

template <typename T>
GemmArgs<T> ProblemBuffers<T>::Args(int copy, T alpha, T beta) {
  GemmArgs<T> args;
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

int ColdCacheCopies(const Problem& problem, std::uint64_t llc_bytes,
                    std::uint64_t memory_limit_bytes) {
  const double footprint =
      static_cast<double>(DTypeSize(problem.dtype)) *
      static_cast<double>(problem.m * problem.k + problem.k * problem.n + problem.m * problem.n);
  const double wanted = std::ceil(2.0 * static_cast<double>(llc_bytes) / std::max(1.0, footprint));
  const double affordable = static_cast<double>(memory_limit_bytes) / std::max(1.0, footprint);
  return static_cast<int>(std::clamp(std::min(wanted + 1.0, affordable), 2.0, 4096.0));
}

template class AlignedArray<float>;
template class AlignedArray<double>;
template class ProblemBuffers<float>;
template class ProblemBuffers<double>;

}  // namespace mmtune
