// The measurement side of tuning: the result checker (full and sampled + projections), the
// candidate runner (verify, time, fail, skip), shape sets and shards, the roofline, and a whole
// tune on an in-memory DB including resume.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "kernels/default_config.h"
#include "kernels/gemm_args.h"
#include "kernels/lowp_reference.h"
#include "kernels/reference_gemm.h"
#include "machine/roofline.h"
#include "search/space.h"
#include "tests/synthetic_machine.h"
#include "tuner/candidate_cost.h"
#include "tuner/candidate_runner.h"
#include "tuner/problem_buffers.h"
#include "tuner/result_checker.h"
#include "tuner/s8_result_checker.h"
#include "tuner/sample_stats.h"
#include "tuner/shape_sets.h"
#include "tuner/shard_cost.h"
#include "tuner/tune_session.h"

namespace mmtune {
namespace {

Machine Host() {
  auto host = DetectHostMachine();
  EXPECT_TRUE(host.ok());
  return *host;
}

Problem MakeProblem(DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
                    Layout layout = Layout::kRowMajor, Trans ta = Trans::kNo,
                    Trans tb = Trans::kNo) {
  return Problem{dtype, layout, ta, tb, m, n, k, 1};
}

// Computes the right answer with the reference into `c` (of the buffers' copy 0).
template <typename T>
void ReferenceInto(const Problem& p, ProblemBuffers<T>& buffers, T alpha, T beta) {
  if (beta == T(0)) {
    buffers.PoisonC(0);
  } else {
    buffers.ResetC(0);
  }
  ASSERT_TRUE(ReferenceGemm<T>(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha,
                               buffers.a(0), buffers.lda(), buffers.b(0), buffers.ldb(), beta,
                               buffers.c(0), buffers.ldc())
                  .ok());
}

TEST(SampleStatsTest, MedianMinAndMad) {
  const SampleStats stats = Summarize({5.0, 1.0, 3.0, 100.0, 2.0});
  EXPECT_EQ(stats.count, 5);
  EXPECT_DOUBLE_EQ(stats.median, 3.0);
  EXPECT_DOUBLE_EQ(stats.min, 1.0);
  EXPECT_DOUBLE_EQ(stats.mad, 2.0);  // deviations 2, 2, 0, 97, 1 -> median 2
  EXPECT_DOUBLE_EQ(Summarize({1.0, 2.0, 3.0, 4.0}).median, 2.5);
  EXPECT_EQ(Summarize({}).count, 0);
}

// The checker accepts the reference answer and rejects a single wrong element, NaN, and a
// missing beta term: in full mode (small) and in sampled + projection mode (large), for every
// layout and transpose.
template <typename T>
void CheckerCatchesOneWrongElement(const Problem& p, bool expect_full) {
  ProblemBuffers<T> buffers(p, 1, 7, DefaultThreadPool());
  ResultChecker<T> checker(p, buffers.a(0), buffers.lda(), buffers.b(0), buffers.ldb(),
                           buffers.c_initial(), buffers.ldc(), 7);
  EXPECT_EQ(checker.full(), expect_full);
  for (const auto& [alpha, beta] : {std::pair<T, T>{1, 0}, std::pair<T, T>{-1.5, 0.5}}) {
    ReferenceInto(p, buffers, alpha, beta);
    ASSERT_TRUE(checker.Check(alpha, beta, buffers.c(0)).ok()) << p.ToString();
    // Corrupt elements that are unlikely to be in the sampled rows and columns.
    for (const auto& [i, j] : {std::pair<std::int64_t, std::int64_t>{p.m / 3, p.n / 3 + 1},
                              {p.m - 3, 7}, {p.m / 2 + 5, p.n - 4}}) {
      T& element = buffers.c(0)[StoredOffset(p.layout, i, j, buffers.ldc())];
      const T saved = element;
      // Full checks see a 1% error; the projections of sampled checks see errors above their
      // summed rounding bound (docs/tuning.md), e.g. an element that lost its value.
      element = saved + (expect_full ? T(0.01) : T(10)) * (std::abs(saved) + T(1));
      const Status wrong = checker.Check(alpha, beta, buffers.c(0));
      ASSERT_FALSE(wrong.ok()) << p.ToString() << " wrong C(" << i << ", " << j << ") passed";
      // A wrong kernel is a failed candidate, never mistaken for a caller's bad argument.
      EXPECT_EQ(wrong.error().code, ErrorCode::kWrongResult) << wrong.error().message;
      element = std::numeric_limits<T>::quiet_NaN();
      EXPECT_FALSE(checker.Check(alpha, beta, buffers.c(0)).ok()) << "NaN passed";
      element = saved;
    }
  }
  // The answer for a different beta is wrong.
  ReferenceInto(p, buffers, T(-1.5), T(0.5));
  EXPECT_FALSE(checker.Check(T(-1.5), T(0), buffers.c(0)).ok());
}

TEST(ResultCheckerTest, FullCheckOnSmallProblems) {
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        CheckerCatchesOneWrongElement<float>(MakeProblem(DType::kF32, 37, 29, 53, layout, ta, tb),
                                             true);
        CheckerCatchesOneWrongElement<double>(
            MakeProblem(DType::kF64, 23, 41, 17, layout, ta, tb), true);
      }
    }
  }
}

TEST(ResultCheckerTest, SampledCheckOnLargeProblems) {
  // 2^26 multiply-adds is the full-check limit: these are above it.
  CheckerCatchesOneWrongElement<float>(MakeProblem(DType::kF32, 311, 257, 1031), false);
  CheckerCatchesOneWrongElement<double>(
      MakeProblem(DType::kF64, 257, 311, 1031, Layout::kColMajor, Trans::kYes, Trans::kNo),
      false);
}

// The bf16 checker (f32 bounds on exact bf16 products) accepts the reference answer and rejects
// a 1% error in one element, NaN, and the answer for another beta; in full and sampled mode.
void Bf16CheckerCatchesOneWrongElement(const Problem& p, bool expect_full) {
  ProblemBuffers<BFloat16, BFloat16, float> buffers(p, 1, 5, DefaultThreadPool());
  ResultChecker<float, BFloat16> checker(p, buffers.a(0), buffers.lda(), buffers.b(0),
                                         buffers.ldb(), buffers.c_initial(), buffers.ldc(), 5);
  EXPECT_EQ(checker.full(), expect_full);
  auto reference = [&](float alpha, float beta) {
    beta == 0.0f ? buffers.PoisonC(0) : buffers.ResetC(0);
    ASSERT_TRUE(
        ReferenceLowpGemm<Bf16Gemm>(buffers.ArgsFor<GemmArgs<Bf16Gemm>>(0, alpha, beta)).ok());
  };
  for (const auto& [alpha, beta] : {std::pair<float, float>{1, 0}, {-1.5f, 0.5f}}) {
    reference(alpha, beta);
    ASSERT_TRUE(checker.Check(alpha, beta, buffers.c(0)).ok()) << p.ToString();
    float& element = buffers.c(0)[StoredOffset(p.layout, p.m / 2 + 3, p.n - 4, buffers.ldc())];
    const float saved = element;
    element = saved + (expect_full ? 0.01f : 10.0f) * (std::abs(saved) + 1.0f);
    EXPECT_FALSE(checker.Check(alpha, beta, buffers.c(0)).ok()) << p.ToString();
    element = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(checker.Check(alpha, beta, buffers.c(0)).ok()) << "NaN passed";
    element = saved;
  }
  reference(-1.5f, 0.5f);
  EXPECT_FALSE(checker.Check(-1.5f, 0.0f, buffers.c(0)).ok());
}

TEST(ResultCheckerTest, Bf16FullAndSampled) {
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        Bf16CheckerCatchesOneWrongElement(MakeProblem(DType::kBF16, 37, 29, 53, layout, ta, tb),
                                          true);
      }
    }
  }
  Bf16CheckerCatchesOneWrongElement(
      MakeProblem(DType::kBF16, 311, 257, 1031, Layout::kColMajor, Trans::kNo, Trans::kYes),
      false);
}

// The s8 checker is exact: the reference answer (which wraps modulo 2^32 for these random
// operands and C) passes, and an error of one unit, or of 2^31, in any single element fails, in
// full mode and in sampled mode (where the element is outside the sampled rows and columns and
// only the odd-weighted projections can see it).
void S8CheckerIsExact(const Problem& p, bool expect_full) {
  ProblemBuffers<std::uint8_t, std::int8_t, std::int32_t> buffers(p, 1, 9, DefaultThreadPool());
  S8ResultChecker checker(p, buffers.a(0), buffers.lda(), buffers.b(0), buffers.ldb(),
                          buffers.c_initial(), buffers.ldc(), 9);
  EXPECT_EQ(checker.full(), expect_full);
  auto reference = [&](std::int32_t alpha, std::int32_t beta) {
    beta == 0 ? buffers.PoisonC(0) : buffers.ResetC(0);
    ASSERT_TRUE(ReferenceLowpGemm<S8Gemm>(buffers.ArgsFor<GemmArgs<S8Gemm>>(0, alpha, beta)).ok());
  };
  for (const auto& [alpha, beta] : {std::pair<std::int32_t, std::int32_t>{1, 0}, {-3, 2}}) {
    reference(alpha, beta);
    ASSERT_TRUE(checker.Check(alpha, beta, buffers.c(0)).ok()) << p.ToString();
    for (const auto& [i, j] : {std::pair<std::int64_t, std::int64_t>{p.m / 3, p.n / 3 + 1},
                              {p.m - 3, 7}, {p.m / 2 + 5, p.n - 4}}) {
      std::int32_t& element = buffers.c(0)[StoredOffset(p.layout, i, j, buffers.ldc())];
      const std::int32_t saved = element;
      for (std::uint32_t delta : {1u, 0x80000000u}) {
        element = static_cast<std::int32_t>(static_cast<std::uint32_t>(saved) + delta);
        EXPECT_FALSE(checker.Check(alpha, beta, buffers.c(0)).ok())
            << p.ToString() << " C(" << i << ", " << j << ") off by " << delta << " passed";
      }
      element = saved;
    }
  }
  reference(-3, 2);
  EXPECT_FALSE(checker.Check(-3, 0, buffers.c(0)).ok());
}

TEST(ResultCheckerTest, S8IsExactInFullAndSampledMode) {
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        S8CheckerIsExact(MakeProblem(DType::kS8, 37, 29, 53, layout, ta, tb), true);
      }
    }
  }
  S8CheckerIsExact(MakeProblem(DType::kS8, 257, 311, 1031, Layout::kRowMajor, Trans::kYes,
                               Trans::kNo),
                   false);
}

TEST(ProblemBuffersTest, LowPrecisionOperandsAreRandomOverTheirRange) {
  const Problem p = MakeProblem(DType::kS8, 64, 64, 64);
  ProblemBuffers<std::uint8_t, std::int8_t, std::int32_t> buffers(p, 2, 1, DefaultThreadPool());
  std::set<int> a_values, b_values;
  for (std::int64_t i = 0; i < 64 * 64; ++i) {
    a_values.insert(buffers.a(0)[i]);
    b_values.insert(buffers.b(1)[i]);
  }
  EXPECT_GT(a_values.size(), 200u);  // of 256
  EXPECT_GT(b_values.size(), 200u);
  EXPECT_LT(*b_values.begin(), -100);
  EXPECT_TRUE(buffers.CanariesIntact(0));
  buffers.c(0)[-1] = 0;
  EXPECT_FALSE(buffers.CanariesIntact(0));

  ProblemBuffers<BFloat16, BFloat16, float> bf16(MakeProblem(DType::kBF16, 16, 16, 16), 1, 1,
                                                 DefaultThreadPool());
  int zeros = 0;
  for (std::int64_t i = 0; i < 16 * 16; ++i) {
    const float value = ToFloat(bf16.a(0)[i]);
    zeros += value == 0.0f;
    EXPECT_TRUE(value >= -1.0f && value <= 1.0f) << value;
  }
  EXPECT_LT(zeros, 2);
  bf16.PoisonC(0);
  EXPECT_TRUE(std::isnan(bf16.c(0)[0]));
}

TEST(ProblemBuffersTest, RandomNonZeroOperandsAndCanaries) {
  const Problem p = MakeProblem(DType::kF32, 33, 17, 9);
  ProblemBuffers<float> buffers(p, 3, 1, DefaultThreadPool());
  EXPECT_EQ(buffers.copies(), 3);
  int zeros = 0;
  for (std::int64_t i = 0; i < 33 * 9; ++i) zeros += buffers.a(0)[i] == 0.0f;
  EXPECT_LT(zeros, 3);
  EXPECT_EQ(std::vector<float>(buffers.a(0), buffers.a(0) + 33 * 9),
            std::vector<float>(buffers.a(2), buffers.a(2) + 33 * 9));
  EXPECT_TRUE(buffers.CanariesIntact(1));
  buffers.c(1)[buffers.c_elements()] = 0.0f;  // one past the end
  EXPECT_FALSE(buffers.CanariesIntact(1));
  buffers.c(2)[-1] = 0.0f;  // one before the start
  EXPECT_FALSE(buffers.CanariesIntact(2));
  EXPECT_TRUE(buffers.CanariesIntact(0));
  // Every operand of a copy is the same distance past a page, as applications' large buffers
  // share their offset from one (C's rows then fall in the same cache sets relative to B's as
  // they would there): even copies on the page, odd ones 16 bytes in, where glibc's malloc puts
  // large blocks.
  for (int copy = 0; copy < 3; ++copy) {
    const std::uintptr_t past = copy % 2 == 1 ? 16u : 0u;
    EXPECT_EQ(ProblemBuffers<float>::PlacementBytes(copy), static_cast<std::int64_t>(past));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffers.a(copy)) % 4096, past) << copy;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffers.b(copy)) % 4096, past) << copy;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffers.c(copy)) % 4096, past) << copy;
  }
  EXPECT_EQ(std::vector<float>(buffers.b(0), buffers.b(0) + 9 * 17),
            std::vector<float>(buffers.b(1), buffers.b(1) + 9 * 17));
  // Every element type keeps its alignment 16 bytes in.
  ProblemBuffers<std::uint8_t, std::int8_t, std::int32_t> s8(MakeProblem(DType::kS8, 5, 7, 9), 2,
                                                             1, DefaultThreadPool());
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s8.c(1)) % 4096, 16u);
  EXPECT_TRUE(s8.CanariesIntact(1));
}

TEST(ProblemBuffersTest, ColdCacheCopiesExceedTwiceTheLastLevelCache) {
  const Problem p = MakeProblem(DType::kF32, 256, 256, 256);  // 768 KiB of operands
  const int copies = ColdCacheCopies(p, 32 << 20, 4ull << 30);
  EXPECT_GT(copies * 768.0 * 1024, 2.0 * (32 << 20));
  EXPECT_EQ(ColdCacheCopies(p, 32 << 20, 1 << 20), 2);  // memory limit wins, but at least 2
}

TEST(CandidateRunnerTest, VerifiesTimesFailsAndSkips) {
  const Machine machine = Host();
  const Problem p = MakeProblem(DType::kF32, 61, 47, 33);
  MeasureOptions options;
  options.min_sample_seconds = 0.0002;
  auto runner = CandidateRunner::Create(p, machine, options, DefaultThreadPool());
  ASSERT_TRUE(runner.ok()) << runner.error().message;
  const KernelConfig good = ModelConfig(p, machine);
  EXPECT_TRUE((*runner)->Verify(good).ok());
  KernelConfig bad = good;
  bad.mr = 1000;  // no such kernel
  EXPECT_FALSE((*runner)->Verify(bad).ok());

  auto results = (*runner)->Measure({good, bad}, 0.0, TimingMode::kWhole);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].status, MeasurementStatus::kOk);
  EXPECT_GE(results[0].stats.count, options.min_samples);
  EXPECT_LE(results[0].stats.count, options.max_samples);
  EXPECT_GT(results[0].gflops, 0.0);
  EXPECT_NEAR(results[0].gflops, p.Flops() / results[0].stats.median * 1e-9, 1e-6);
  EXPECT_EQ(results[1].status, MeasurementStatus::kFailed);
  EXPECT_NE(results[1].error.find("1000"), std::string::npos) << results[1].error;
  EXPECT_EQ(results[1].gflops, 0.0);

  // A best time far below anything reachable: after round one everything is skipped.
  auto skipped = (*runner)->Measure({good}, 1e-12, TimingMode::kSearch);
  EXPECT_EQ(skipped[0].status, MeasurementStatus::kSkipped);
  EXPECT_EQ(skipped[0].stats.count, 1);
}

// Samples of 0.2 ms, the confirmation's too: tests time many rounds.
MeasureOptions ShortSamples() {
  MeasureOptions options;
  options.min_sample_seconds = 0.0002;
  options.confirm_min_sample_seconds = 0.0002;
  return options;
}

// The confirmation never skips and takes its own, larger number of samples.
TEST(CandidateRunnerTest, ConfirmationTakesMoreSamplesAndNeverSkips) {
  const Machine machine = Host();
  const Problem p = MakeProblem(DType::kF32, 61, 47, 33);
  MeasureOptions options = ShortSamples();
  options.confirm_min_samples = options.max_samples + 2;  // more than any other batch may take
  options.confirm_max_samples = options.max_samples + 4;
  auto runner = CandidateRunner::Create(p, machine, options, DefaultThreadPool());
  ASSERT_TRUE(runner.ok()) << runner.error().message;
  const KernelConfig good = ModelConfig(p, machine);
  auto confirmed = (*runner)->Measure({good}, 1e-12, TimingMode::kConfirm);
  ASSERT_EQ(confirmed.size(), 1u);
  EXPECT_EQ(confirmed[0].status, MeasurementStatus::kOk);
  EXPECT_GE(confirmed[0].stats.count, options.confirm_min_samples);
  EXPECT_LE(confirmed[0].stats.count, options.confirm_max_samples);
  auto whole = (*runner)->Measure({good}, 1e-12, TimingMode::kWhole);
  EXPECT_EQ(whole[0].status, MeasurementStatus::kOk);
  EXPECT_LE(whole[0].stats.count, options.max_samples);
}

// Past its minimum samples the confirmation stops at its time limit, where samples that never
// settle would otherwise take it to its maximum.
TEST(CandidateRunnerTest, ConfirmationStopsAtItsTimeLimitOnceItHasItsMinimum) {
  const Machine machine = Host();
  const Problem p = MakeProblem(DType::kF32, 61, 47, 33);
  MeasureOptions options = ShortSamples();
  options.target_spread = -1.0;  // no spread is ever small enough
  options.confirm_min_samples = 5;
  options.confirm_max_samples = 11;
  KernelConfig other = ModelConfig(p, machine);
  other.k_unroll = other.k_unroll == 1 ? 4 : 1;
  const std::vector<KernelConfig> finalists = {ModelConfig(p, machine), other};
  // Each finalist's samples, timed in `mode` by a runner whose confirmation stops after
  // `confirm_max_seconds`.
  auto sample_counts = [&](double confirm_max_seconds, TimingMode mode) {
    options.confirm_max_seconds = confirm_max_seconds;
    std::vector<int> counts;
    auto runner = CandidateRunner::Create(p, machine, options, DefaultThreadPool());
    EXPECT_TRUE(runner.ok()) << runner.error().message;
    if (!runner.ok()) return counts;
    for (const CandidateMeasurement& m : (*runner)->Measure(finalists, 0.0, mode)) {
      EXPECT_EQ(m.status, MeasurementStatus::kOk) << m.error;
      counts.push_back(m.stats.count);
    }
    return counts;
  };
  EXPECT_EQ(sample_counts(0.0, TimingMode::kConfirm),
            std::vector<int>(2, options.confirm_max_samples));
  EXPECT_EQ(sample_counts(1e-9, TimingMode::kConfirm),
            std::vector<int>(2, options.confirm_min_samples));
  // The other batches have no time limit: they stop at their own maximum.
  EXPECT_EQ(sample_counts(1e-9, TimingMode::kWhole), std::vector<int>(2, options.max_samples));
}

// A config verified once is not verified again when it comes back (the confirmation's finalists);
// one that failed is tried again, and fails again.
TEST(CandidateRunnerTest, VerifiesEachConfigOnce) {
  const Machine machine = Host();
  const Problem p = MakeProblem(DType::kF32, 61, 47, 33);
  auto runner = CandidateRunner::Create(p, machine, ShortSamples(), DefaultThreadPool());
  ASSERT_TRUE(runner.ok()) << runner.error().message;
  const KernelConfig good = ModelConfig(p, machine);
  KernelConfig other = good;
  other.k_unroll = other.k_unroll == 1 ? 4 : 1;
  KernelConfig bad = good;
  bad.mr = 1000;  // no such kernel
  EXPECT_EQ((*runner)->verified_configs(), 0);
  auto first = (*runner)->Measure({good, bad}, 0.0, TimingMode::kSearch);
  EXPECT_EQ(first[0].status, MeasurementStatus::kOk) << first[0].error;
  EXPECT_EQ((*runner)->verified_configs(), 1);
  auto confirmed = (*runner)->Measure({other, good, bad}, 0.0, TimingMode::kConfirm);
  EXPECT_EQ(confirmed[0].status, MeasurementStatus::kOk) << confirmed[0].error;
  EXPECT_EQ(confirmed[1].status, MeasurementStatus::kOk) << confirmed[1].error;
  EXPECT_EQ(confirmed[2].status, MeasurementStatus::kFailed);
  EXPECT_EQ((*runner)->verified_configs(), 2);
}

TEST(CandidateCostTest, CandidatesThatStartWithinTheTimeLeft) {
  CandidateCost cost;
  EXPECT_EQ(cost.FitIn(0.5), std::numeric_limits<std::size_t>::max());  // nothing known yet
  cost.Add(2.0);
  cost.Add(4.0);  // 3 s a candidate
  EXPECT_EQ(cost.FitIn(0.5), 1u);
  EXPECT_EQ(cost.FitIn(6.0), 2u);
  EXPECT_EQ(cost.FitIn(7.0), 3u);
  EXPECT_EQ(cost.FitIn(-1.0), 1u);
  EXPECT_EQ(cost.FitIn(1e300), std::numeric_limits<std::size_t>::max());
}

TEST(CandidateRunnerTest, PublishesEveryResultOnceAsSoonAsItIsFinal) {
  const Machine machine = Host();
  const Problem p = MakeProblem(DType::kF32, 37, 29, 23);
  MeasureOptions options;
  options.min_sample_seconds = 0.0002;
  auto runner = CandidateRunner::Create(p, machine, options, DefaultThreadPool());
  ASSERT_TRUE(runner.ok()) << runner.error().message;
  const KernelConfig good = ModelConfig(p, machine);
  KernelConfig bad = good;
  bad.nr = 999;  // no such kernel
  KernelConfig other = good;
  other.k_unroll = good.k_unroll == 1 ? 4 : 1;  // every registered tile has ku1 and ku4

  std::vector<std::size_t> order;
  std::vector<CandidateMeasurement> seen(3);
  auto sink = [&](std::size_t index, const CandidateMeasurement& measured) {
    order.push_back(index);
    seen.at(index) = measured;
  };
  auto results = (*runner)->Measure({good, bad, other}, 0.0, TimingMode::kWhole, sink);
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(std::set<std::size_t>(order.begin(), order.end()).size(), 3u);
  EXPECT_EQ(order.front(), 1u) << "a failed verification is final before any timing starts";
  for (std::size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(seen[i].config, results[i].config);
    EXPECT_EQ(seen[i].status, results[i].status);
    EXPECT_EQ(seen[i].stats.count, results[i].stats.count);
    EXPECT_DOUBLE_EQ(seen[i].gflops, results[i].gflops);
  }
  EXPECT_EQ(seen[1].status, MeasurementStatus::kFailed);
  EXPECT_EQ(seen[0].status, MeasurementStatus::kOk);
  EXPECT_GT(seen[0].gflops, 0.0);

  // Skipped candidates are final after round one, with their single sample.
  order.clear();
  auto skipped = (*runner)->Measure({good, other}, 1e-12, TimingMode::kSearch, sink);
  ASSERT_EQ(order.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(seen[i].status, MeasurementStatus::kSkipped);
    EXPECT_EQ(seen[i].stats.count, 1);
    EXPECT_GT(seen[i].gflops, 0.0);
  }
}

// bf16 and s8 candidates are verified and timed like f32 ones; an infeasible config (kc not a
// whole number of k groups) fails verification with its reason and is never timed.
TEST(CandidateRunnerTest, LowPrecisionCandidatesAreVerifiedAndTimed) {
  const Machine machine = Host();
  for (DType dtype : {DType::kBF16, DType::kS8}) {
    for (const Problem& p : {MakeProblem(dtype, 45, 37, 70, Layout::kColMajor, Trans::kYes),
                             MakeProblem(dtype, 300, 260, 1100)}) {
      SCOPED_TRACE(p.ToString());
      MeasureOptions options;
      options.min_sample_seconds = 0.0002;
      auto runner = CandidateRunner::Create(p, machine, options, DefaultThreadPool());
      ASSERT_TRUE(runner.ok()) << runner.error().message;
      const KernelConfig good = ModelConfig(p, machine);
      const Status verified = (*runner)->Verify(good);
      EXPECT_TRUE(verified.ok()) << verified.error().message;
      KernelConfig bad = good;
      bad.kc = 15;
      auto results = (*runner)->Measure({good, bad}, 0.0, TimingMode::kWhole);
      ASSERT_EQ(results.size(), 2u);
      EXPECT_EQ(results[0].status, MeasurementStatus::kOk);
      EXPECT_GT(results[0].gflops, 0.0);
      EXPECT_EQ(results[1].status, MeasurementStatus::kFailed);
      EXPECT_NE(results[1].error.find("k group"), std::string::npos) << results[1].error;
      EXPECT_EQ(results[1].stats.count, 0);
    }
  }
}

// Every config of `configs` passes verification on `runner` and is timed.
void ExpectVerifiedAndTimed(CandidateRunner& runner, const std::vector<KernelConfig>& configs) {
  for (const KernelConfig& config : configs) {
    const Status verified = runner.Verify(config);
    EXPECT_TRUE(verified.ok()) << config.ToString() << ": " << verified.error().message;
  }
  auto results = runner.Measure(configs, 0.0, TimingMode::kWhole);
  ASSERT_EQ(results.size(), configs.size());
  for (const CandidateMeasurement& result : results) {
    EXPECT_EQ(result.status, MeasurementStatus::kOk) << result.config.ToString();
    EXPECT_GT(result.gflops, 0.0);
  }
}

// A problem called with B packed beforehand: its packed candidates run on B packed once per
// candidate, verified like any other (a config whose panels did not match its plan would fail
// here), in every dtype; the default is the packed weights' (panels for one row, not gemv).
TEST(CandidateRunnerTest, PackedBCandidatesAreVerifiedAndTimedOnPanels) {
  const Machine machine = Host();
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kS8}) {
    for (Problem p : {MakeProblem(dtype, 1, 300, 70), MakeProblem(dtype, 45, 37, 70),
                      MakeProblem(dtype, 130, 70, 90, Layout::kColMajor, Trans::kYes)}) {
      p.form = CallForm::kPackedB;
      SCOPED_TRACE(p.ToString());
      MeasureOptions options;
      options.min_sample_seconds = 0.0002;
      auto runner = CandidateRunner::Create(p, machine, options, DefaultThreadPool());
      ASSERT_TRUE(runner.ok()) << runner.error().message;
      const KernelConfig weights = ModelConfig(p, machine);
      EXPECT_EQ(weights, PackedWeightsConfig(p, machine));
      Problem plain = p;
      plain.form = CallForm::kPlain;
      KernelConfig packed = ColdOperandsConfig(plain, machine);
      if (packed.family != KernelFamily::kPacked) packed = weights;
      std::vector<KernelConfig> configs = {weights, packed, ModelConfig(plain, machine)};
      ExpectVerifiedAndTimed(**runner, configs);
    }
  }
}

// A batch (`tune --batch`): each candidate runs every item on operands of its own, the
// items checked one by one, and its time is the whole batch's. The default is the runtime's
// untuned batch config; the alternative the other item config a team may run alone.
TEST(CandidateRunnerTest, BatchCandidatesRunEveryItem) {
  const Machine machine = Host();
  const int threads = std::min(2, DefaultThreadPool().size());
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kS8}) {
    for (Problem p : {MakeProblem(dtype, 24, 40, 36), MakeProblem(dtype, 7, 33, 20,
                                                                  Layout::kColMajor, Trans::kYes)}) {
      p.batch = 5;
      p.threads = threads;
      SCOPED_TRACE(p.ToString());
      MeasureOptions options;
      options.min_sample_seconds = 0.0002;
      auto runner = CandidateRunner::Create(p, machine, options, DefaultThreadPool());
      ASSERT_TRUE(runner.ok()) << runner.error().message;
      const KernelConfig batch_default = ModelConfig(p, machine);
      EXPECT_EQ(batch_default, BatchDefault(p, machine));
      EXPECT_EQ(batch_default.threads, threads);  // the team; each member runs items alone
      std::vector<KernelConfig> configs = {batch_default};
      for (const KernelConfig& other : AnalyticalAlternatives(p, machine)) {
        EXPECT_NE(other, batch_default);
        configs.push_back(other);
      }
      ExpectVerifiedAndTimed(**runner, configs);
    }
  }
}

// The time of a batch candidate is the whole batch's: 32 items take far longer than one.
TEST(CandidateRunnerTest, BatchTimeCoversEveryItem) {
  const Machine machine = Host();
  Problem one = MakeProblem(DType::kF32, 64, 64, 64);
  Problem batch = one;
  batch.batch = 32;
  KernelConfig config = ModelConfig(one, machine);
  config.threads = 1;
  MeasureOptions options;
  options.min_sample_seconds = 0.0005;
  double seconds[2] = {0.0, 0.0};
  for (int i = 0; i < 2; ++i) {
    auto runner = CandidateRunner::Create(i == 0 ? one : batch, machine, options,
                                          DefaultThreadPool());
    ASSERT_TRUE(runner.ok()) << runner.error().message;
    auto results = (*runner)->Measure({config}, 0.0, TimingMode::kWhole);
    ASSERT_EQ(results.size(), 1u);
    ASSERT_EQ(results[0].status, MeasurementStatus::kOk) << results[0].error;
    seconds[i] = results[0].stats.median;
  }
  EXPECT_GT(seconds[1], 8.0 * seconds[0]) << seconds[0] << " s for one, " << seconds[1]
                                          << " s for 32";
}

// A batch's space: one item's configs on one thread, each run alone by a team of the batch's
// threads.
TEST(SpaceTest, BatchConfigsAreOneItemsForATeam) {
  const Machine machine = testing::SyntheticZen5Machine();
  Problem item = MakeProblem(DType::kF32, 128, 128, 64);
  Problem batch = item;
  batch.threads = 2;
  batch.batch = 64;
  const std::vector<KernelConfig> alone = GenerateSpace(item, machine, {});
  const std::vector<KernelConfig> space = GenerateSpace(batch, machine, {});
  ASSERT_EQ(space.size(), alone.size());
  for (std::size_t i = 0; i < space.size(); ++i) {
    KernelConfig expected = alone[i];
    expected.threads = 2;
    EXPECT_EQ(space[i], expected);
  }
}

TEST(CandidateRunnerTest, RejectsInvalidProblems) {
  Problem p = MakeProblem(DType::kF32, -1, 4, 4);
  EXPECT_FALSE(CandidateRunner::Create(p, Host(), {}, DefaultThreadPool()).ok());
}

TEST(ShapeSetsTest, PresetsListsAndErrors) {
  for (const char* name :
       {"quick", "square", "small", "bert-base", "llama-7b", "llama-7b-prefill", "decode"}) {
    auto shapes = PresetShapes(name);
    ASSERT_TRUE(shapes.ok()) << name;
    EXPECT_FALSE(shapes->empty());
  }
  auto unknown = PresetShapes("gpt-5");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("llama-7b"), std::string::npos);

  auto list = ParseShapeList("1x2x3, 4X5X6");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(*list, (std::vector<Shape>{{1, 2, 3}, {4, 5, 6}}));
  for (const char* bad : {"12x", "-1x2x3", "axbxc", "1x2x99999999999999999999", "1x2x3,", "",
                          "0x2x3", "4..1x2x3"}) {
    EXPECT_FALSE(ParseShapeList(bad).ok()) << bad;
  }

  // Ranges: kept as ranges for tune, expanded to their pow2 buckets for commands that time shapes.
  auto prefill = PresetRanges("llama-7b-prefill");
  ASSERT_TRUE(prefill.ok());
  ASSERT_EQ(prefill->size(), 3u);
  for (const ShapeRange& range : *prefill) EXPECT_EQ(range.m, (DimRange{1, 2048}));
  EXPECT_EQ(PresetShapes("llama-7b-prefill")->size(), 3u * 12u);
  auto ranged = ParseShapeRangeList("1..4x8x8,16x16x16");
  ASSERT_TRUE(ranged.ok());
  ASSERT_EQ(ranged->size(), 2u);
  EXPECT_EQ((*ranged)[0].ToString(), "1..4x8x8");
  EXPECT_EQ(*ParseShapeList("1..4x8x8,16x16x16"),
            (std::vector<Shape>{{1, 8, 8}, {2, 8, 8}, {4, 8, 8}, {16, 16, 16}}));
  auto stepped = ExpandRanges(*ranged, BucketPolicy{BucketPolicy::Kind::kStep, 3});
  ASSERT_TRUE(stepped.ok());
  EXPECT_EQ(*stepped, (std::vector<Shape>{{1, 8, 8}, {3, 8, 8}, {4, 8, 8}, {16, 16, 16}}));
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ShapeSetsTest, CsvAndJsonFiles) {
  auto csv = ReadShapesFile(WriteTemp("shapes.csv", "m,n,k\n# decode\n1,4096,4096\n\n8x8x8\n"));
  ASSERT_TRUE(csv.ok()) << csv.error().message;
  EXPECT_EQ(*csv, (std::vector<Shape>{{1, 4096, 4096}, {8, 8, 8}}));
  auto csv_ranges = ReadShapeRangesFile(WriteTemp("ranges.csv", "1..2048,4096,4096\n8x8x4..8\n"));
  ASSERT_TRUE(csv_ranges.ok()) << csv_ranges.error().message;
  ASSERT_EQ(csv_ranges->size(), 2u);
  EXPECT_EQ((*csv_ranges)[0].ToString(), "1..2048x4096x4096");
  EXPECT_EQ((*csv_ranges)[1].ToString(), "8x8x4..8");
  auto json = ReadShapesFile(
      WriteTemp("shapes.json", R"({"shapes": ["2x3x4", {"m": 5, "n": 6, "k": 7}]})"));
  ASSERT_TRUE(json.ok()) << json.error().message;
  EXPECT_EQ(*json, (std::vector<Shape>{{2, 3, 4}, {5, 6, 7}}));

  auto bad_line = ReadShapesFile(WriteTemp("bad.csv", "1,2,3\n4,5\n"));
  ASSERT_FALSE(bad_line.ok());
  EXPECT_NE(bad_line.error().message.find(":2:"), std::string::npos) << bad_line.error().message;
  EXPECT_FALSE(ReadShapesFile(WriteTemp("bad.json", "[\"1x2x3\", {\"m\": 1}]")).ok());
  EXPECT_FALSE(ReadShapesFile(WriteTemp("broken.json", "[\"1x2x3\"")).ok());
  EXPECT_FALSE(ReadShapesFile(WriteTemp("empty.csv", "# nothing\n")).ok());
  auto missing = ReadShapesFile(::testing::TempDir() + "/no/such/file.csv");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);
}

TEST(ShapeSetsTest, ShardsAreDisjointAndCoverEverything) {
  const auto unit = [](const Shape&) { return 1.0; };
  std::vector<Shape> shapes;
  for (int i = 1; i <= 10; ++i) shapes.push_back({i, i, i});
  shapes.push_back({3, 3, 3});  // a repeat goes to exactly one shard
  std::multiset<std::int64_t> seen;
  for (int index = 0; index < 3; ++index) {
    for (const Shape& s : ApplyShard(shapes, Shard{index, 3}, unit)) seen.insert(s.m);
  }
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(std::set<std::int64_t>(seen.begin(), seen.end()).size(), 10u);
  EXPECT_EQ(ApplyShard(shapes, Shard{1, 3}, unit), ApplyShard(shapes, Shard{1, 3}, unit));
  auto shard = ParseShard("2/4");
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(shard->index, 2);
  EXPECT_EQ(shard->count, 4);
  for (const char* bad : {"4/4", "-1/4", "1/0", "1", "a/b", "1/4x"}) {
    EXPECT_FALSE(ParseShard(bad).ok()) << bad;
  }
}

// One costly shape and many cheap ones: the costly one takes a shard of its own and the cheap
// ones fill the others evenly (round-robin would give shard 0 the costly shape and a share of
// the rest). Every shard's items keep the list's order.
TEST(ShapeSetsTest, ShardsBalanceTheirCost) {
  std::vector<Shape> shapes = {{1, 1, 1}, {1000, 1, 1}};
  for (int i = 2; i <= 9; ++i) shapes.push_back({i, 1, 1});
  const auto cost = [](const Shape& s) { return static_cast<double>(s.m); };
  const std::vector<Shape> first = ApplyShard(shapes, Shard{0, 3}, cost);
  EXPECT_EQ(first, (std::vector<Shape>{{1000, 1, 1}}));
  double load[2] = {0, 0};
  std::multiset<std::int64_t> seen;
  for (int index = 1; index < 3; ++index) {
    const std::vector<Shape> mine = ApplyShard(shapes, Shard{index, 3}, cost);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      load[index - 1] += cost(mine[i]);
      seen.insert(mine[i].m);
      if (i > 0) {
        EXPECT_LT(mine[i - 1].m, mine[i].m);  // list order
      }
    }
  }
  EXPECT_EQ(seen.size(), 9u);
  EXPECT_LE(std::abs(load[0] - load[1]), 9.0);  // 1 + ... + 9 = 45 split within one item
  // More shards than shapes: the extra shards are empty.
  EXPECT_TRUE(ApplyShard(std::vector<Shape>{{2, 2, 2}}, Shard{1, 2}, cost).empty());
}

// The estimate grows with the flops, is the same for every machine (a fixed reference space)
// and gives a GEMV, whose space is small, far less than a matrix shape of equal flops.
TEST(ShardCostTest, GrowsWithFlopsAndKnowsSmallSpaces) {
  const double small = EstimatedTuneCost(MakeProblem(DType::kF32, 256, 256, 256));
  const double big = EstimatedTuneCost(MakeProblem(DType::kF32, 1024, 1024, 1024));
  EXPECT_GT(small, 0.0);
  EXPECT_GT(big, 32.0 * small);
  const double gemv = EstimatedTuneCost(MakeProblem(DType::kF32, 1, 4096, 4096));
  const double matrix = EstimatedTuneCost(MakeProblem(DType::kF32, 64, 256, 1024));
  EXPECT_LT(gemv, matrix / 4);
  EXPECT_EQ(EstimatedTuneCost(MakeProblem(DType::kBF16, 128, 768, 768)),
            EstimatedTuneCost(MakeProblem(DType::kBF16, 128, 768, 768)));
}

TEST(RooflineTest, ComputeAndMemoryBound) {
  const nlohmann::json peaks = {{"f32_fma_gflops", {{"one_core", 100.0}, {"all_cores", 190.0}}},
                                {"f64_fma_gflops", {{"one_core", 50.0}, {"all_cores", 95.0}}},
                                {"memory_read_gbs", {{"one_core", 20.0}, {"all_cores", 30.0}}}};
  Problem big = MakeProblem(DType::kF32, 1024, 1024, 1024);
  EXPECT_DOUBLE_EQ(RooflineOf(big, peaks).attainable_gflops, 100.0);
  big.threads = 2;
  EXPECT_DOUBLE_EQ(RooflineOf(big, peaks).attainable_gflops, 190.0);
  // GEMV: 2 flops per 4 bytes of the matrix, so about 0.5 flop/byte x 20 GB/s.
  const Roofline gemv = RooflineOf(MakeProblem(DType::kF32, 1, 4096, 4096), peaks);
  EXPECT_NEAR(gemv.attainable_gflops, 10.0, 0.1);
  EXPECT_DOUBLE_EQ(RooflineOf(big, nullptr).attainable_gflops, 0.0);
  // bf16 without a bf16 dot product runs f32 FMA kernels; s8 without one has no known ceiling.
  const Problem bf16 = MakeProblem(DType::kBF16, 1024, 1024, 1024);
  EXPECT_DOUBLE_EQ(RooflineOf(bf16, peaks).compute_gflops, 100.0);
  nlohmann::json with_dot = peaks;
  with_dot["bf16_dot_gops"] = {{"one_core", 400.0}, {"all_cores", 760.0}};
  EXPECT_DOUBLE_EQ(RooflineOf(bf16, with_dot).compute_gflops, 400.0);
  EXPECT_DOUBLE_EQ(RooflineOf(MakeProblem(DType::kS8, 1024, 1024, 1024), peaks).compute_gflops,
                   0.0);
  EXPECT_DOUBLE_EQ(RooflineOf(big, nlohmann::json{{"f32_fma_gflops", "junk"}}).attainable_gflops,
                   0.0);
}

// Warm-cache timings of operands that fit the last-level cache are bound by the compute peak
// alone; operands larger than it, and cold-cache timings (no cache given), by memory as well.
TEST(RooflineTest, CacheResidentOperandsAreComputeBound) {
  const nlohmann::json peaks = {{"f32_fma_gflops", {{"one_core", 100.0}, {"all_cores", 190.0}}},
                                {"memory_read_gbs", {{"one_core", 20.0}, {"all_cores", 30.0}}}};
  const std::uint64_t llc = LastLevelCacheBytes(testing::SyntheticZen3Machine().topology);
  EXPECT_EQ(llc, 32u << 20);
  // 16^3: 3 KiB of operands, 2.7 flop/byte: 53 GFLOP/s from memory, 100 from cache.
  const Problem small = MakeProblem(DType::kF32, 16, 16, 16);
  EXPECT_NEAR(RooflineOf(small, peaks).attainable_gflops, 20.0 * 2.0 * 16 / 12.0, 1e-9);
  EXPECT_FALSE(RooflineOf(small, peaks).cache_resident);
  const Roofline warm = RooflineOf(small, peaks, llc);
  EXPECT_TRUE(warm.cache_resident);
  EXPECT_DOUBLE_EQ(warm.attainable_gflops, 100.0);
  EXPECT_DOUBLE_EQ(warm.bandwidth_gbs, 20.0);  // still reported
  // 1 x 2048 x 2048 GEMV: 16 MiB, in the cache; 1 x 4096 x 4096: 64 MiB, read from memory.
  EXPECT_DOUBLE_EQ(RooflineOf(MakeProblem(DType::kF32, 1, 2048, 2048), peaks, llc).attainable_gflops,
                   100.0);
  const Roofline gemv = RooflineOf(MakeProblem(DType::kF32, 1, 4096, 4096), peaks, llc);
  EXPECT_FALSE(gemv.cache_resident);
  EXPECT_NEAR(gemv.attainable_gflops, 10.0, 0.1);
  EXPECT_EQ(LastLevelCacheBytes(Topology{}), 0u);
}

// The warm cache is the effective last-level cache the peaks measured where they hold one, else
// hwloc's: a 64 MiB GEMV on a guest that lists 508 MiB but streams beyond 32 MiB at memory speed
// is bound by memory.
TEST(RooflineTest, WarmCacheIsTheMeasuredEffectiveLlc) {
  const Topology topology = testing::SyntheticZen3Machine().topology;
  nlohmann::json peaks = {{"f32_fma_gflops", {{"one_core", 100.0}, {"all_cores", 190.0}}},
                          {"memory_read_gbs", {{"one_core", 20.0}, {"all_cores", 30.0}}}};
  EXPECT_EQ(WarmCacheBytes(topology, peaks), 32u << 20);  // hwloc's, nothing measured
  EXPECT_EQ(WarmCacheBytes(topology, nullptr), 32u << 20);
  peaks["effective_llc_bytes"] = std::uint64_t{16} << 20;
  EXPECT_EQ(WarmCacheBytes(topology, peaks), 16u << 20);
  const Problem gemv = MakeProblem(DType::kF32, 1, 2048, 2048);  // 16 MiB + 16 KiB
  EXPECT_FALSE(RooflineOf(gemv, peaks, WarmCacheBytes(topology, peaks)).cache_resident);
  EXPECT_TRUE(RooflineOf(gemv, peaks, LastLevelCacheBytes(topology)).cache_resident);
  for (const nlohmann::json& wrong : {nlohmann::json("16 MiB"), nlohmann::json(-5),
                                      nlohmann::json(0)}) {
    peaks["effective_llc_bytes"] = wrong;
    EXPECT_EQ(WarmCacheBytes(topology, peaks), 32u << 20) << wrong.dump();
  }
}

// A machine takes the effective LLC its stored peaks measured, and nothing from peaks without
// one; what asks it whether data fits then hears the measured size, not hwloc's.
TEST(RooflineTest, MachinesTakeTheMeasuredEffectiveLlc) {
  Machine machine = testing::SyntheticZen5Machine();
  EXPECT_EQ(LastLevelCacheBytes(machine), 532676608u);  // hwloc's
  nlohmann::json peaks = {{"effective_llc_bytes", std::uint64_t{32} << 20}};
  TakeMeasuredFacts(peaks, &machine);
  EXPECT_EQ(machine.effective_llc_bytes, 32u << 20);
  EXPECT_EQ(LastLevelCacheBytes(machine), 32u << 20);
  const std::string fingerprint = machine.fingerprint;
  for (const nlohmann::json& none : {nlohmann::json(nullptr), nlohmann::json::object(),
                                     nlohmann::json{{"effective_llc_bytes", "32 MiB"}},
                                     nlohmann::json{{"effective_llc_bytes", -1}}}) {
    TakeMeasuredFacts(none, &machine);
    EXPECT_EQ(machine.effective_llc_bytes, 0u) << none.dump();
    EXPECT_EQ(LastLevelCacheBytes(machine), 532676608u) << none.dump();
  }
  EXPECT_EQ(machine.fingerprint, fingerprint);  // measured facts never key results
  // The zmm FMA pipes: 1 or 2, anything else not measured.
  for (const auto& [value, taken] : std::vector<std::pair<nlohmann::json, double>>{
           {1.0, 1.0}, {2, 2.0}, {3.0, 0.0}, {0.7, 0.0}, {-2.0, 0.0}, {"2", 0.0}}) {
    TakeMeasuredFacts(nlohmann::json{{"zmm_fmas_per_cycle", value}}, &machine);
    EXPECT_EQ(machine.zmm_fmas_per_cycle, taken) << value.dump();
  }
  // The calibrated core facts: a probe's boolean "holds", anything else not measured.
  const nlohmann::json facts = {
      {"core_facts",
       {{"tall_tile_over_one_panel", {{"holds", false}, {"speedup", 0.9}, {"threshold", 1.05}}},
        {"unrolls_long_direct_k", {{"holds", "yes"}}},
        {"l3_streams_crowded_panels", true}}}};
  TakeMeasuredFacts(facts, &machine);
  EXPECT_EQ(machine.measured_facts.tall_tile_over_one_panel, std::optional<bool>(false));
  EXPECT_FALSE(machine.measured_facts.unrolls_long_direct_k.has_value());
  EXPECT_FALSE(machine.measured_facts.l3_streams_crowded_panels.has_value());
  TakeMeasuredFacts(nlohmann::json::object(), &machine);
  EXPECT_EQ(machine.measured_facts, MeasuredCoreFacts{});
  EXPECT_EQ(machine.fingerprint, fingerprint);
}

TEST(TuneSessionTest, NearestWinnersAreFilteredAndOrdered) {
  const Machine machine = Host();
  auto winner = [&](std::int64_t m, DType dtype, const std::string& fingerprint) {
    WinnerRecord w;
    w.fingerprint = fingerprint;
    w.problem = MakeProblem(dtype, m, m, m);
    w.config = ModelConfig(w.problem, machine);
    return w;
  };
  std::vector<WinnerRecord> winners = {
      winner(1000, DType::kF32, machine.fingerprint),  // far
      winner(70, DType::kF32, machine.fingerprint),    // near
      winner(64, DType::kF64, machine.fingerprint),    // other dtype
      winner(64, DType::kF32, "someone-else"),         // other machine
  };
  // If the other machine's entry got through, the far config would come first.
  winners[3].config = winners[0].config;
  ASSERT_NE(winners[0].config, winners[1].config);
  const auto near =
      NearestWinnerConfigs(winners, MakeProblem(DType::kF32, 64, 64, 64), machine, 3);
  EXPECT_EQ(near, (std::vector<KernelConfig>{winners[1].config, winners[0].config}));
  EXPECT_EQ(NearestWinnerConfigs(winners, MakeProblem(DType::kF32, 64, 64, 64), machine, 1).size(),
            1u);
}

TEST(TuneSessionTest, TunesStoresWinnersAndResumes) {
  const Machine machine = Host();
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto machine_id = store->UpsertMachine(machine, nullptr);
  ASSERT_TRUE(machine_id.ok());
  TuneRequest request;
  request.problems = {MakeProblem(DType::kF32, 24, 40, 16), MakeProblem(DType::kF64, 1, 33, 20)};
  request.strategy = "exhaustive";
  request.budget_seconds = 0.0;
  request.max_evals = 6;
  request.measure = ShortSamples();
  int progress_events = 0;
  auto first = RunTuning(*store, *machine_id, machine, request, DefaultThreadPool(),
                         [&](const TuneEvent& e) { progress_events += e.kind ==
                                                                      TuneEvent::Kind::kProgress; });
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_GT(progress_events, 0);
  ASSERT_EQ(first->outcomes.size(), 2u);
  for (const ProblemOutcome& o : first->outcomes) {
    EXPECT_TRUE(o.winner.has_value()) << o.problem.ToString() << ": " << o.error;
    EXPECT_GT(o.winner_gflops, 0.0);
    EXPECT_GT(o.default_gflops, 0.0);
    EXPECT_EQ(o.resumed, 0);
    EXPECT_EQ(o.evaluations, std::min<std::int64_t>(6, static_cast<std::int64_t>(o.space_size)));
    EXPECT_EQ(o.best_so_far.size(), static_cast<std::size_t>(o.evaluations));
  }
  auto winners = store->Winners(machine.fingerprint);
  ASSERT_TRUE(winners.ok());
  EXPECT_EQ(winners->size(), 2u);

  // The same request again: every search candidate comes from the DB, nothing is re-run.
  auto problem_id = store->UpsertProblem(request.problems[0]);
  ASSERT_TRUE(problem_id.ok());
  auto before = store->Measurements(*machine_id, *problem_id);
  ASSERT_TRUE(before.ok());
  auto second = RunTuning(*store, *machine_id, machine, request, DefaultThreadPool(), {});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->outcomes[0].resumed, second->outcomes[0].evaluations);
  auto after = store->Measurements(*machine_id, *problem_id);
  ASSERT_TRUE(after.ok());
  std::size_t new_search = 0;
  for (std::size_t i = before->size(); i < after->size(); ++i) {
    new_search += (*after)[i].stage != MeasurementStage::kConfirm;
  }
  EXPECT_EQ(new_search, 0u);
}

// A tune with two threads to spend starts from what the runtime runs the shape with untuned:
// a 16^3 on one thread. That default is a finalist of the confirm round, so the stored winner
// is never slower than leaving the shape untuned.
TEST(TuneSessionTest, TheDefaultIsWhatTheRuntimeRunsUntuned) {
  const Machine machine = Host();
  if (DefaultThreadPool().size() < 2 || machine.topology.cores < 2) {
    GTEST_SKIP() << "needs two cores";
  }
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto machine_id = store->UpsertMachine(machine, nullptr);
  ASSERT_TRUE(machine_id.ok());
  Problem problem = MakeProblem(DType::kF32, 16, 16, 16);
  problem.threads = 2;
  ASSERT_EQ(DefaultThreadCount(problem, 2), 1);
  TuneRequest request;
  request.problems = {problem};
  request.strategy = "exhaustive";
  request.budget_seconds = 0.0;
  request.max_evals = 4;
  request.measure = ShortSamples();
  auto result = RunTuning(*store, *machine_id, machine, request, DefaultThreadPool(), {});
  ASSERT_TRUE(result.ok()) << result.error().message;
  ASSERT_EQ(result->outcomes.size(), 1u);
  const ProblemOutcome& o = result->outcomes[0];
  ASSERT_TRUE(o.winner.has_value()) << o.error;
  Problem untuned = problem;
  untuned.threads = 1;
  EXPECT_EQ(o.default_config, ModelConfig(untuned, machine));
  EXPECT_EQ(o.default_config.threads, 1);
  EXPECT_GT(o.default_gflops, 0.0);
  EXPECT_GE(o.winner_gflops, o.default_gflops);
  // The winner is stored for the problem as asked (two threads to spend), whatever it runs on.
  auto winners = store->Winners(machine.fingerprint);
  ASSERT_TRUE(winners.ok());
  ASSERT_EQ(winners->size(), 1u);
  EXPECT_EQ((*winners)[0].problem.threads, 2);
  EXPECT_LE((*winners)[0].config.threads, 2);
}

TEST(TuneSessionTest, UnknownStrategyIsAnError) {
  auto store = TuningStore::Open(":memory:", DbOpenMode::kReadWrite);
  ASSERT_TRUE(store.ok());
  TuneRequest request;
  request.strategy = "telepathy";
  auto result = RunTuning(*store, 1, Host(), request, DefaultThreadPool(), {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().message.find("telepathy"), std::string::npos);
}

}  // namespace
}  // namespace mmtune
