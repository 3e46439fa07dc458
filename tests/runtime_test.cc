// The runtime: lookup tiers (exact, nearest, default), hostile DB contents, results against the
// reference in every tier, threads, concurrency, the record file and the C API.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "db/store.h"
#include "kernels/default_config.h"
#include "kernels/gemm_args.h"
#include "kernels/lowp_reference.h"
#include "kernels/packed_b.h"
#include "kernels/reference_gemm.h"
#include "mmtune/mmtune.h"
#include "mmtune/runtime.h"
#include "runtime/record_file.h"
#include "runtime/team_or_alone.h"
#include "runtime/winner_index.h"
#include "small_integers.h"
#include "synthetic_machine.h"
#include "tests/build_kernels.h"

namespace mmtune {
namespace {

Problem MakeProblem(std::int64_t m, std::int64_t n, std::int64_t k, int threads = 1,
                    DType dtype = DType::kF32, Layout layout = Layout::kRowMajor,
                    Trans trans_a = Trans::kNo, Trans trans_b = Trans::kNo) {
  return Problem{dtype, layout, trans_a, trans_b, m, n, k, threads};
}

// A valid config that is visibly not the analytical default: same tile, k unrolled by 4.
KernelConfig MarkedConfig(const Problem& problem, const Machine& machine) {
  KernelConfig config = ModelConfig(problem, machine);
  config.k_unroll = 4;
  return config;
}

WinnerRecord Winner(const Problem& problem, const KernelConfig& config, double gflops,
                    const std::string& fingerprint) {
  WinnerRecord record;
  record.fingerprint = fingerprint;
  record.problem = problem;
  record.config = config;
  record.gflops = gflops;
  return record;
}

// ---- WinnerIndex on a synthetic machine: the tiers themselves. ----

// The index of a DB holding one winner, `config` for `problem`, of `machine`.
WinnerIndex OneWinnerIndex(const Machine& machine, const Problem& problem,
                           const KernelConfig& config, double gflops) {
  return WinnerIndex::Build({Winner(problem, config, gflops, machine.fingerprint)}, machine,
                            nullptr);
}

TEST(WinnerIndexTest, ExactThenNearestThenDefault) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const Problem tuned = MakeProblem(128, 768, 768);
  const KernelConfig config = MarkedConfig(tuned, machine);
  std::vector<std::string> skipped;
  const WinnerIndex index =
      WinnerIndex::Build({Winner(tuned, config, 50.0, machine.fingerprint)}, machine, &skipped);
  EXPECT_TRUE(skipped.empty());
  ASSERT_EQ(index.size(), 1u);

  const Lookup exact = index.Find(tuned);
  EXPECT_EQ(exact.tier, LookupTier::kExact);
  EXPECT_EQ(exact.config, config);
  EXPECT_EQ(exact.gflops, 50.0);

  // The winner's config, but for its blocks that spanned all of 128x768 (LentConfig): those
  // are the model's for the new shape, which the default (same tile) has too.
  const Problem near = MakeProblem(120, 700, 800);
  const Lookup nearest = index.Find(near);
  EXPECT_EQ(nearest.tier, LookupTier::kNearest);
  KernelConfig expected = config;
  ASSERT_EQ(config.family, KernelFamily::kPacked);
  ASSERT_LT(config.kc, tuned.k);  // chosen, not cut: kept
  expected.mc = UntunedConfig(near, machine).mc;
  expected.nc = UntunedConfig(near, machine).nc;
  EXPECT_EQ(nearest.config, expected) << nearest.config.ToString();
  EXPECT_EQ(nearest.tuned, tuned);

  // Another dtype, layout or transpose never borrows this winner.
  for (const Problem& other :
       {MakeProblem(128, 768, 768, 1, DType::kF64), MakeProblem(128, 768, 768, 1, DType::kF32,
                                                               Layout::kColMajor),
        MakeProblem(128, 768, 768, 1, DType::kF32, Layout::kRowMajor, Trans::kYes)}) {
    const Lookup fallback = index.Find(other);
    EXPECT_EQ(fallback.tier, LookupTier::kDefault) << other.ToString();
    EXPECT_TRUE(fallback.config.Validate(other, machine)) << other.ToString();
  }
}

TEST(WinnerIndexTest, NearestPicksTheClosestShapeInLogSpace) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const Problem small = MakeProblem(64, 64, 64);
  const Problem large = MakeProblem(1024, 1024, 1024);
  const WinnerIndex index = WinnerIndex::Build(
      {Winner(small, MarkedConfig(small, machine), 40.0, machine.fingerprint),
       Winner(large, MarkedConfig(large, machine), 90.0, machine.fingerprint)},
      machine, nullptr);
  EXPECT_EQ(index.Find(MakeProblem(80, 80, 80)).tuned, small);
  EXPECT_EQ(index.Find(MakeProblem(700, 900, 1100)).tuned, large);
}

TEST(WinnerIndexTest, NearestBorrowsOnlyFromTheDefaultsFamily) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const Problem tiny = MakeProblem(8, 8, 8);
  const KernelConfig direct = MarkedConfig(tiny, machine);
  ASSERT_EQ(direct.family, KernelFamily::kDirect);
  const WinnerIndex index = OneWinnerIndex(machine, tiny, direct, 20.0);
  // A small problem, direct by default too, borrows the direct winner.
  const Lookup small = index.Find(MakeProblem(12, 10, 16));
  EXPECT_EQ(small.tier, LookupTier::kNearest);
  EXPECT_EQ(small.config, direct);
  // Large problems, packed by default, keep the default: the direct 8x8 ran 1024^3 at 0.28x.
  for (const Problem& large : {MakeProblem(1024, 1024, 1024), MakeProblem(128, 768, 3072),
                               MakeProblem(2048, 2048, 2048, 2)}) {
    ASSERT_TRUE(direct.Validate(large, machine)) << large.ToString();  // it could run them
    const Lookup lookup = index.Find(large);
    EXPECT_EQ(lookup.tier, LookupTier::kDefault) << large.ToString();
    EXPECT_EQ(lookup.config, UntunedConfig(large, machine)) << large.ToString();
    EXPECT_EQ(lookup.config.family, KernelFamily::kPacked) << large.ToString();
  }
  // And the other way round: a packed winner is not lent to a direct problem.
  const Problem big = MakeProblem(1024, 1024, 1024);
  const KernelConfig packed = MarkedConfig(big, machine);
  ASSERT_EQ(packed.family, KernelFamily::kPacked);
  const WinnerIndex packed_only = OneWinnerIndex(machine, big, packed, 80.0);
  const Lookup packed_lent = packed_only.Find(MakeProblem(700, 900, 1100));
  EXPECT_EQ(packed_lent.tier, LookupTier::kNearest);
  EXPECT_EQ(packed_lent.config.family, KernelFamily::kPacked);
  EXPECT_EQ(packed_lent.config.mr, packed.mr);  // its tile; blocks per LentConfig
  EXPECT_EQ(packed_lent.config.nr, packed.nr);
  EXPECT_EQ(packed_lent.config.k_unroll, packed.k_unroll);
  EXPECT_EQ(packed_only.Find(MakeProblem(32, 32, 32)).tier, LookupTier::kDefault);
  // Nor is a one-thread winner lent where the default would run on two.
  const Problem two_threads = MakeProblem(700, 900, 1100, 2);
  ASSERT_EQ(UntunedConfig(two_threads, machine).threads, 2);
  const Lookup on_two = packed_only.Find(two_threads);
  EXPECT_EQ(on_two.tier, LookupTier::kDefault);
  EXPECT_EQ(on_two.config.threads, 2);
  // A problem small enough for one thread still borrows it with two to spend (packed by default:
  // K past the few-rows rule's 1536, and too large for half of L2).
  const Problem small_packed = MakeProblem(2, 64, 1600, 2);
  ASSERT_EQ(UntunedConfig(small_packed, machine).threads, 1);
  ASSERT_EQ(UntunedConfig(small_packed, machine).family, KernelFamily::kPacked);
  EXPECT_EQ(packed_only.Find(small_packed).tier, LookupTier::kNearest);
}

// A packed winner's blocks that its own problem cut short (a block over the whole of M, N or
// K) are the model's for the borrowing problem: a bf16 2x2x2 winner (mc14 kc2 nc32) ran
// 256x1024x1024 at 0.07x of the default on Zen 5. Blocks it chose below its problem stay.
TEST(WinnerIndexTest, NearestPackedWinnerTakesTheModelsBlocksWhereItsProblemCutThem) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  for (const Machine& machine : {testing::SyntheticZen5Machine(), testing::SyntheticZen3Machine()}) {
    for (DType dtype : {DType::kBF16, DType::kS8, DType::kF32, DType::kF64}) {
      const Problem tiny = MakeProblem(2, 2, 2, 1, dtype);
      const Problem large = MakeProblem(256, 1024, 1024, 1, dtype);
      KernelConfig tiny_winner = UntunedConfig(large, machine);
      ASSERT_EQ(tiny_winner.family, KernelFamily::kPacked) << tiny_winner.ToString();
      tiny_winner.k_unroll = 4;  // marked
      // Blocks as a tune of 2x2x2 stores them: one tile, one k group.
      tiny_winner.mc = tiny_winner.mr;
      tiny_winner.nc = tiny_winner.nr;
      tiny_winner.kc = dtype == DType::kS8 ? 4 : 2;
      ASSERT_TRUE(tiny_winner.Validate(tiny, machine)) << tiny_winner.ToString();
      const std::string where = std::string(ToString(dtype)) + " on " + machine.cpu.brand;
      const WinnerIndex index = OneWinnerIndex(machine, tiny, tiny_winner, 1.0);
      if (dtype == DType::kBF16 || dtype == DType::kS8) {
        const Lookup lent = index.Find(large);
        ASSERT_EQ(lent.tier, LookupTier::kNearest) << where;
        KernelConfig expected = UntunedConfig(large, machine);
        expected.k_unroll = 4;
        EXPECT_EQ(lent.config, expected) << where << ": " << lent.config.ToString();
      }
      // Straight from LentConfig for f32 and f64, whose default for 2x2x2 is direct.
      KernelConfig blocks_kept = tiny_winner;
      const Problem mid = MakeProblem(512, 2048, 2048, 1, dtype);
      blocks_kept.mc = 2 * blocks_kept.mr;
      blocks_kept.nc = 2 * blocks_kept.nr;
      blocks_kept.kc = 64;
      const KernelConfig kept = LentConfig(blocks_kept, mid, large, machine);
      EXPECT_EQ(kept, blocks_kept) << where << ": " << kept.ToString();
      const KernelConfig reblocked = LentConfig(tiny_winner, tiny, large, machine);
      EXPECT_EQ(reblocked.mc, UntunedConfig(large, machine).mc) << where;
      EXPECT_EQ(reblocked.kc, UntunedConfig(large, machine).kc) << where;
      EXPECT_EQ(reblocked.nc, UntunedConfig(large, machine).nc) << where;
      EXPECT_EQ(reblocked.k_unroll, 4) << where;
    }
  }
  // Other families are lent as they are.
  const Machine zen5 = testing::SyntheticZen5Machine();
  const KernelConfig direct = MarkedConfig(MakeProblem(8, 8, 8), zen5);
  ASSERT_EQ(direct.family, KernelFamily::kDirect);
  EXPECT_EQ(LentConfig(direct, MakeProblem(8, 8, 8), MakeProblem(16, 12, 9), zen5), direct);
}

// Within the direct family a winner is lent only where it splits K as the default does: on
// Zen 5 a whole-K tile ran 128x4096x4096 and 128x3072x768, which the default reads in k blocks,
// at 0.28-0.55x. A blocked winner is lent there, a whole-K one to whole-K problems.
TEST(WinnerIndexTest, NearestDirectWinnerSplitsKAsTheDefaultDoes) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen5 = testing::SyntheticZen5Machine();
  const Problem wide = MakeProblem(128, 3072, 768);
  const KernelConfig blocked = MarkedConfig(wide, zen5);
  ASSERT_EQ(blocked.family, KernelFamily::kDirect);
  ASSERT_GT(blocked.kc, 0);
  ASSERT_LT(blocked.kc, wide.k);
  KernelConfig whole = blocked;
  whole.kc = 0;

  const Problem target = MakeProblem(128, 4096, 1536);  // within 2x of `wide` in M, N and K
  const KernelConfig target_default = UntunedConfig(target, zen5);
  ASSERT_EQ(target_default.family, KernelFamily::kDirect);
  ASSERT_GT(target_default.kc, 0);
  ASSERT_LT(target_default.kc, target.k);
  const WinnerIndex whole_only = OneWinnerIndex(zen5, wide, whole, 150.0);
  ASSERT_TRUE(whole.Validate(target, zen5));  // it could run it, slowly
  const Lookup fallback = whole_only.Find(target);
  EXPECT_EQ(fallback.tier, LookupTier::kDefault);
  EXPECT_EQ(fallback.config, target_default);

  const WinnerIndex blocked_only = OneWinnerIndex(zen5, wide, blocked, 170.0);
  const Lookup lent = blocked_only.Find(target);
  EXPECT_EQ(lent.tier, LookupTier::kNearest);
  EXPECT_EQ(lent.config, blocked);

  // Small problems read K whole: a whole-K winner is lent among them.
  const Problem small = MakeProblem(32, 32, 32);
  const KernelConfig small_whole = MarkedConfig(small, zen5);
  ASSERT_EQ(small_whole.kc, 0);
  EXPECT_EQ(OneWinnerIndex(zen5, small, small_whole, 150.0).Find(MakeProblem(48, 40, 48)).config,
            small_whole);
}

// A problem inside a tuned range runs its bucket's winner: after the exact tier, before the
// nearest. Outside the range, for another kind, or where the bucket has no winner that runs the
// problem, the nearest tier answers as before.
TEST(WinnerIndexTest, BucketTierSitsBetweenExactAndNearest) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  auto range = ParseShapeRange("1..64x256x256");
  ASSERT_TRUE(range.ok());
  ShapeRangeRecord record{machine.fingerprint, DType::kF32, Layout::kRowMajor, Trans::kNo,
                          Trans::kNo, 1, *range, BucketPolicy{}, ""};
  std::vector<WinnerRecord> winners;
  // Each bucket's winner is told apart by its gflops, 100 - M.
  auto gflops_of = [](std::int64_t m) { return 100.0 - static_cast<double>(m); };
  for (std::int64_t m : {1, 2, 4, 8, 16, 32, 64}) {
    const Problem bucket = MakeProblem(m, 256, 256);
    winners.push_back(
        Winner(bucket, ModelConfig(bucket, machine), gflops_of(m), machine.fingerprint));
  }
  std::vector<std::string> skipped;
  const WinnerIndex index = WinnerIndex::Build(winners, machine, &skipped, {record});
  ASSERT_TRUE(skipped.empty()) << skipped.front();

  const Lookup exact = index.Find(MakeProblem(16, 256, 256));
  EXPECT_EQ(exact.tier, LookupTier::kExact);
  EXPECT_TRUE(exact.bucket_range.empty());
  for (const auto& [m, bucket] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {3, 4}, {5, 8}, {7, 8}, {9, 16}, {17, 32}, {33, 64}, {63, 64}}) {
    SCOPED_TRACE(m);
    const Lookup found = index.Find(MakeProblem(m, 256, 256));
    ASSERT_EQ(found.tier, LookupTier::kBucket);
    EXPECT_EQ(found.tuned.m, bucket) << "the bucket is the smallest one at least as large";
    EXPECT_EQ(found.gflops, gflops_of(bucket));
    EXPECT_EQ(found.bucket_range, "1..64x256x256 (pow2)");
    EXPECT_EQ(found.threads_reason, "the bucket winner's, tuned with 1 thread(s) allowed");
  }
  // 5 is nearer 4 than 8 in log space: the nearest tier would lend 4's winner.
  Problem five = MakeProblem(5, 256, 256);
  ASSERT_EQ(WinnerIndex::Build(winners, machine, nullptr).Find(five).tuned.m, 4);
  EXPECT_EQ(index.Find(MakeProblem(65, 256, 256)).tier, LookupTier::kNearest);
  EXPECT_EQ(index.Find(MakeProblem(5, 256, 255)).tier, LookupTier::kNearest);
  EXPECT_EQ(index.Find(MakeProblem(5, 256, 256, 1, DType::kF64)).tier, LookupTier::kDefault);
  EXPECT_EQ(index.Find(MakeProblem(5, 256, 256, 1, DType::kF32, Layout::kColMajor)).tier,
            LookupTier::kDefault);

  // A bucket without a winner (tuned by a shard whose DB was not merged) falls to the nearest.
  std::vector<WinnerRecord> without_eight;
  for (const WinnerRecord& winner : winners) {
    if (winner.problem.m != 8) without_eight.push_back(winner);
  }
  const WinnerIndex gap = WinnerIndex::Build(without_eight, machine, nullptr, {record});
  EXPECT_EQ(gap.Find(MakeProblem(7, 256, 256)).tier, LookupTier::kNearest);
  EXPECT_EQ(gap.Find(MakeProblem(3, 256, 256)).tier, LookupTier::kBucket);

  // step:S buckets map by their own sizes.
  record.buckets = BucketPolicy{BucketPolicy::Kind::kStep, 16};
  const WinnerIndex stepped = WinnerIndex::Build(winners, machine, nullptr, {record});
  EXPECT_EQ(stepped.Find(MakeProblem(20, 256, 256)).tuned.m, 32);
  EXPECT_EQ(stepped.Find(MakeProblem(5, 256, 256)).tuned.m, 16);
  EXPECT_EQ(stepped.Find(MakeProblem(5, 256, 256)).bucket_range, "1..64x256x256 (step:16)");
}

// A direct winner is lent only to problems within 2x of its own in each of M, N and K: a tile
// chosen for a small shape ran larger ones far below their default (Zen 5, f32: a 2x2x2
// winner's 2x16 at 0.22-0.37x on 32^3..256^3, 8^3's 8x8 at 0.37-0.40x).
TEST(WinnerIndexTest, NearestDirectWinnerComesFromWithinTwiceTheShape) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine zen5 = testing::SyntheticZen5Machine();
  const Problem tiny = MakeProblem(8, 8, 8);
  const KernelConfig tiny_winner = MarkedConfig(tiny, zen5);
  ASSERT_EQ(tiny_winner.family, KernelFamily::kDirect);
  const WinnerIndex index = OneWinnerIndex(zen5, tiny, tiny_winner, 30.0);
  EXPECT_EQ(index.Find(MakeProblem(12, 16, 9)).tier, LookupTier::kNearest);
  EXPECT_EQ(index.Find(MakeProblem(4, 8, 16)).tier, LookupTier::kNearest);
  for (const Problem& far : {MakeProblem(17, 8, 8), MakeProblem(8, 8, 3), MakeProblem(32, 32, 32),
                             MakeProblem(64, 64, 64), MakeProblem(256, 256, 256)}) {
    ASSERT_TRUE(tiny_winner.Validate(far, zen5)) << far.ToString();
    ASSERT_EQ(UntunedConfig(far, zen5).family, KernelFamily::kDirect) << far.ToString();
    const Lookup lookup = index.Find(far);
    EXPECT_EQ(lookup.tier, LookupTier::kDefault) << far.ToString();
    EXPECT_EQ(lookup.config, UntunedConfig(far, zen5)) << far.ToString();
  }
}

// Within the thread budget; the 1-thread tune's higher number does not count for a 2-thread
// runtime, which the default would run on both cores (next test).
TEST(WinnerIndexTest, ExactPrefersTheFastestWinnerWithinTheThreadBudget) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const Problem one = MakeProblem(512, 512, 512, 1);
  const Problem two = MakeProblem(512, 512, 512, 2);
  KernelConfig two_threads = MarkedConfig(two, machine);
  two_threads.threads = 2;
  const WinnerIndex index = WinnerIndex::Build(
      {Winner(one, MarkedConfig(one, machine), 160.0, machine.fingerprint),
       Winner(two, two_threads, 110.0, machine.fingerprint)},
      machine, nullptr);
  EXPECT_EQ(index.Find(MakeProblem(512, 512, 512, 2)).config.threads, 2);
  // A caller allowing one thread never gets the two-thread winner.
  const Lookup single = index.Find(MakeProblem(512, 512, 512, 1));
  EXPECT_EQ(single.tier, LookupTier::kExact);
  EXPECT_EQ(single.config.threads, 1);
}

// A DB tuned with one thread must not take the second core from shapes the default would
// split: its winners were never timed against the 2-thread default (issue: a 1-thread winner
// ran 256^3 at half the default's speed on a 2-thread runtime). A winner tuned with the
// runtime's budget may run on fewer threads: the tune measured it against that default.
TEST(WinnerIndexTest, ExactNeverRunsOnFewerThreadsThanTheDefaultUnlessTunedWithTheBudget) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const Problem large_one = MakeProblem(256, 256, 256, 1);
  const Problem large_two = MakeProblem(256, 256, 256, 2);
  ASSERT_EQ(UntunedConfig(large_two, machine).threads, 2);
  const WinnerIndex one_thread_db = OneWinnerIndex(
      machine, large_one, MarkedConfig(large_one, machine), 1000.0);
  const Lookup on_two = one_thread_db.Find(large_two);
  EXPECT_EQ(on_two.tier, LookupTier::kDefault);
  EXPECT_EQ(on_two.config, UntunedConfig(large_two, machine));
  EXPECT_NE(on_two.threads_reason.find("not used"), std::string::npos) << on_two.threads_reason;
  // The same winner serves a 1-thread runtime exactly.
  const Lookup on_one = one_thread_db.Find(large_one);
  EXPECT_EQ(on_one.tier, LookupTier::kExact);
  EXPECT_EQ(on_one.config, MarkedConfig(large_one, machine));

  // Tuned with two allowed (--threads auto), a 1-thread winner beat the 2-thread default.
  KernelConfig alone = MarkedConfig(large_one, machine);
  ASSERT_EQ(alone.threads, 1);
  const WinnerIndex searched = OneWinnerIndex(machine, large_two, alone, 90.0);
  const Lookup measured = searched.Find(large_two);
  EXPECT_EQ(measured.tier, LookupTier::kExact);
  EXPECT_EQ(measured.config.threads, 1);
  EXPECT_NE(measured.threads_reason.find("measured faster"), std::string::npos)
      << measured.threads_reason;

  // Where the default itself runs on one thread, a 1-thread tune's winner is used as it is.
  const Problem small_one = MakeProblem(16, 16, 16, 1);
  const Problem small_two = MakeProblem(16, 16, 16, 2);
  ASSERT_EQ(UntunedConfig(small_two, machine).threads, 1);
  const WinnerIndex small_db =
      OneWinnerIndex(machine, small_one, MarkedConfig(small_one, machine), 50.0);
  EXPECT_EQ(small_db.Find(small_two).tier, LookupTier::kExact);
}

TEST(WinnerIndexTest, NearestSkipsConfigsThatDoNotFitTheNewShape) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const Problem decode = MakeProblem(1, 4096, 4096);
  const KernelConfig gemv = ModelConfig(decode, machine);
  ASSERT_EQ(gemv.family, KernelFamily::kGemv);
  const WinnerIndex index = OneWinnerIndex(machine, decode, gemv, 11.0);
  // 2x4096x4096 is closest to the decode shape, but a gemv config cannot run M = 2.
  const Problem two_rows = MakeProblem(2, 4096, 4096);
  const Lookup lookup = index.Find(two_rows);
  EXPECT_EQ(lookup.tier, LookupTier::kDefault);
  EXPECT_TRUE(lookup.config.Validate(two_rows, machine));
}

TEST(WinnerIndexTest, VectorShapesBorrowOnlyFromVectorShapes) {
  MMTUNE_SKIP_WITHOUT_X86_KERNELS();
  const Machine machine = testing::SyntheticZen3Machine();
  const Problem two_rows = MakeProblem(2, 4096, 4096);
  const KernelConfig packed = MarkedConfig(two_rows, machine);
  ASSERT_EQ(packed.family, KernelFamily::kPacked);
  ASSERT_TRUE(packed.Validate(MakeProblem(1, 4096, 4096), machine));  // it could run M = 1
  const Problem other_decode = MakeProblem(1, 11008, 4096);
  const KernelConfig gemv = ModelConfig(other_decode, machine);
  const WinnerIndex index = WinnerIndex::Build(
      {Winner(two_rows, packed, 30.0, machine.fingerprint),
       Winner(other_decode, gemv, 11.0, machine.fingerprint)},
      machine, nullptr);
  // 2x4096x4096 is closer to 1x4096x4096, but the decode step takes the other decode's winner.
  const Lookup decode = index.Find(MakeProblem(1, 4096, 4096));
  EXPECT_EQ(decode.tier, LookupTier::kNearest);
  EXPECT_EQ(decode.tuned, other_decode);
  EXPECT_EQ(decode.config.family, KernelFamily::kGemv);
  // With no vector shape tuned, a vector shape gets the default (gemv), not the packed winner.
  const WinnerIndex matrix_only = OneWinnerIndex(machine, two_rows, packed, 30.0);
  const Lookup fallback = matrix_only.Find(MakeProblem(4096, 1, 4096));
  EXPECT_EQ(fallback.tier, LookupTier::kDefault);
  EXPECT_EQ(fallback.config.family, KernelFamily::kGemv);
}

TEST(WinnerIndexTest, HostileRowsAreSkippedWithAReason) {
  const Machine machine = testing::SyntheticZen3Machine();  // AVX2, 2 cores
  const Problem problem = MakeProblem(256, 256, 256);
  KernelConfig avx512 = MarkedConfig(problem, machine);
  avx512.isa = IsaLevel::kAvx512;  // the CPU lacks it
  KernelConfig absurd = MarkedConfig(problem, machine);
  absurd.mr = 1000;
  KernelConfig too_many_threads = MarkedConfig(problem, machine);
  too_many_threads.threads = 64;
  WinnerRecord not_finite = Winner(problem, MarkedConfig(problem, machine), NAN, machine.fingerprint);
  std::vector<std::string> skipped;
  const WinnerIndex index = WinnerIndex::Build(
      {Winner(problem, avx512, 1e9, machine.fingerprint),
       Winner(problem, absurd, 1e9, machine.fingerprint),
       Winner(problem, too_many_threads, 1e9, machine.fingerprint), not_finite},
      machine, &skipped);
  EXPECT_EQ(index.size(), 0u);
  ASSERT_EQ(skipped.size(), 4u);
  for (const std::string& line : skipped) EXPECT_NE(line.find("skipped"), std::string::npos);
  const Lookup lookup = index.Find(MakeProblem(256, 256, 256, 2));
  EXPECT_EQ(lookup.tier, LookupTier::kDefault);
  EXPECT_NE(lookup.config.isa, IsaLevel::kAvx512);
}

TEST(DefaultThreadCountTest, SmallShapesStayOnOneThread) {
  EXPECT_EQ(DefaultThreadCount(MakeProblem(32, 32, 32), 8), 1);
  EXPECT_EQ(DefaultThreadCount(MakeProblem(48, 48, 48), 8), 1);
  EXPECT_EQ(DefaultThreadCount(MakeProblem(64, 64, 64), 2), 2);
  EXPECT_EQ(DefaultThreadCount(MakeProblem(1, 4096, 4096), 2), 2);
  EXPECT_EQ(DefaultThreadCount(MakeProblem(1024, 1024, 1024), 8), 8);
  EXPECT_EQ(DefaultThreadCount(MakeProblem(1024, 1024, 1024), 2), 2);
  EXPECT_EQ(DefaultThreadCount(MakeProblem(0, 1024, 1024), 4), 1);
}

// The exact tier compares winners with DefaultThreadCount alone, not the whole untuned config:
// the two must agree for every family and dtype.
TEST(DefaultThreadCountTest, IsTheUntunedConfigsThreadCount) {
  const Machine machine = testing::SyntheticZen5Machine();
  for (DType dtype : {DType::kF32, DType::kF64, DType::kBF16, DType::kS8}) {
    for (const auto& [m, n, k] : std::vector<std::array<std::int64_t, 3>>{
             {1, 4096, 4096}, {4096, 1, 512}, {16, 16, 16}, {64, 64, 64}, {256, 256, 256},
             {33, 4096, 17}, {2048, 2048, 2048}}) {
      for (int threads : {1, 2}) {
        const Problem p = MakeProblem(m, n, k, threads, dtype);
        EXPECT_EQ(UntunedConfig(p, machine).threads, DefaultThreadCount(p, threads))
            << p.ToString();
      }
    }
  }
}

// ---- The Runtime on this host, with real DB files. ----

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / "mmtune_runtime_XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir_.data()), nullptr);
    auto machine = DetectHostMachine();
    ASSERT_TRUE(machine) << machine.error().message;
    machine_ = *machine;
    ::unsetenv("MMTUNE_NUM_THREADS");
    ::unsetenv("MMTUNE_RECORD");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  // A DB holding `winners` for this host.
  std::string MakeDb(const std::string& name, const std::vector<WinnerRecord>& winners,
                     const Machine* machine = nullptr) {
    const std::string path = Path(name);
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    EXPECT_TRUE(store) << store.error().message;
    auto machine_id = store->UpsertMachine(machine != nullptr ? *machine : machine_, nullptr);
    EXPECT_TRUE(machine_id);
    for (const WinnerRecord& winner : winners) {
      auto problem_id = store->UpsertProblem(winner.problem);
      EXPECT_TRUE(problem_id);
      EXPECT_TRUE(store->SetWinner(*machine_id, *problem_id, 0, winner));
    }
    return path;
  }

  std::unique_ptr<Runtime> Open(const std::string& db, int max_threads = 1,
                                const std::string& record = "", bool use_winners = true) {
    RuntimeOptions options;
    options.db_path = db;
    options.max_threads = max_threads;
    options.record_path = record;
    options.use_winners = use_winners;
    auto runtime = Runtime::Open(options);
    EXPECT_TRUE(runtime) << runtime.error().message;
    return runtime ? std::move(*runtime) : nullptr;
  }

  // Stores this machine's row in `path` with the peaks of a tune that measured an effective
  // last-level cache a quarter of hwloc's.
  void StoreQuarterOfTheLlc(const std::string& path) {
    auto store = TuningStore::Open(path, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store) << store.error().message;
    const std::uint64_t cores = std::max(1, CacheBudgetOf(machine_).llc_cores);
    const nlohmann::json peaks = {
        {"effective_llc_bytes", CacheBudgetOf(machine_).l3_per_core * cores / 4}};
    ASSERT_TRUE(store->UpsertMachine(machine_, peaks));
  }

  // A GEMV whose matrix is just under hwloc's L3 share of one core.
  Problem GemvUnderTheLlcShare() const {
    const std::uint64_t share = CacheBudgetOf(machine_).l3_per_core;
    return MakeProblem(1, 1024, static_cast<std::int64_t>(share / 4096) - 1);
  }

  std::string dir_;
  Machine machine_;
};

// Runs one GEMM through the runtime and the reference on the same random operands (with padding
// in every leading dimension and NaN in C when beta = 0) and compares.
// Storage of one operand with its leading dimension padded by 3.
struct PaddedOperand {
  std::int64_t ld = 1;
  std::size_t elements = 1;
};

// A is m x k (or k x m transposed), B k x n (or n x k), C m x n, in the problem's layout.
PaddedOperand Padded(const Problem& p, std::int64_t rows, std::int64_t cols, Trans trans) {
  const std::int64_t r = trans == Trans::kNo ? rows : cols;
  const std::int64_t c = trans == Trans::kNo ? cols : rows;
  const std::int64_t outer = p.layout == Layout::kRowMajor ? r : c;
  const std::int64_t ld = (p.layout == Layout::kRowMajor ? c : r) + 3;
  return {ld, static_cast<std::size_t>(std::max<std::int64_t>(1, outer * ld))};
}

// C as computed against C as the reference computed it, within a tolerance scaled with K; a NaN
// the reference left (padding of a NaN-filled C) must stay NaN: it was never written.
template <typename T>
void ExpectCloseToReference(const std::vector<T>& c, const std::vector<T>& expected,
                            const Problem& p) {
  ASSERT_EQ(c.size(), expected.size());
  const double tolerance = (sizeof(T) == 4 ? 1e-5 : 1e-13) * static_cast<double>(p.k + 4) * 4;
  for (std::size_t i = 0; i < c.size(); ++i) {
    const double want = static_cast<double>(expected[i]);
    const double got = static_cast<double>(c[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << p.ToString() << " element " << i;
      continue;
    }
    ASSERT_NEAR(got, want, tolerance * (1.0 + std::abs(want))) << p.ToString() << " element " << i;
  }
}

// Random A, B and C in [-1, 1]; C all NaN when beta = 0, which must then never be read.
template <typename T>
void FillOperands(std::mt19937& rng, T beta, std::vector<T>& a, std::vector<T>& b,
                  std::vector<T>& c) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (T& x : a) x = static_cast<T>(dist(rng));
  for (T& x : b) x = static_cast<T>(dist(rng));
  for (T& x : c) x = beta == T(0) ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(dist(rng));
}

template <typename T>
void ExpectMatchesReference(Runtime& runtime, const Problem& p, T alpha, T beta) {
  const auto [lda, a_elements] = Padded(p, p.m, p.k, p.trans_a);
  const auto [ldb, b_elements] = Padded(p, p.k, p.n, p.trans_b);
  const auto [ldc, c_elements] = Padded(p, p.m, p.n, Trans::kNo);
  std::mt19937 rng(static_cast<unsigned>(p.m * 131 + p.n * 7 + p.k));
  std::vector<T> a(a_elements);
  std::vector<T> b(b_elements);
  std::vector<T> c(c_elements);
  FillOperands(rng, beta, a, b, c);
  std::vector<T> expected = c;
  ASSERT_TRUE(ReferenceGemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha, a.data(), lda,
                            b.data(), ldb, beta, expected.data(), ldc));
  const Status status = runtime.Gemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha,
                                     a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  ASSERT_TRUE(status) << status.error().message;
  ExpectCloseToReference(c, expected, p);
}

TEST_F(RuntimeTest, TiersOnARealDbAndCorrectResultsInEach) {
  const Problem tuned = MakeProblem(48, 80, 100);
  const KernelConfig config = MarkedConfig(tuned, machine_);
  auto runtime = Open(MakeDb("tiers.db", {Winner(tuned, config, 42.0, machine_.fingerprint)}));
  ASSERT_NE(runtime, nullptr);
  EXPECT_EQ(runtime->winners_loaded(), 1u);
  EXPECT_EQ(runtime->max_threads(), 1);

  const LookupReport exact = runtime->Lookup(tuned);
  EXPECT_EQ(exact.tier, LookupTier::kExact);
  EXPECT_EQ(exact.config_text, config.ToString());
  EXPECT_EQ(exact.gflops, 42.0);
  EXPECT_EQ(runtime->Lookup(MakeProblem(40, 90, 110)).tier, LookupTier::kNearest);
  EXPECT_EQ(runtime->Lookup(MakeProblem(48, 80, 100, 1, DType::kF64)).tier, LookupTier::kDefault);

  for (const Problem& p : {tuned, MakeProblem(40, 90, 110), MakeProblem(13, 7, 29),
                           MakeProblem(1, 300, 77), MakeProblem(77, 1, 300)}) {
    ExpectMatchesReference<float>(*runtime, p, 1.0f, 0.0f);
    ExpectMatchesReference<float>(*runtime, p, -1.5f, 0.5f);
  }
}

// The runtime sizes its defaults with the effective last-level cache the DB's peaks of this
// machine measured: a GEMV matrix just under hwloc's L3 share streams four rows, and eight
// once the tune measured a cache a quarter of that (docs/analytical-model.md, step 1).
TEST_F(RuntimeTest, DefaultsAskTheEffectiveLlcStoredWithThePeaks) {
  const Problem gemv = GemvUnderTheLlcShare();
  auto rows = [&](const std::string& db) {
    const LookupReport report = Open(db)->Lookup(gemv);
    EXPECT_EQ(report.tier, LookupTier::kDefault);
    const auto config = nlohmann::json::parse(report.config_json);
    EXPECT_EQ(config.at("family"), "gemv") << report.config_text;
    return config.at("mr").get<int>();
  };
  EXPECT_EQ(rows(MakeDb("hwloc.db", {})), 4);
  const std::string measured = Path("measured.db");
  StoreQuarterOfTheLlc(measured);
  EXPECT_EQ(rows(measured), 8);
}

// Without the DB's winners (RuntimeOptions::use_winners, `mmtune bench`'s default rows) a tuned
// shape runs the default, still sized by the facts the DB measured of this machine.
TEST_F(RuntimeTest, WithoutWinnersTheDefaultsStillTakeTheMeasuredFacts) {
  const Problem tuned = MakeProblem(48, 80, 100);
  const std::string db =
      MakeDb("winners.db", {Winner(tuned, MarkedConfig(tuned, machine_), 42.0,
                                   machine_.fingerprint)});
  StoreQuarterOfTheLlc(db);
  auto with = Open(db);
  auto without = Open(db, 1, "", false);
  ASSERT_NE(with, nullptr);
  ASSERT_NE(without, nullptr);
  EXPECT_EQ(with->winners_loaded(), 1u);
  EXPECT_EQ(with->Lookup(tuned).tier, LookupTier::kExact);
  EXPECT_EQ(without->winners_loaded(), 0u);
  EXPECT_EQ(without->Lookup(tuned).tier, LookupTier::kDefault);
  const LookupReport report = without->Lookup(GemvUnderTheLlcShare());
  EXPECT_EQ(report.tier, LookupTier::kDefault);
  const auto config = nlohmann::json::parse(report.config_json);
  EXPECT_EQ(config.at("mr"), 8) << report.config_text;
  ExpectMatchesReference<float>(*without, tuned, 1.0f, 0.0f);
}

TEST_F(RuntimeTest, EveryLayoutAndTransposeInBothDtypes) {
  auto runtime = Open("");
  ASSERT_NE(runtime, nullptr);
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        ExpectMatchesReference<float>(
            *runtime, MakeProblem(37, 53, 41, 1, DType::kF32, layout, ta, tb), 0.75f, 0.0f);
        ExpectMatchesReference<double>(
            *runtime, MakeProblem(37, 53, 41, 1, DType::kF64, layout, ta, tb), 1.0, -1.0);
      }
    }
  }
}

// The low-precision GEMMs through the runtime against their reference on padded operands: s8
// bit for bit (random bytes and C, so results wrap), bf16 within the f32 accumulation bound, a
// NaN C with beta = 0 never read, and padding never written.
template <class Kind>
void ExpectLowpMatchesReference(Runtime& runtime, const Problem& p, typename Kind::Scalar alpha,
                                typename Kind::Scalar beta) {
  using C = typename Kind::C;
  const auto [lda, a_elements] = Padded(p, p.m, p.k, p.trans_a);
  const auto [ldb, b_elements] = Padded(p, p.k, p.n, p.trans_b);
  const auto [ldc, c_elements] = Padded(p, p.m, p.n, Trans::kNo);
  std::mt19937 rng(static_cast<unsigned>(p.m * 131 + p.n * 7 + p.k));
  std::vector<typename Kind::A> a(a_elements);
  std::vector<typename Kind::B> b(b_elements);
  std::vector<C> c(c_elements);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
    for (BFloat16& x : a) x = ToBFloat16(unit(rng));
    for (BFloat16& x : b) x = ToBFloat16(unit(rng));
    for (float& x : c) x = beta == 0.0f ? std::numeric_limits<float>::quiet_NaN() : unit(rng);
  } else {
    for (std::uint8_t& x : a) x = static_cast<std::uint8_t>(rng());
    for (std::int8_t& x : b) x = static_cast<std::int8_t>(rng());
    for (std::int32_t& x : c) x = static_cast<std::int32_t>(rng());
  }
  std::vector<C> expected = c;
  ASSERT_TRUE(ReferenceLowpGemm<Kind>(GemmArgs<Kind>{p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k,
                                                     alpha, a.data(), lda, b.data(), ldb, beta,
                                                     expected.data(), ldc, {}}));
  const Status status = runtime.Gemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha, a.data(),
                                     lda, b.data(), ldb, beta, c.data(), ldc);
  ASSERT_TRUE(status) << status.error().message;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if constexpr (std::is_same_v<Kind, Bf16Gemm>) {
      if (std::isnan(expected[i])) {
        ASSERT_TRUE(std::isnan(c[i])) << p.ToString() << " padding element " << i;
        continue;
      }
      const double bound = 4.0 * (p.k + 4) * std::numeric_limits<float>::epsilon() *
                           (static_cast<double>(p.k) + 1.0);
      ASSERT_NEAR(c[i], expected[i], bound) << p.ToString() << " element " << i;
    } else {
      ASSERT_EQ(c[i], expected[i]) << p.ToString() << " element " << i;
    }
  }
}

TEST_F(RuntimeTest, LowPrecisionGemmsInEveryTierLayoutAndTranspose) {
  const Problem bf16 = MakeProblem(96, 160, 200, 1, DType::kBF16);
  const Problem s8 = MakeProblem(64, 48, 300, 1, DType::kS8, Layout::kColMajor, Trans::kYes);
  KernelConfig bf16_config = ModelConfig(bf16, machine_);
  bf16_config.kc = 64;  // visibly not the default
  KernelConfig s8_config = ModelConfig(s8, machine_);
  s8_config.kc = 128;
  auto runtime = Open(MakeDb("lowp.db", {Winner(bf16, bf16_config, 30.0, machine_.fingerprint),
                                         Winner(s8, s8_config, 40.0, machine_.fingerprint)}));
  ASSERT_NE(runtime, nullptr);
  EXPECT_EQ(runtime->winners_loaded(), 2u);
  const LookupReport exact = runtime->Lookup(bf16);
  EXPECT_EQ(exact.tier, LookupTier::kExact);
  EXPECT_EQ(exact.config_text, bf16_config.ToString());
  EXPECT_EQ(runtime->Lookup(s8).tier, LookupTier::kExact);
  Problem near = s8;
  near.m = 60;
  EXPECT_EQ(runtime->Lookup(near).tier, LookupTier::kNearest);
  Problem other = bf16;
  other.dtype = DType::kS8;
  EXPECT_EQ(runtime->Lookup(other).tier, LookupTier::kDefault);

  for (const Problem& p : {bf16, MakeProblem(90, 150, 210, 1, DType::kBF16),
                           MakeProblem(1, 33, 17, 1, DType::kBF16)}) {
    ExpectLowpMatchesReference<Bf16Gemm>(*runtime, p, 1.0f, 0.0f);
    ExpectLowpMatchesReference<Bf16Gemm>(*runtime, p, -1.5f, 0.5f);
  }
  for (const Problem& p : {s8, near, MakeProblem(13, 7, 29, 1, DType::kS8)}) {
    ExpectLowpMatchesReference<S8Gemm>(*runtime, p, 1, 0);
    ExpectLowpMatchesReference<S8Gemm>(*runtime, p, -3, 2);
  }
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        ExpectLowpMatchesReference<Bf16Gemm>(
            *runtime, MakeProblem(37, 53, 41, 1, DType::kBF16, layout, ta, tb), 0.75f, 0.0f);
        ExpectLowpMatchesReference<S8Gemm>(
            *runtime, MakeProblem(37, 53, 41, 1, DType::kS8, layout, ta, tb), 5, -1);
      }
    }
  }
}

TEST_F(RuntimeTest, EdgeArgumentsFollowBlas) {
  auto runtime = Open("");
  ASSERT_NE(runtime, nullptr);
  float c[4] = {1, 2, 3, 4};
  const float a[4] = {1, 1, 1, 1};
  // K = 0: C = beta * C.
  ASSERT_TRUE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 0, 1.0f, a, 1, a, 2,
                            2.0f, c, 2));
  EXPECT_EQ(c[3], 8.0f);
  // M = 0: nothing at all, even with null operands.
  ASSERT_TRUE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 0, 2, 2, 1.0f,
                            static_cast<const float*>(nullptr), 2, nullptr, 2, 0.0f, nullptr, 2));
  // A bad leading dimension is an error and writes nothing.
  const Status bad = runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 2, 1.0f, a,
                                   1, a, 2, 0.0f, c, 2);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("lda"), std::string::npos) << bad.error().message;
  EXPECT_EQ(c[3], 8.0f);
}

TEST_F(RuntimeTest, OpenReportsMissingAndForeignFiles) {
  RuntimeOptions options;
  options.db_path = Path("missing.db");
  auto missing = Runtime::Open(options);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, ErrorCode::kNotFound);

  std::ofstream(Path("text.db")) << "not a database at all\n";
  options.db_path = Path("text.db");
  auto foreign = Runtime::Open(options);
  ASSERT_FALSE(foreign);
  EXPECT_EQ(foreign.error().code, ErrorCode::kCorrupt);
}

// Raw SQL, as a foreign tool or an attacker would write it.
void ExecSql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message), SQLITE_OK)
      << (message != nullptr ? message : "") << "\n" << sql;
  sqlite3_free(message);
  sqlite3_close(db);
}

TEST_F(RuntimeTest, HostileDbContentsAreSkippedNeverFatal) {
  // Five winners, then four of their configs are vandalised in place.
  std::vector<WinnerRecord> winners;
  for (int i = 0; i < 5; ++i) {
    const Problem p = MakeProblem(64 + 16 * i, 64, 64);
    winners.push_back(Winner(p, MarkedConfig(p, machine_), 30.0 + i, machine_.fingerprint));
  }
  const std::string db = MakeDb("hostile.db", winners);
  ExecSql(db,
          "UPDATE configs SET json = 'this is not json' WHERE id = 1;"
          "UPDATE configs SET json = '{\"family\": 17, \"mr\": \"six\"}' WHERE id = 2;"
          "UPDATE configs SET json = replace(json, '\"mr\":', '\"mr\":4000000,\"was_mr\":') "
          "WHERE id = 3;"
          "UPDATE configs SET json = replace(json, '\"isa\":\"', '\"isa\":\"sse9') WHERE id = 4;");
  ExecSql(db, "UPDATE winners SET gflops = 'fast' WHERE problem_id = 5;");
  auto runtime = Open(db);
  ASSERT_NE(runtime, nullptr);
  EXPECT_LT(runtime->winners_loaded(), 5u);
  // Whatever survived, every shape still computes correctly.
  for (const WinnerRecord& winner : winners) {
    ExpectMatchesReference<float>(*runtime, winner.problem, 1.0f, 1.0f);
  }
}

TEST_F(RuntimeTest, WinnersOfOtherMachinesNeedAllowCompatible) {
  const Machine& host = machine_;
  // A sibling: another CPU model (so another fingerprint), same ISA and caches.
  CpuFeatures sibling_cpu = host.cpu;
  sibling_cpu.model = host.cpu.model + 1;
  const Machine sibling = DescribeMachine(sibling_cpu, host.topology, host.isa_cap);
  ASSERT_NE(sibling.fingerprint, host.fingerprint);
  // A machine with a different L2 is not compatible.
  Topology other_topology = host.topology;
  for (CacheLevel& cache : other_topology.caches) {
    if (cache.level == 2) cache.size_bytes *= 2;
  }
  CpuFeatures other_cpu = host.cpu;
  other_cpu.model = host.cpu.model + 2;
  const Machine other = DescribeMachine(other_cpu, other_topology, host.isa_cap);

  const Problem p = MakeProblem(100, 100, 100);
  const std::string db = MakeDb("sibling.db", {Winner(p, MarkedConfig(p, host), 40.0, sibling.fingerprint)},
                                &sibling);
  {
    auto store = TuningStore::Open(db, DbOpenMode::kReadWrite);
    ASSERT_TRUE(store);
    auto other_id = store->UpsertMachine(other, nullptr);
    ASSERT_TRUE(other_id);
    const Problem q = MakeProblem(200, 200, 200);
    auto problem_id = store->UpsertProblem(q);
    ASSERT_TRUE(problem_id);
    ASSERT_TRUE(store->SetWinner(*other_id, *problem_id, 0,
                                 Winner(q, MarkedConfig(q, host), 40.0, other.fingerprint)));
  }
  auto strict = Open(db);
  ASSERT_NE(strict, nullptr);
  EXPECT_EQ(strict->winners_loaded(), 0u);
  EXPECT_EQ(strict->Lookup(p).tier, LookupTier::kDefault);

  RuntimeOptions options;
  options.db_path = db;
  options.max_threads = 1;
  options.allow_compatible = true;
  auto lenient = Runtime::Open(options);
  ASSERT_TRUE(lenient);
  EXPECT_EQ((*lenient)->winners_loaded(), 1u);  // the sibling's, not the other L2's
  EXPECT_EQ((*lenient)->Lookup(p).tier, LookupTier::kExact);
  EXPECT_EQ((*lenient)->Lookup(MakeProblem(120, 120, 120)).tier, LookupTier::kNearest);
}

TEST_F(RuntimeTest, NumThreadsEnvironmentCapsTheRuntime) {
  ::setenv("MMTUNE_NUM_THREADS", "1", 1);
  auto runtime = Open("", 0);
  ::unsetenv("MMTUNE_NUM_THREADS");
  ASSERT_NE(runtime, nullptr);
  EXPECT_EQ(runtime->max_threads(), 1);
  EXPECT_EQ(runtime->Lookup(MakeProblem(2048, 2048, 2048)).threads, 1);
}

// ---- Fixed problems (Runtime::Bind). ----

// Binds `p` with `alpha` and `beta` and runs it on two random operand sets (padded leading
// dimensions, NaN in C when beta = 0): each result must be bit-identical to Runtime::Gemm's on
// the same operands and close to the reference's.
template <typename T>
void ExpectFixedMatchesGemm(Runtime& runtime, const Problem& p, T alpha, T beta,
                            LookupTier tier) {
  const auto [lda, a_elements] = Padded(p, p.m, p.k, p.trans_a);
  const auto [ldb, b_elements] = Padded(p, p.k, p.n, p.trans_b);
  const auto [ldc, c_elements] = Padded(p, p.m, p.n, Trans::kNo);
  auto fixed =
      runtime.Bind(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha, lda, ldb, beta, ldc);
  ASSERT_TRUE(fixed) << p.ToString() << ": " << fixed.error().message;
  EXPECT_EQ(fixed->lookup().tier, tier) << p.ToString();
  EXPECT_EQ(fixed->lookup().config_text, runtime.Lookup(p).config_text) << p.ToString();

  std::mt19937 rng(static_cast<unsigned>(p.m * 31 + p.n * 17 + p.k));
  for (int set = 0; set < 2; ++set) {
    std::vector<T> a(a_elements);
    std::vector<T> b(b_elements);
    std::vector<T> c(c_elements);
    FillOperands(rng, beta, a, b, c);
    std::vector<T> expected = c;
    ASSERT_TRUE(ReferenceGemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha, a.data(),
                              lda, b.data(), ldb, beta, expected.data(), ldc));
    std::vector<T> via_gemm = c;
    ASSERT_TRUE(runtime.Gemm(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha, a.data(), lda,
                             b.data(), ldb, beta, via_gemm.data(), ldc));
    ASSERT_TRUE(fixed->Run(a.data(), b.data(), c.data()).ok());
    ExpectCloseToReference(c, expected, p);
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (std::isnan(via_gemm[i])) {
        ASSERT_TRUE(std::isnan(c[i])) << p.ToString() << " element " << i;
      } else {
        ASSERT_EQ(c[i], via_gemm[i]) << p.ToString() << " set " << set << " element " << i;
      }
    }
  }
}

TEST_F(RuntimeTest, FixedGemmsRunWhatGemmRunsInEveryTier) {
  const Problem tuned = MakeProblem(48, 80, 100);
  // Small problems borrow from small ones (direct winners are lent within 2x of their shape).
  const Problem tuned_small = MakeProblem(12, 10, 20);
  const Problem tuned_no_k = MakeProblem(8, 8, 1);
  const Problem tuned_f64 = MakeProblem(40, 24, 56, 1, DType::kF64, Layout::kColMajor,
                                        Trans::kYes, Trans::kNo);
  auto runtime = Open(MakeDb(
      "fixed.db",
      {Winner(tuned, MarkedConfig(tuned, machine_), 42.0, machine_.fingerprint),
       Winner(tuned_small, MarkedConfig(tuned_small, machine_), 30.0, machine_.fingerprint),
       Winner(tuned_no_k, MarkedConfig(tuned_no_k, machine_), 5.0, machine_.fingerprint),
       Winner(tuned_f64, MarkedConfig(tuned_f64, machine_), 21.0, machine_.fingerprint)}));
  ASSERT_NE(runtime, nullptr);
  struct Case {
    Problem problem;
    LookupTier tier;
  };
  const std::vector<Case> cases = {
      {tuned, LookupTier::kExact},
      {MakeProblem(40, 90, 110), LookupTier::kNearest},
      {MakeProblem(16, 16, 16), LookupTier::kNearest},
      {MakeProblem(13, 7, 29), LookupTier::kNearest},
      {MakeProblem(1, 300, 77), LookupTier::kDefault},  // a vector shape borrows no matrix winner
      {MakeProblem(8, 8, 0), LookupTier::kNearest},     // K = 0: C = beta * C
      {tuned_f64, LookupTier::kExact},
      {MakeProblem(16, 16, 16, 1, DType::kF64), LookupTier::kDefault},
  };
  for (const Case& item : cases) {
    if (item.problem.dtype == DType::kF32) {
      ExpectFixedMatchesGemm<float>(*runtime, item.problem, 1.0f, 0.0f, item.tier);
      ExpectFixedMatchesGemm<float>(*runtime, item.problem, -1.5f, 0.625f, item.tier);
      ExpectFixedMatchesGemm<float>(*runtime, item.problem, 0.0f, 2.0f, item.tier);
    } else {
      ExpectFixedMatchesGemm<double>(*runtime, item.problem, 1.0, 0.0, item.tier);
      ExpectFixedMatchesGemm<double>(*runtime, item.problem, -1.5, 0.625, item.tier);
    }
  }
  // Each tuned problem lends its winner to the problems of its own dtype, layout and transposes.
  auto tier_of = [&](const Problem& p) {
    const Problem& same_kind = p.dtype == DType::kF32 ? tuned : tuned_f64;
    return p.layout == same_kind.layout && p.trans_a == same_kind.trans_a &&
                   p.trans_b == same_kind.trans_b
               ? LookupTier::kNearest
               : LookupTier::kDefault;
  };
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        const Problem f32 = MakeProblem(37, 53, 61, 1, DType::kF32, layout, ta, tb);
        const Problem f64 = MakeProblem(23, 33, 29, 1, DType::kF64, layout, ta, tb);
        ExpectFixedMatchesGemm<float>(*runtime, f32, 0.75f, 0.0f, tier_of(f32));
        ExpectFixedMatchesGemm<double>(*runtime, f64, 1.0, -1.0, tier_of(f64));
      }
    }
  }
}

TEST_F(RuntimeTest, FixedGemmsFailWhereGemmFailsAndDoNothingWhereItDoesNothing) {
  auto runtime = Open("");
  ASSERT_NE(runtime, nullptr);
  float c[4] = {1, 2, 3, 4};
  const float a[4] = {1, 1, 1, 1};
  const Status bad_gemm = runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 2, 1.0f,
                                        a, 1, a, 2, 0.0f, c, 2);
  ASSERT_FALSE(bad_gemm);
  auto bad_lda = runtime->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 2, 1.0f, 1, 2,
                               0.0f, 2);
  ASSERT_FALSE(bad_lda);
  EXPECT_EQ(bad_lda.error().message, bad_gemm.error().message);
  EXPECT_EQ(bad_lda.error().code, ErrorCode::kInvalidArgument);

  auto negative = runtime->Bind(Layout::kColMajor, Trans::kNo, Trans::kNo, 2, -1, 2, 1.0, 2, 2,
                                0.0, 2);
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("N = -1"), std::string::npos)
      << negative.error().message;
  EXPECT_FALSE(runtime->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, 0, 2, 2, 1.0f, 2, 2, 0.0f,
                             1));  // ldc < N, even with M = 0, as Gemm

  // M = 0 or N = 0: nothing at all, even with null operands; the lookup says nothing runs.
  for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{0, 2}, {2, 0}}) {
    auto empty = runtime->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, 2, 1.0f, 2,
                               std::max<std::int64_t>(n, 1), 0.0f, std::max<std::int64_t>(n, 1));
    ASSERT_TRUE(empty) << empty.error().message;
    EXPECT_EQ(empty->lookup().config_text, "");
    EXPECT_TRUE(empty->Run(nullptr, nullptr, nullptr).ok());
  }
  // K = 0 scales C.
  auto scale = runtime->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, 2, 2, 0, 1.0f, 1, 2,
                             2.0f, 2);
  ASSERT_TRUE(scale) << scale.error().message;
  ASSERT_TRUE(scale->Run(a, a, c).ok());
  EXPECT_EQ(c[0], 2.0f);
  EXPECT_EQ(c[3], 8.0f);

  // Moving keeps the bound problem.
  FixedGemm<float> moved = std::move(*scale);
  ASSERT_TRUE(moved.Run(a, a, c).ok());
  EXPECT_EQ(c[3], 16.0f);
}

TEST_F(RuntimeTest, FixedGemmsOutliveTheirRuntimeAndAreRecorded) {
  const Problem tuned = MakeProblem(64, 64, 64);
  const std::string db = MakeDb("fixed_record.db", {Winner(tuned, MarkedConfig(tuned, machine_),
                                                           40.0, machine_.fingerprint)});
  const std::string record = Path("fixed_calls.json");
  std::vector<float> a(200 * 200, 1.0f), b(200 * 200, 1.0f), c(200 * 200, 0.0f);
  std::optional<FixedGemm<float>> exact;
  std::optional<FixedGemm<float>> nearest;
  {
    auto runtime = Open(db, 1, record);
    ASSERT_NE(runtime, nullptr);
    auto bound_exact = runtime->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, 64, 64, 64, 1.0f,
                                     64, 64, 0.0f, 64);
    auto bound_nearest = runtime->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, 100, 120, 140,
                                       1.0f, 140, 120, 0.0f, 120);
    ASSERT_TRUE(bound_exact && bound_nearest);
    exact.emplace(std::move(*bound_exact));
    nearest.emplace(std::move(*bound_nearest));
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(exact->Run(a.data(), b.data(), c.data()).ok());
      ASSERT_TRUE(nearest->Run(a.data(), b.data(), c.data()).ok());
    }
    ASSERT_TRUE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 100, 120, 140, 1.0f,
                              a.data(), 140, b.data(), 120, 0.0f, c.data(), 120));
  }  // closing writes the file

  // The runtime is gone; its fixed problems still compute (and are no longer counted).
  std::fill(c.begin(), c.end(), -1.0f);
  ASSERT_TRUE(nearest->Run(a.data(), b.data(), c.data()).ok());
  for (std::int64_t i = 0; i < 100 * 120; ++i) ASSERT_EQ(c[i], 140.0f) << i;
  EXPECT_EQ(c[100 * 120], -1.0f);
  ASSERT_TRUE(exact->Run(a.data(), b.data(), c.data()).ok());
  for (std::int64_t i = 0; i < 64 * 64; ++i) ASSERT_EQ(c[i], 64.0f) << i;

  auto recorded = ReadRecordFile(record);
  ASSERT_TRUE(recorded) << recorded.error().message;
  ASSERT_EQ(recorded->size(), 1u);  // the exact winner's calls are not recorded
  EXPECT_EQ((*recorded)[0].problem, MakeProblem(100, 120, 140));
  EXPECT_EQ((*recorded)[0].calls, 4u);  // three fixed calls and one Gemm, before the close
  EXPECT_GT((*recorded)[0].seconds, 0.0);
}

TEST_F(RuntimeTest, FixedGemmsOnThePoolFromConcurrentCallers) {
  auto runtime = Open("", 0);  // every core: big enough problems take the pool
  ASSERT_NE(runtime, nullptr);
  const std::int64_t m = 300, n = 280, k = 260;
  auto fixed = runtime->Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1.0f, k, n,
                             0.0f, n);
  ASSERT_TRUE(fixed) << fixed.error().message;
  EXPECT_EQ(fixed->lookup().threads, runtime->max_threads());
  const std::vector<float> a(static_cast<std::size_t>(m * k), 0.5f);
  const std::vector<float> b(static_cast<std::size_t>(k * n), 0.25f);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      std::vector<float> c(static_cast<std::size_t>(m * n));
      for (int i = 0; i < 4; ++i) {
        std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
        ASSERT_TRUE(fixed->Run(a.data(), b.data(), c.data()).ok());
        for (float x : c) {
          if (x != 0.125f * static_cast<float>(k)) {
            ++failures;
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(RuntimeTest, ConcurrentCallersGetCorrectResults) {
  // Every core allowed, so multi-threaded plans contend for the pool.
  auto runtime = Open("", 0);
  ASSERT_NE(runtime, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 6; ++i) {
        const std::int64_t size = 40 + 37 * ((t + i) % 4);
        const Problem p = MakeProblem(size * 2, size, size + 5);
        std::vector<float> a(static_cast<std::size_t>(p.m * p.k), 0.5f);
        std::vector<float> b(static_cast<std::size_t>(p.k * p.n), 0.25f);
        std::vector<float> c(static_cast<std::size_t>(p.m * p.n), -1.0f);
        if (!runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k, 1.0f,
                           a.data(), p.k, b.data(), p.n, 0.0f, c.data(), p.n)) {
          ++failures;
          continue;
        }
        const float want = 0.125f * static_cast<float>(p.k);
        for (float x : c) {
          if (std::abs(x - want) > 1e-4f * want) {
            ++failures;
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

// With every core held by spinning threads, the team of a multi-threaded plan runs late and the
// runtime switches problems to the calling thread alone and back (TeamOrAlone); every call, in
// either mode and in the switch, computes each element once: results against the reference,
// with beta = 0 over NaN and the padding of every leading dimension checked.
TEST_F(RuntimeTest, CoresHeldByOtherWorkStillGiveCorrectResults) {
  auto runtime = Open("", 0);
  ASSERT_NE(runtime, nullptr);
  std::atomic<bool> stop{false};
  std::vector<std::thread> hogs;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i) {
    hogs.emplace_back([&stop] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  }
  const Problem p = MakeProblem(150, 140, 130, runtime->max_threads());
  for (int call = 0; call < 3 * static_cast<int>(TeamOrAlone::kMinExplore); ++call) {
    ExpectMatchesReference<float>(*runtime, p, call % 2 == 0 ? 1.0f : -0.5f,
                                  call % 3 == 0 ? 0.0f : 1.5f);
  }
  auto fixed = runtime->Bind<float>(Layout::kRowMajor, Trans::kNo, Trans::kNo, p.m, p.n, p.k,
                                    1.0f, p.k, p.n, 0.0f, p.n);
  ASSERT_TRUE(fixed.ok());
  std::vector<float> a(static_cast<std::size_t>(p.m * p.k), 0.5f);
  std::vector<float> b(static_cast<std::size_t>(p.k * p.n), 0.25f);
  for (int call = 0; call < 3 * static_cast<int>(TeamOrAlone::kMinExplore); ++call) {
    std::vector<float> c(static_cast<std::size_t>(p.m * p.n),
                         std::numeric_limits<float>::quiet_NaN());
    ASSERT_TRUE(fixed->Run(a.data(), b.data(), c.data()).ok());
    for (float x : c) ASSERT_EQ(x, 0.125f * static_cast<float>(p.k)) << "call " << call;
  }
  stop = true;
  for (std::thread& hog : hogs) hog.join();
}

TEST_F(RuntimeTest, RecordsUntunedProblemsAndMergesAcrossRuns) {
  const Problem tuned = MakeProblem(64, 64, 64);
  const std::string db = MakeDb("record.db", {Winner(tuned, MarkedConfig(tuned, machine_), 40.0,
                                                     machine_.fingerprint)});
  const std::string record = Path("calls.json");
  std::vector<float> a(200 * 200, 1.0f), b(200 * 200, 1.0f), c(200 * 200, 0.0f);
  auto run = [&](Runtime& runtime, std::int64_t m, std::int64_t n, std::int64_t k, int times) {
    for (int i = 0; i < times; ++i) {
      ASSERT_TRUE(runtime.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1.0f,
                               a.data(), k, b.data(), n, 0.0f, c.data(), n));
    }
  };
  for (int round = 0; round < 2; ++round) {
    auto runtime = Open(db, 1, record);
    ASSERT_NE(runtime, nullptr);
    run(*runtime, 64, 64, 64, 5);     // exact winner: not recorded
    run(*runtime, 100, 120, 140, 3);  // nearest
    run(*runtime, 7, 9, 11, 2);       // nearest as well (f32 row NN)
  }  // closing writes the file
  auto recorded = ReadRecordFile(record);
  ASSERT_TRUE(recorded) << recorded.error().message;
  ASSERT_EQ(recorded->size(), 2u);
  for (const RecordedProblem& item : *recorded) {
    EXPECT_NE(item.problem, tuned);
    EXPECT_GT(item.seconds, 0.0);
    if (item.problem.m == 100) {
      EXPECT_EQ(item.calls, 6u);
      EXPECT_EQ(item.problem.n, 120);
      EXPECT_EQ(item.problem.k, 140);
    } else {
      EXPECT_EQ(item.problem.m, 7);
      EXPECT_EQ(item.calls, 4u);
    }
  }
  EXPECT_GE((*recorded)[0].seconds, (*recorded)[1].seconds);  // most time first
}

TEST_F(RuntimeTest, RecordingNeverOverwritesAFileItCannotRead) {
  const std::string record = Path("precious.json");
  std::ofstream(record) << "{\"my\": \"data\"}\n";
  {
    auto runtime = Open("", 1, record);
    ASSERT_NE(runtime, nullptr);
    std::vector<float> a(9, 1.0f), c(9, 0.0f);
    ASSERT_TRUE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 3, 3, 3, 1.0f, a.data(),
                              3, a.data(), 3, 0.0f, c.data(), 3));
    const Status flushed = runtime->FlushRecord();
    ASSERT_FALSE(flushed);
    EXPECT_EQ(flushed.error().code, ErrorCode::kCorrupt);
  }
  std::ifstream in(record);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "{\"my\": \"data\"}\n");
}

TEST_F(RuntimeTest, RecordEnvironmentVariableTurnsRecordingOn) {
  const std::string record = Path("env.json");
  ::setenv("MMTUNE_RECORD", record.c_str(), 1);
  {
    auto runtime = Open("", 1);
    ::unsetenv("MMTUNE_RECORD");
    ASSERT_NE(runtime, nullptr);
    std::vector<double> a(16, 1.0), c(16, 0.0);
    ASSERT_TRUE(runtime->Gemm(Layout::kColMajor, Trans::kYes, Trans::kNo, 4, 4, 4, 1.0, a.data(),
                              4, a.data(), 4, 0.0, c.data(), 4));
  }
  auto recorded = ReadRecordFile(record);
  ASSERT_TRUE(recorded) << recorded.error().message;
  ASSERT_EQ(recorded->size(), 1u);
  EXPECT_EQ((*recorded)[0].problem.dtype, DType::kF64);
  EXPECT_EQ((*recorded)[0].problem.layout, Layout::kColMajor);
  EXPECT_EQ((*recorded)[0].problem.trans_a, Trans::kYes);
}

TEST_F(RuntimeTest, RecordFileRejectsForeignContent) {
  for (const std::string& text :
       {std::string("[]"), std::string("{\"mmtune_record\": 1}"),
        std::string("{\"mmtune_record\": 1, \"problems\": [{\"dtype\": \"f16\"}]}"),
        std::string("{\"mmtune_record\": 1, \"problems\": [{\"dtype\": \"f32\", \"layout\": "
                    "\"row\", \"trans\": \"NN\", \"m\": -4, \"n\": 1, \"k\": 1, \"threads\": 1, "
                    "\"calls\": 1, \"seconds\": 1}]}")}) {
    std::ofstream(Path("bad.json"), std::ios::trunc) << text;
    auto read = ReadRecordFile(Path("bad.json"));
    ASSERT_FALSE(read) << text;
    EXPECT_EQ(read.error().code, ErrorCode::kCorrupt) << text;
  }
  std::ofstream(Path("newer.json"), std::ios::trunc) << "{\"mmtune_record\": 9, \"problems\": []}";
  auto newer = ReadRecordFile(Path("newer.json"));
  ASSERT_FALSE(newer);
  EXPECT_EQ(newer.error().code, ErrorCode::kUnsupported);
  EXPECT_EQ(ReadRecordFile(Path("none.json")).error().code, ErrorCode::kNotFound);
}

// ---- The C API. ----

TEST_F(RuntimeTest, CApiComputesAndReportsErrors) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(Path("missing.db").c_str(), &runtime), MMTUNE_NOT_FOUND);
  EXPECT_EQ(runtime, nullptr);
  EXPECT_NE(std::string(mmtune_last_error()).find("missing.db"), std::string::npos);

  mmtune_options options;
  mmtune_options_init(&options);
  options.max_threads = 1;
  ASSERT_EQ(mmtune_open_with_options(&options, &runtime), MMTUNE_OK) << mmtune_last_error();
  ASSERT_NE(runtime, nullptr);
  const float a[6] = {1, 2, 3, 4, 5, 6};  // 2x3
  const float b[6] = {1, 0, 0, 1, 1, 1};  // 3x2
  float c[4] = {NAN, NAN, NAN, NAN};
  ASSERT_EQ(mmtune_sgemm(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2, 3,
                         1.0f, a, 3, b, 2, 0.0f, c, 2),
            MMTUNE_OK);
  EXPECT_EQ(c[0], 4.0f);
  EXPECT_EQ(c[1], 5.0f);
  EXPECT_EQ(c[2], 10.0f);
  EXPECT_EQ(c[3], 11.0f);
  EXPECT_EQ(mmtune_sgemm(runtime, 7, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2, 3, 1.0f, a, 3, b, 2,
                         0.0f, c, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("layout"), std::string::npos);
  EXPECT_EQ(mmtune_dgemm(runtime, MMTUNE_COL_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2, 2,
                         1.0, nullptr, 2, nullptr, 2, 0.0, nullptr, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(mmtune_sgemm(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, -1, 2, 3,
                         1.0f, a, 3, b, 2, 0.0f, c, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(c[3], 11.0f);
  EXPECT_EQ(mmtune_sgemm(nullptr, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2, 3,
                         1.0f, a, 3, b, 2, 0.0f, c, 2),
            MMTUNE_INVALID_ARGUMENT);
  mmtune_close(runtime);
  mmtune_close(nullptr);
}

TEST_F(RuntimeTest, CApiFixedGemms) {
  mmtune_options options;
  mmtune_options_init(&options);
  options.max_threads = 1;
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open_with_options(&options, &runtime), MMTUNE_OK) << mmtune_last_error();
  const float a[6] = {1, 2, 3, 4, 5, 6};  // 2x3
  const float b[6] = {1, 0, 0, 1, 1, 1};  // 3x2
  mmtune_fixed_sgemm* fixed = nullptr;
  ASSERT_EQ(mmtune_bind_sgemm(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2,
                              3, 2.0f, 3, 2, 0.0f, 2, &fixed),
            MMTUNE_OK)
      << mmtune_last_error();
  ASSERT_NE(fixed, nullptr);
  float c[4] = {NAN, NAN, NAN, NAN};
  ASSERT_EQ(mmtune_fixed_sgemm_run(fixed, a, b, c), MMTUNE_OK);
  EXPECT_EQ(c[0], 8.0f);
  EXPECT_EQ(c[1], 10.0f);
  EXPECT_EQ(c[2], 20.0f);
  EXPECT_EQ(c[3], 22.0f);
  EXPECT_EQ(mmtune_fixed_sgemm_run(fixed, a, nullptr, c), MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("B is NULL"), std::string::npos);
  EXPECT_EQ(mmtune_fixed_sgemm_run(fixed, a, b, nullptr), MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(mmtune_fixed_sgemm_run(nullptr, a, b, c), MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(c[3], 22.0f);

  // Column-major, A transposed, in f64; still usable after its runtime closed.
  mmtune_fixed_dgemm* fixed_d = nullptr;
  ASSERT_EQ(mmtune_bind_dgemm(runtime, MMTUNE_COL_MAJOR, MMTUNE_TRANS, MMTUNE_NO_TRANS, 2, 2, 3,
                              1.0, 3, 3, 1.0, 2, &fixed_d),
            MMTUNE_OK)
      << mmtune_last_error();
  mmtune_close(runtime);
  const double at[6] = {1, 2, 3, 4, 5, 6};  // op(A) = A^T: A stored 3x2 column-major
  const double bd[6] = {1, 0, 0, 0, 1, 0};  // 3x2 column-major: columns e1, e2
  double cd[4] = {10, 20, 30, 40};
  ASSERT_EQ(mmtune_fixed_dgemm_run(fixed_d, at, bd, cd), MMTUNE_OK);
  // op(A) row i is column i of the stored A: (1,2,3) and (4,5,6); C += op(A) * [e1 e2].
  EXPECT_EQ(cd[0], 11.0);
  EXPECT_EQ(cd[1], 24.0);
  EXPECT_EQ(cd[2], 32.0);
  EXPECT_EQ(cd[3], 45.0);

  // Binding fails where the GEMM would, naming the argument; nothing is returned.
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK);
  mmtune_fixed_sgemm* bad = nullptr;
  EXPECT_EQ(mmtune_bind_sgemm(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2,
                              3, 1.0f, 2, 2, 0.0f, 2, &bad),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(bad, nullptr);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_bind_sgemm: lda"), std::string::npos)
      << mmtune_last_error();
  EXPECT_EQ(mmtune_bind_sgemm(runtime, 3, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2, 3, 1.0f, 3, 2,
                              0.0f, 2, &bad),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("layout"), std::string::npos);
  EXPECT_EQ(mmtune_bind_sgemm(nullptr, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2,
                              3, 1.0f, 3, 2, 0.0f, 2, &bad),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(mmtune_bind_sgemm(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2,
                              3, 1.0f, 3, 2, 0.0f, 2, nullptr),
            MMTUNE_INVALID_ARGUMENT);
  // M = 0 binds and runs without any matrix.
  mmtune_fixed_sgemm* empty = nullptr;
  ASSERT_EQ(mmtune_bind_sgemm(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 0, 2,
                              3, 1.0f, 3, 2, 0.0f, 2, &empty),
            MMTUNE_OK);
  EXPECT_EQ(mmtune_fixed_sgemm_run(empty, nullptr, nullptr, nullptr), MMTUNE_OK);
  mmtune_close(runtime);
  mmtune_fixed_sgemm_free(fixed);
  mmtune_fixed_dgemm_free(fixed_d);
  mmtune_fixed_sgemm_free(empty);
  mmtune_fixed_sgemm_free(nullptr);
}

// mmtune_lookup_json: the lookup as JSON, snprintf-style (size 0 asks for the length, a short
// buffer is truncated and NUL-terminated), and one-line errors for bad arguments.
TEST(CApiTest, LookupJsonReportsTheTierAndTheConfig) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK);
  const std::int64_t length = mmtune_lookup_json(runtime, "bf16", MMTUNE_ROW_MAJOR,
                                                 MMTUNE_NO_TRANS, MMTUNE_TRANS, 64, 48, 32,
                                                 nullptr, 0);
  ASSERT_GT(length, 0) << mmtune_last_error();
  std::string text(static_cast<std::size_t>(length) + 1, 'x');
  ASSERT_EQ(mmtune_lookup_json(runtime, "bf16", MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_TRANS,
                               64, 48, 32, text.data(), length + 1),
            length);
  EXPECT_EQ(text[static_cast<std::size_t>(length)], '\0');
  text.resize(static_cast<std::size_t>(length));
  const nlohmann::json report = nlohmann::json::parse(text);
  EXPECT_EQ(report["tier"], "default");
  EXPECT_TRUE(report["tuned"].is_null());
  EXPECT_GE(report["threads"].get<int>(), 1);
  EXPECT_FALSE(report["config"].get<std::string>().empty());
  EXPECT_TRUE(report["config_json"].is_object());
  char short_buffer[8];
  EXPECT_EQ(mmtune_lookup_json(runtime, "bf16", MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_TRANS,
                               64, 48, 32, short_buffer, sizeof short_buffer),
            length);
  EXPECT_EQ(std::string(short_buffer), text.substr(0, 7));

  EXPECT_EQ(mmtune_lookup_json(runtime, "f16", MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS,
                               4, 4, 4, nullptr, 0),
            -1);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_lookup_json"), std::string::npos);
  EXPECT_EQ(mmtune_lookup_json(runtime, "f32", MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS,
                               -1, 4, 4, nullptr, 0),
            -1);
  EXPECT_EQ(mmtune_lookup_json(runtime, "f32", 7, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 4, 4, 4,
                               nullptr, 0),
            -1);
  EXPECT_NE(std::string(mmtune_last_error()).find("layout"), std::string::npos);
  mmtune_close(runtime);
}

// s8s8s32: the reference sums the signed products in 64 bits; the runtime must equal it modulo
// 2^32 (as u8s8s32 does) in every layout and transpose, with padded leading dimensions whose
// padding in C is never written, extreme values (-128 x -128 everywhere), a K long enough for
// the sums to wrap, alpha and beta that wrap, and the degenerate sizes.
TEST_F(RuntimeTest, SignedInt8GemmIsExactModulo2To32) {
  auto runtime = Open("", 0);
  ASSERT_NE(runtime, nullptr);
  struct Case {
    std::int64_t m, n, k;
    std::int32_t alpha, beta;
    bool extreme;
  };
  const std::vector<Case> cases = {
      {17, 29, 31, 1, 0, false},   {1, 37, 19, -3, 2, false},  {13, 1, 70, 7, -1, false},
      {64, 48, 100, 1, 1, false},  {5, 3, 1, 1, 0, false},     {3, 2, 140000, 1, 0, true},
      {7, 9, 300, 0x10001, 0x7fffffff, false},                 {0, 5, 3, 1, 1, false},
      {4, 0, 3, 1, 1, false},      {6, 5, 0, 2, 3, false},     {9, 8, 7, 0, -2, false}};
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(-128, 127);
  for (const Case& t : cases) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Trans ta : {Trans::kNo, Trans::kYes}) {
        for (Trans tb : {Trans::kNo, Trans::kYes}) {
          const Problem p = MakeProblem(t.m, t.n, t.k, 1, DType::kS8, layout, ta, tb);
          SCOPED_TRACE(p.ToString() + " alpha " + std::to_string(t.alpha) + " beta " +
                       std::to_string(t.beta));
          const auto [lda, a_elements] = Padded(p, p.m, p.k, ta);
          const auto [ldb, b_elements] = Padded(p, p.k, p.n, tb);
          const auto [ldc, c_elements] = Padded(p, p.m, p.n, Trans::kNo);
          std::vector<std::int8_t> a(a_elements), b(b_elements);
          for (std::int8_t& x : a) x = static_cast<std::int8_t>(t.extreme ? -128 : byte(rng));
          for (std::int8_t& x : b) x = static_cast<std::int8_t>(t.extreme ? -128 : byte(rng));
          std::vector<std::int32_t> c(c_elements);
          for (std::int32_t& x : c) x = static_cast<std::int32_t>(rng());
          std::vector<std::int32_t> expected = c;
          auto at = [&](const std::vector<std::int8_t>& v, std::int64_t ld, Trans trans,
                        std::int64_t row, std::int64_t col) {
            return static_cast<std::int64_t>(
                v[static_cast<std::size_t>(trans == Trans::kNo ? StoredOffset(layout, row, col, ld)
                                                               : StoredOffset(layout, col, row, ld))]);
          };
          for (std::int64_t i = 0; i < p.m; ++i) {
            for (std::int64_t j = 0; j < p.n; ++j) {
              std::int64_t sum = 0;
              for (std::int64_t q = 0; q < p.k; ++q) sum += at(a, lda, ta, i, q) * at(b, ldb, tb, q, j);
              std::int32_t& out = expected[static_cast<std::size_t>(StoredOffset(layout, i, j, ldc))];
              out = static_cast<std::int32_t>(static_cast<std::uint32_t>(t.alpha) *
                                                  static_cast<std::uint32_t>(sum) +
                                              static_cast<std::uint32_t>(t.beta) *
                                                  static_cast<std::uint32_t>(out));
            }
          }
          const Status status = runtime->Gemm(layout, ta, tb, p.m, p.n, p.k, t.alpha, a.data(),
                                              lda, b.data(), ldb, t.beta, c.data(), ldc);
          ASSERT_TRUE(status) << status.error().message;
          ASSERT_EQ(c, expected);
        }
      }
    }
  }
  // Bad arguments are refused before anything is written.
  std::vector<std::int8_t> a(16, 1), b(16, 1);
  std::vector<std::int32_t> c(16, 5);
  EXPECT_FALSE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, 1, a.data(), 3,
                             b.data(), 4, 0, c.data(), 4));
  EXPECT_FALSE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, -1, 4, 4, 1, a.data(), 4,
                             b.data(), 4, 0, c.data(), 4));
  EXPECT_EQ(c, std::vector<std::int32_t>(16, 5));
}

// The epilogue overloads pass the bias and the activation to the plan that runs the call: every
// dtype, both layouts, a gemv shape and a packed-sized one on two threads, against a reference
// on small integers (f32/f64/bf16: relu is exact; s8: bias modulo 2^32). A bias kind without
// a bias, and an s8 gelu, are refused with nothing written.
template <typename A, typename B, typename C, typename Scalar>
void ExpectEpilogueRuns(Runtime& runtime, DType dtype) {
  std::mt19937 rng(11);
  for (const auto [m, n, k] : {std::array<std::int64_t, 3>{1, 33, 17}, {70, 45, 64}}) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (BiasKind kind : {BiasKind::kPerColumn, BiasKind::kPerRow}) {
        SCOPED_TRACE(std::string(ToString(dtype)) + " " + ToString(layout) + " " +
                     std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                     " bias " + ToString(kind));
        const auto a = testing::MakeStored<A>(layout, Trans::kNo, m, k, rng);
        const auto b = testing::MakeStored<B>(layout, Trans::kNo, k, n, rng);
        const std::int64_t ldc = MinLeadingDimension(layout, Trans::kNo, m, n);
        std::vector<C> c(static_cast<std::size_t>(m * n), C(3));
        std::vector<C> bias(static_cast<std::size_t>(kind == BiasKind::kPerRow ? m : n));
        for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = C(static_cast<int>(i % 7) - 3);
        std::vector<C> expected = c;
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < n; ++j) {
            double sum = 0;
            for (std::int64_t q = 0; q < k; ++q) sum += a.At(i, q) * b.At(q, j);
            const double value =
                -sum + 3.0 + static_cast<double>(bias[static_cast<std::size_t>(
                                 kind == BiasKind::kPerRow ? i : j)]);
            expected[static_cast<std::size_t>(StoredOffset(layout, i, j, ldc))] =
                C(value < 0 ? 0 : value);
          }
        }
        Epilogue<C> epilogue;
        epilogue.bias_kind = kind;
        epilogue.bias = bias.data();
        epilogue.activation = Activation::kRelu;
        const Status status =
            runtime.Gemm(layout, Trans::kNo, Trans::kNo, m, n, k, Scalar(-1), a.values.data(),
                         a.ld, b.values.data(), b.ld, Scalar(1), c.data(), ldc, epilogue);
        ASSERT_TRUE(status) << status.error().message;
        EXPECT_EQ(c, expected);
      }
    }
  }
  std::vector<A> a(16, A{});
  std::vector<B> b(16, B{});
  std::vector<C> c(16, C(5));
  Epilogue<C> no_bias;
  no_bias.bias_kind = BiasKind::kPerColumn;
  const Status status = runtime.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4,
                                     Scalar(1), a.data(), 4, b.data(), 4, Scalar(0), c.data(), 4,
                                     no_bias);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(status.error().message.find("column bias is a null pointer"), std::string::npos);
  if constexpr (std::is_integral_v<C>) {
    Epilogue<C> gelu;
    gelu.activation = Activation::kGelu;
    EXPECT_FALSE(runtime.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, Scalar(1),
                              a.data(), 4, b.data(), 4, Scalar(0), c.data(), 4, gelu));
    // M = 0 computes nothing, but a malformed epilogue is still refused.
    EXPECT_FALSE(runtime.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 0, 4, 4, Scalar(1),
                              a.data(), 4, b.data(), 4, Scalar(0), c.data(), 4, gelu));
  }
  EXPECT_EQ(c, std::vector<C>(16, C(5)));
}

TEST_F(RuntimeTest, EpilogueOverloadsRunEveryDtype) {
  auto runtime = Open("", 2);
  ASSERT_NE(runtime, nullptr);
  ExpectEpilogueRuns<float, float, float, float>(*runtime, DType::kF32);
  ExpectEpilogueRuns<double, double, double, double>(*runtime, DType::kF64);
  ExpectEpilogueRuns<BFloat16, BFloat16, float, float>(*runtime, DType::kBF16);
  ExpectEpilogueRuns<std::uint8_t, std::int8_t, std::int32_t, std::int32_t>(*runtime, DType::kS8);
}

// The dequantized 8-bit GEMMs (A unsigned or signed, with and without a zero point, B's scales
// per column or one for all) against the formula in double: gemv shapes both ways, a
// packed-sized one on two threads and K = 0, both layouts and every transpose pair, each with
// an epilogue. C starts as NaN (never read); a window's padding stays NaN.
template <typename A>
void ExpectDequantizedRuns(Runtime& runtime) {
  std::mt19937 rng(13);
  constexpr bool kSigned = std::is_signed_v<A>;
  const std::int32_t zero_points[] = {0, kSigned ? -5 : 7};
  int cases = 0;
  for (const auto [m, n, k] : {std::array<std::int64_t, 3>{1, 33, 17}, {9, 1, 21}, {70, 45, 64},
                               {5, 4, 0}}) {
    for (int variant = 0; variant < 8; ++variant) {
      const Layout layout = variant % 2 == 0 ? Layout::kRowMajor : Layout::kColMajor;
      const Trans ta = (variant / 2) % 2 == 0 ? Trans::kNo : Trans::kYes;
      const Trans tb = (variant / 4) % 2 == 0 ? Trans::kNo : Trans::kYes;
      const std::int32_t zero_point = zero_points[variant % 2];
      const bool per_column = (variant / 2) % 2 == 0;
      const Activation activation = variant % 3 == 0   ? Activation::kGelu
                                    : variant % 3 == 1 ? Activation::kRelu
                                                       : Activation::kNone;
      const BiasKind kind = variant % 3 == 1 ? BiasKind::kPerRow : BiasKind::kPerColumn;
      SCOPED_TRACE(std::string(kSigned ? "s8s8f32 " : "u8s8f32 ") + ToString(layout) + " " +
                   TransPairToString(ta, tb) + " " + std::to_string(m) + "x" +
                   std::to_string(n) + "x" + std::to_string(k) + " zero point " +
                   std::to_string(zero_point) + (per_column ? " column scales " : " ") +
                   ToString(kind) + " " + ToString(activation));
      const auto a = testing::MakeStored<A>(layout, ta, m, k, rng);
      const auto b = testing::MakeStored<std::int8_t>(layout, tb, k, n, rng);
      const std::int64_t ldc = MinLeadingDimension(layout, Trans::kNo, m, n) + 1;
      const std::int64_t outer = layout == Layout::kRowMajor ? m : n;
      std::vector<float> c(static_cast<std::size_t>(outer * ldc),
                           std::numeric_limits<float>::quiet_NaN());
      std::vector<float> b_scales;
      for (std::int64_t j = 0; j < n; ++j) b_scales.push_back(0.01f * static_cast<float>(j + 1));
      std::vector<float> bias;
      for (std::int64_t i = 0; i < (kind == BiasKind::kPerRow ? m : n); ++i) {
        bias.push_back(0.5f * static_cast<float>(i % 5) - 1.0f);
      }
      const Dequantization dequantization{0.125f, zero_point,
                                          per_column ? b_scales.data() : nullptr, 0.03f};
      const Epilogue<float> epilogue{kind, bias.data(), activation};
      const Status status = runtime.Gemm(layout, ta, tb, m, n, k, a.values.data(), a.ld,
                                         b.values.data(), b.ld, c.data(), ldc, dequantization,
                                         epilogue);
      ASSERT_TRUE(status) << status.error().message;
      std::vector<bool> inside(c.size(), false);
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (std::int64_t q = 0; q < k; ++q) sum += (a.At(i, q) - zero_point) * b.At(q, j);
          const double b_scale = per_column ? b_scales[static_cast<std::size_t>(j)] : 0.03f;
          const double x = 0.125 * b_scale * sum +
                           bias[static_cast<std::size_t>(kind == BiasKind::kPerRow ? i : j)];
          const double want = ReferenceActivation(activation, x);
          const auto at = static_cast<std::size_t>(StoredOffset(layout, i, j, ldc));
          inside[at] = true;
          ASSERT_NEAR(c[at], want, 2e-5 * std::abs(want) + 1e-6) << "C(" << i << ", " << j << ")";
        }
      }
      for (std::size_t at = 0; at < c.size(); ++at) {
        if (!inside[at]) {
          ASSERT_TRUE(std::isnan(c[at])) << "padding element " << at;
        }
      }
      ++cases;
    }
  }
  EXPECT_EQ(cases, 32);
  std::vector<A> a(16, A{});
  std::vector<std::int8_t> b(16, 0);
  std::vector<float> c(16, 5.0f);
  const Epilogue<float> no_bias{BiasKind::kPerColumn, nullptr, Activation::kNone};
  for (const std::int64_t m : {4, 0}) {  // M = 0 computes nothing, but is checked
    const Status status = runtime.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, 4, 4,
                                       a.data(), 4, b.data(), 4, c.data(), 4, Dequantization{},
                                       no_bias);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find("column bias is a null pointer"), std::string::npos);
  }
  EXPECT_FALSE(runtime.Gemm(Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, a.data(), 3,
                            b.data(), 4, c.data(), 4, Dequantization{}));
  EXPECT_EQ(c, std::vector<float>(16, 5.0f));
}

TEST_F(RuntimeTest, DequantizedInt8GemmsMatchTheFormula) {
  auto runtime = Open("", 2);
  ASSERT_NE(runtime, nullptr);
  ExpectDequantizedRuns<std::uint8_t>(*runtime);
  ExpectDequantizedRuns<std::int8_t>(*runtime);
}

// The C dequantized forms: u8s8f32 with a zero point, column scales and relu; s8s8f32 with one
// scale and no epilogue; a NULL dequantization and an unknown activation are refused with
// nothing written and the routine named.
TEST_F(RuntimeTest, CApiDequantizedForms) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK) << mmtune_last_error();
  const std::uint8_t ua[4] = {1, 2, 3, 4};  // 2x2
  const std::int8_t sb[4] = {1, -1, 2, 3};
  const float b_scales[2] = {0.5f, 0.25f};
  const float bias[2] = {1.0f, -1.0f};
  float c[4] = {NAN, NAN, NAN, NAN};
  const mmtune_dequantization u8{2.0f, 1, b_scales, 0.0f};
  const mmtune_epilogue relu = {MMTUNE_BIAS_PER_COLUMN, bias, MMTUNE_ACT_RELU};
  ASSERT_EQ(mmtune_gemm_u8s8f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2,
                                2, ua, 2, sb, 2, c, 2, &u8, &relu),
            MMTUNE_OK)
      << mmtune_last_error();
  // A - 1 = {0, 1; 2, 3}: sums {2, 3; 8, 7}, times 2 * {0.5, 0.25}, plus {1, -1}.
  EXPECT_EQ(c[0], 3.0f);
  EXPECT_EQ(c[1], 0.5f);
  EXPECT_EQ(c[2], 9.0f);
  EXPECT_EQ(c[3], 2.5f);
  const std::int8_t sa[2] = {-3, 2};  // 1x2
  const mmtune_dequantization s8{0.5f, 0, nullptr, 0.25f};
  ASSERT_EQ(mmtune_gemm_s8s8f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 1, 2,
                                2, sa, 2, sb, 2, c, 2, &s8, nullptr),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(c[0], 0.125f);   // (-3 + 4) / 8
  EXPECT_EQ(c[1], 1.125f);   // (3 + 6) / 8
  auto refused = [&](const mmtune_dequantization* d, const mmtune_epilogue* e,
                     const char* words) {
    float out[4] = {9, 9, 9, 9};
    EXPECT_EQ(mmtune_gemm_u8s8f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2,
                                  2, 2, ua, 2, sb, 2, out, 2, d, e),
              MMTUNE_INVALID_ARGUMENT);
    const std::string error = mmtune_last_error();
    EXPECT_NE(error.find("mmtune_gemm_u8s8f32"), std::string::npos) << error;
    EXPECT_NE(error.find(words), std::string::npos) << error;
    EXPECT_EQ(out[0], 9.0f);
  };
  refused(nullptr, nullptr, "dequantization is NULL");
  const mmtune_epilogue bad = {MMTUNE_BIAS_NONE, nullptr, 9};
  refused(&u8, &bad, "unknown activation 9");
  mmtune_close(runtime);
}

// The C packed forms with an epilogue and dequantized: the numbers of CApiEpilogueForms and
// CApiDequantizedForms with B packed (its storage overwritten after packing); another dtype's
// weights, a NULL dequantization and an unknown activation are refused, the routine named and
// nothing written.
TEST_F(RuntimeTest, CApiPackedEpilogueAndDequantizedForms) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK) << mmtune_last_error();
  float b[4] = {1, -1, 2, 3};  // 2x2 row-major
  mmtune_packed_b* packed = nullptr;
  ASSERT_EQ(mmtune_pack_b_f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 2, 2, b, 2, &packed),
            MMTUNE_OK)
      << mmtune_last_error();
  std::fill(b, b + 4, 100.0f);
  const float a[4] = {1, 2, -3, 4};
  const float bias[2] = {1.0f, -20.0f};
  const mmtune_epilogue relu = {MMTUNE_BIAS_PER_COLUMN, bias, MMTUNE_ACT_RELU};
  float c[4] = {NAN, NAN, NAN, NAN};
  ASSERT_EQ(mmtune_gemm_f32_packed_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 1.0f,
                                            a, 2, packed, 0.0f, c, 2, &relu),
            MMTUNE_OK)
      << mmtune_last_error();
  // A B = {5, 5; 5, 15}, plus {1, -20}, relu.
  EXPECT_EQ(c[0], 6.0f);
  EXPECT_EQ(c[1], 0.0f);
  EXPECT_EQ(c[2], 6.0f);
  EXPECT_EQ(c[3], 0.0f);
  const mmtune_bf16 abf[4] = {};
  float untouched[4] = {9, 9, 9, 9};
  EXPECT_EQ(mmtune_gemm_bf16_packed_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 1.0f,
                                             abf, 2, packed, 0.0f, untouched, 2, &relu),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("holds f32 weights"), std::string::npos)
      << mmtune_last_error();
  const mmtune_epilogue unknown = {MMTUNE_BIAS_NONE, nullptr, 9};
  EXPECT_EQ(mmtune_gemm_f32_packed_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 1.0f,
                                            a, 2, packed, 0.0f, untouched, 2, &unknown),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_gemm_f32_packed_epilogue"),
            std::string::npos)
      << mmtune_last_error();
  EXPECT_EQ(untouched[0], 9.0f);
  mmtune_packed_b_free(packed);

  std::int8_t sb[4] = {1, -1, 2, 3};
  mmtune_packed_b* packed_s8 = nullptr;
  ASSERT_EQ(mmtune_pack_b_s8(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 2, 2, sb, 2,
                             &packed_s8),
            MMTUNE_OK)
      << mmtune_last_error();
  std::fill(sb, sb + 4, std::int8_t{100});
  const std::uint8_t ua[4] = {1, 2, 3, 4};
  const float b_scales[2] = {0.5f, 0.25f};
  const float s8_bias[2] = {1.0f, -1.0f};
  const mmtune_dequantization u8{2.0f, 1, b_scales, 0.0f};
  const mmtune_epilogue s8_relu = {MMTUNE_BIAS_PER_COLUMN, s8_bias, MMTUNE_ACT_RELU};
  ASSERT_EQ(mmtune_gemm_u8s8f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, ua, 2,
                                       packed_s8, c, 2, &u8, &s8_relu),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(c[0], 3.0f);
  EXPECT_EQ(c[1], 0.5f);
  EXPECT_EQ(c[2], 9.0f);
  EXPECT_EQ(c[3], 2.5f);
  const std::int8_t sa[2] = {-3, 2};
  const mmtune_dequantization s8{0.5f, 0, nullptr, 0.25f};
  ASSERT_EQ(mmtune_gemm_s8s8f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 1, sa, 2,
                                       packed_s8, c, 2, &s8, nullptr),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(c[0], 0.125f);
  EXPECT_EQ(c[1], 1.125f);
  EXPECT_EQ(mmtune_gemm_u8s8f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, ua, 2,
                                       packed_s8, untouched, 2, nullptr, nullptr),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_gemm_u8s8f32_packed"),
            std::string::npos)
      << mmtune_last_error();
  EXPECT_NE(std::string(mmtune_last_error()).find("dequantization is NULL"), std::string::npos);
  EXPECT_EQ(mmtune_gemm_s8s8f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, sa, 2,
                                       nullptr, untouched, 2, &s8, nullptr),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("packed B is NULL"), std::string::npos);
  EXPECT_EQ(untouched[0], 9.0f);
  mmtune_packed_b_free(packed_s8);
  mmtune_close(runtime);
}

// The C epilogue forms: a bias per column and gelu on f32 (against the formula in double), a
// bias per row and relu on s8, NULL for no epilogue; unknown kinds, a NULL bias and an s32 gelu
// are refused with nothing written and the routine named.
TEST_F(RuntimeTest, CApiEpilogueForms) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK) << mmtune_last_error();
  const float a[4] = {1, 2, 3, 4};  // 2x2
  const float b[4] = {1, -1, 2, 0.5f};
  const float bias[2] = {-3, 0.25f};
  float c[4] = {NAN, NAN, NAN, NAN};
  mmtune_epilogue gelu = {MMTUNE_BIAS_PER_COLUMN, bias, MMTUNE_ACT_GELU};
  ASSERT_EQ(mmtune_sgemm_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2,
                                  2, 2, 1.0f, a, 2, b, 2, 0.0f, c, 2, &gelu),
            MMTUNE_OK)
      << mmtune_last_error();
  const double sums[4] = {5 - 3, 0 + 0.25, 11 - 3, -1 + 0.25};
  for (int i = 0; i < 4; ++i) {
    const double x = sums[i];
    const double want = 0.5 * x * (1 + std::tanh(std::sqrt(2 / std::acos(-1.0)) *
                                                  (x + 0.044715 * x * x * x)));
    EXPECT_NEAR(c[i], want, 1e-6) << i;
  }
  float plain[4] = {0, 0, 0, 0};
  ASSERT_EQ(mmtune_sgemm_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2,
                                  2, 2, 1.0f, a, 2, b, 2, 0.0f, plain, 2, nullptr),
            MMTUNE_OK);
  EXPECT_EQ(plain[1], 0.0f);
  EXPECT_EQ(plain[3], -1.0f);

  const std::uint8_t ua[2] = {1, 2};  // 1x2
  const std::int8_t sb[4] = {-3, 1, 1, -4};
  const std::int32_t row_bias[1] = {2};
  std::int32_t ic[2] = {7, 7};
  mmtune_epilogue relu = {MMTUNE_BIAS_PER_ROW, row_bias, MMTUNE_ACT_RELU};
  ASSERT_EQ(mmtune_gemm_u8s8s32_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                         MMTUNE_NO_TRANS, 1, 2, 2, 1, ua, 2, sb, 2, 0, ic, 2,
                                         &relu),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(ic[0], 1);  // -3 + 2 + 2
  EXPECT_EQ(ic[1], 0);  // 1 - 8 + 2, relu

  auto refused = [&](mmtune_epilogue e, const char* words) {
    float out[4] = {9, 9, 9, 9};
    EXPECT_EQ(mmtune_sgemm_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS,
                                    2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, out, 2, &e),
              MMTUNE_INVALID_ARGUMENT);
    const std::string error = mmtune_last_error();
    EXPECT_NE(error.find("mmtune_sgemm_epilogue"), std::string::npos) << error;
    EXPECT_NE(error.find(words), std::string::npos) << error;
    EXPECT_EQ(out[0], 9.0f);
  };
  refused({7, bias, MMTUNE_ACT_NONE}, "unknown bias kind 7");
  refused({MMTUNE_BIAS_NONE, nullptr, -1}, "unknown activation -1");
  refused({MMTUNE_BIAS_PER_ROW, nullptr, MMTUNE_ACT_NONE}, "row bias is a null pointer");
  mmtune_epilogue s32_gelu = {MMTUNE_BIAS_NONE, nullptr, MMTUNE_ACT_GELU};
  EXPECT_EQ(mmtune_gemm_u8s8s32_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                         MMTUNE_NO_TRANS, 1, 2, 2, 1, ua, 2, sb, 2, 0, ic, 2,
                                         &s32_gelu),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(ic[0], 1);
  mmtune_close(runtime);
}

TEST_F(RuntimeTest, CApiLowPrecisionGemmsAndConversions) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK) << mmtune_last_error();
  // bf16 keeps 7 mantissa bits (a unit of 2^-7 at 1): 1.5 and -2 are exact; 1 + 2^-8 and
  // 1 + 3 * 2^-8 are ties, rounded to the even neighbours 1 and 1 + 2^-6.
  const float a_f32[6] = {1.5f, -2.0f, 1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 0.25f};
  mmtune_bf16 a[6];
  mmtune_f32_to_bf16(a_f32, a, 6);
  float back[6];
  mmtune_bf16_to_f32(a, back, 6);
  EXPECT_EQ(back[0], 1.5f);
  EXPECT_EQ(back[3], 1.0f);
  EXPECT_EQ(back[4], 1.0f + 0x1p-6f);
  mmtune_bf16 b[6];
  const float b_f32[6] = {1, 0, 0, 1, 1, 1};  // 3x2
  mmtune_f32_to_bf16(b_f32, b, 6);
  float c[4] = {NAN, NAN, NAN, NAN};
  ASSERT_EQ(mmtune_gemm_bf16(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2, 3,
                             2.0f, a, 3, b, 2, 0.0f, c, 2),
            MMTUNE_OK)
      << mmtune_last_error();
  // A = [1.5 -2 1; 1 1.015625 0.25] (row 2 as rounded), B = [1 0; 0 1; 1 1].
  EXPECT_EQ(c[0], 2.0f * 2.5f);
  EXPECT_EQ(c[1], 2.0f * -1.0f);
  EXPECT_EQ(c[2], 2.0f * 1.25f);
  EXPECT_EQ(c[3], 2.0f * (1.0f + 0x1p-6f + 0.25f));

  // u8 x s8 -> s32, wrapping: 255 * 127 * 2 + beta * C overflows int32 with this C.
  const std::uint8_t ua[2] = {255, 255};  // 1x2
  const std::int8_t sb[2] = {127, -128};  // 2x1
  std::int32_t ci[1] = {std::numeric_limits<std::int32_t>::max()};
  ASSERT_EQ(mmtune_gemm_u8s8s32(runtime, MMTUNE_COL_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 1, 1,
                                2, 1, ua, 1, sb, 2, 1, ci, 1),
            MMTUNE_OK)
      << mmtune_last_error();
  // 255 * 127 - 255 * 128 = -255; INT32_MAX - 255 does not wrap; now again with beta 2.
  EXPECT_EQ(ci[0], std::numeric_limits<std::int32_t>::max() - 255);
  ASSERT_EQ(mmtune_gemm_u8s8s32(runtime, MMTUNE_COL_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 1, 1,
                                2, 1, ua, 1, sb, 2, 2, ci, 1),
            MMTUNE_OK);
  const std::uint32_t wrapped =
      2u * static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max() - 255) - 255u;
  EXPECT_EQ(ci[0], static_cast<std::int32_t>(wrapped));
  EXPECT_EQ(mmtune_gemm_u8s8s32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 1, 1,
                                2, 1, nullptr, 2, sb, 1, 0, ci, 1),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_gemm_u8s8s32: A is NULL"),
            std::string::npos)
      << mmtune_last_error();
  // s8 x s8 -> s32: (-128 * -128 + 127 * -128) = 128, alpha 3, beta 0 over whatever C held.
  const std::int8_t sa[2] = {-128, 127};
  const std::int8_t sb2[2] = {-128, -128};
  ci[0] = -1;
  ASSERT_EQ(mmtune_gemm_s8s8s32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 1, 1,
                                2, 3, sa, 2, sb2, 1, 0, ci, 1),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(ci[0], 3 * 128);
  EXPECT_EQ(mmtune_gemm_s8s8s32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 1, 1,
                                2, 1, sa, 2, nullptr, 1, 0, ci, 1),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_gemm_s8s8s32: B is NULL"),
            std::string::npos)
      << mmtune_last_error();
  EXPECT_EQ(mmtune_gemm_bf16(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, MMTUNE_NO_TRANS, 2, 2, 3,
                             1.0f, a, 2, b, 2, 0.0f, c, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("lda"), std::string::npos);
  EXPECT_EQ(c[0], 5.0f);  // nothing written
  mmtune_close(runtime);
}

// ---- Packed weights (Runtime::PackB). ----

// The GEMM types whose B elements are T (of packed weights of T, of batches).
template <typename T>
struct PackedGemmOf {
  using A = T;
  using C = T;
  using Scalar = T;
};
template <>
struct PackedGemmOf<BFloat16> {
  using A = BFloat16;
  using C = float;
  using Scalar = float;
};
template <>
struct PackedGemmOf<std::int8_t> {
  using A = std::uint8_t;
  using C = std::int32_t;
  using Scalar = std::int32_t;
};

// `count` GEMMs of `p` laid out one after another (B once where `shared_b`), with padded
// leading dimensions and small integer operands, so every dtype's result is exact; C holds
// canaries outside its items, NaN inside them for a float C under beta = 0 (never to be read),
// and `expected` what a correct run leaves in all of C's storage.
template <typename T>
struct ExactOperands {
  using A = typename PackedGemmOf<T>::A;
  using C = typename PackedGemmOf<T>::C;
  std::int64_t lda = 0, ldb = 0, ldc = 0;
  BatchStrides strides;
  std::vector<A> a;
  std::vector<T> b;
  std::vector<C> c;
  std::vector<C> expected;

  ExactOperands(const Problem& p, std::int64_t count, bool shared_b,
                typename PackedGemmOf<T>::Scalar alpha, typename PackedGemmOf<T>::Scalar beta,
                unsigned seed) {
    const auto [a_ld, a_elements] = Padded(p, p.m, p.k, p.trans_a);
    const auto [b_ld, b_elements] = Padded(p, p.k, p.n, p.trans_b);
    const auto [c_ld, c_elements] = Padded(p, p.m, p.n, Trans::kNo);
    lda = a_ld;
    ldb = b_ld;
    ldc = c_ld;
    strides = BatchStrides{count, static_cast<std::int64_t>(a_elements),
                           shared_b ? 0 : static_cast<std::int64_t>(b_elements),
                           static_cast<std::int64_t>(c_elements)};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> small(std::is_unsigned_v<A> ? 0 : -3, 3);
    a.resize(a_elements * static_cast<std::size_t>(count));
    b.resize(b_elements * static_cast<std::size_t>(shared_b ? 1 : count));
    c.assign(c_elements * static_cast<std::size_t>(count), C(-777));
    for (A& x : a) x = testing::FromInt<A>(small(rng));
    for (T& x : b) x = testing::FromInt<T>(small(rng));
    auto at = [&](const auto* values, std::int64_t ld, Trans trans, std::int64_t i,
                  std::int64_t j) {
      return testing::ToDouble(trans == Trans::kNo ? values[StoredOffset(p.layout, i, j, ld)]
                                                : values[StoredOffset(p.layout, j, i, ld)]);
    };
    expected = c;
    for (std::int64_t item = 0; item < count; ++item) {
      const A* ai = a.data() + item * strides.a;
      const T* bi = b.data() + item * strides.b;
      for (std::int64_t i = 0; i < p.m; ++i) {
        for (std::int64_t j = 0; j < p.n; ++j) {
          const auto index =
              static_cast<std::size_t>(item * strides.c + StoredOffset(p.layout, i, j, ldc));
          double sum = 0;
          for (std::int64_t q = 0; q < p.k; ++q) {
            sum += at(ai, lda, p.trans_a, i, q) * at(bi, ldb, p.trans_b, q, j);
          }
          const C old = std::is_floating_point_v<C> && beta == 0
                            ? std::numeric_limits<C>::quiet_NaN()
                            : static_cast<C>(small(rng));
          c[index] = old;
          expected[index] = static_cast<C>(static_cast<double>(alpha) * sum +
                                           (beta == 0 ? 0.0 : static_cast<double>(beta) *
                                                                  static_cast<double>(old)));
        }
      }
    }
  }
};

// Packs B of `p` (for M = pack_m) and runs M = p.m with it (ExactOperands: exact results, NaN in
// a float C under beta = 0, the padding of C never written). B is overwritten after packing:
// the GEMM must not read it.
template <typename T>
void ExpectPackedWeightsExact(Runtime& runtime, const Problem& p, std::int64_t pack_m,
                              typename PackedGemmOf<T>::Scalar alpha,
                              typename PackedGemmOf<T>::Scalar beta) {
  ExactOperands<T> x(p, 1, false, alpha, beta,
                     static_cast<unsigned>(p.m * 131 + p.n * 7 + p.k));
  auto packed = runtime.PackB(p.layout, p.trans_b, pack_m, p.n, p.k, x.b.data(), x.ldb);
  ASSERT_TRUE(packed) << p.ToString() << ": " << packed.error().message;
  EXPECT_EQ(packed->n(), p.n);
  EXPECT_EQ(packed->k(), p.k);
  EXPECT_EQ(packed->layout(), p.layout);
  EXPECT_GE(packed->bytes(), static_cast<std::size_t>(p.n * p.k) * sizeof(T));
  for (T& v : x.b) v = testing::FromInt<T>(100);
  const Status status = runtime.Gemm(p.layout, p.trans_a, p.m, alpha, x.a.data(), x.lda, *packed,
                                     beta, x.c.data(), x.ldc);
  ASSERT_TRUE(status) << p.ToString() << ": " << status.error().message;
  for (std::size_t i = 0; i < x.c.size(); ++i) {
    ASSERT_EQ(x.c[i], x.expected[i]) << p.ToString() << " (packed for M = " << pack_m
                                     << ") C storage element " << i;
  }
}

template <typename T>
void ExpectPackedWeightsExactEverywhere(Runtime& runtime, DType dtype) {
  using Scalar = typename PackedGemmOf<T>::Scalar;
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        // One packing, many M: a decode step, a prime, the packed-for M, a larger batch.
        for (std::int64_t m : {1, 7, 48, 130}) {
          const Problem p = MakeProblem(m, 53, 41, 1, dtype, layout, ta, tb);
          ExpectPackedWeightsExact<T>(runtime, p, 48, Scalar(1), Scalar(0));
          ExpectPackedWeightsExact<T>(runtime, p, 48, Scalar(2), Scalar(-1));
        }
      }
    }
  }
  ExpectPackedWeightsExact<T>(runtime, MakeProblem(5, 1, 300, 1, dtype), 1, Scalar(1),
                              Scalar(0));
  ExpectPackedWeightsExact<T>(runtime, MakeProblem(5, 300, 1, 1, dtype), 5, Scalar(1),
                              Scalar(1));
}

TEST_F(RuntimeTest, PackedWeightsExactInEveryDtypeLayoutTransposeAndM) {
  for (int threads : {1, 2}) {
    auto runtime = Open("", threads);
    ASSERT_NE(runtime, nullptr);
    ExpectPackedWeightsExactEverywhere<float>(*runtime, DType::kF32);
    ExpectPackedWeightsExactEverywhere<double>(*runtime, DType::kF64);
    ExpectPackedWeightsExactEverywhere<BFloat16>(*runtime, DType::kBF16);
    ExpectPackedWeightsExactEverywhere<std::int8_t>(*runtime, DType::kS8);
  }
}

// Packed weights with a fused epilogue: the same C, bit for bit, as the unpacked Gemm with that
// epilogue (itself checked against references above), canaries and NaN under beta = 0
// included; B is overwritten after packing. Every dtype, layout and transpose, M from one to
// more than the packed-for 48, column and row bias.
template <typename T>
void ExpectPackedEpiloguesMatchUnpacked(Runtime& runtime, DType dtype) {
  using Scalar = typename PackedGemmOf<T>::Scalar;
  using C = typename PackedGemmOf<T>::C;
  int cases = 0;
  for (int variant = 0; variant < 8; ++variant) {
    const Layout layout = variant % 2 == 0 ? Layout::kRowMajor : Layout::kColMajor;
    const Trans ta = (variant / 2) % 2 == 0 ? Trans::kNo : Trans::kYes;
    const Trans tb = (variant / 4) % 2 == 0 ? Trans::kNo : Trans::kYes;
    for (std::int64_t m : {1, 7, 48, 130}) {
      const Problem p = MakeProblem(m, 53, 41, 1, dtype, layout, ta, tb);
      const Scalar beta = Scalar(variant % 3 == 0 ? 0 : -1);
      ExactOperands<T> x(p, 1, false, Scalar(2), beta, static_cast<unsigned>(m * 17 + variant));
      const BiasKind kind = m % 2 == 0 ? BiasKind::kPerRow : BiasKind::kPerColumn;
      std::vector<C> bias(static_cast<std::size_t>(kind == BiasKind::kPerRow ? m : p.n));
      for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = C(static_cast<int>(i % 9) - 4);
      const Activation activation =
          std::is_integral_v<C> || variant % 2 == 0 ? Activation::kRelu : Activation::kGelu;
      const Epilogue<C> epilogue{kind, bias.data(), activation};
      SCOPED_TRACE(p.ToString() + " bias " + ToString(kind) + " " + ToString(activation));
      std::vector<C> want = x.c;
      Status status = runtime.Gemm(layout, ta, tb, m, p.n, p.k, Scalar(2), x.a.data(), x.lda,
                                   x.b.data(), x.ldb, beta, want.data(), x.ldc, epilogue);
      ASSERT_TRUE(status) << status.error().message;
      auto packed = runtime.PackB(layout, tb, 48, p.n, p.k, x.b.data(), x.ldb);
      ASSERT_TRUE(packed) << packed.error().message;
      for (T& v : x.b) v = testing::FromInt<T>(100);
      status = runtime.Gemm(layout, ta, m, Scalar(2), x.a.data(), x.lda, *packed, beta,
                            x.c.data(), x.ldc, epilogue);
      ASSERT_TRUE(status) << status.error().message;
      ASSERT_EQ(std::memcmp(x.c.data(), want.data(), want.size() * sizeof(C)), 0);
      ++cases;
    }
  }
  EXPECT_EQ(cases, 32);
  // A malformed epilogue is refused with nothing written.
  std::vector<T> b(16, testing::FromInt<T>(1));
  auto packed = runtime.PackB(Layout::kRowMajor, Trans::kNo, 4, 4, 4, b.data(), 4);
  ASSERT_TRUE(packed) << packed.error().message;
  std::vector<typename PackedGemmOf<T>::A> a(16, testing::FromInt<typename PackedGemmOf<T>::A>(1));
  std::vector<C> c(16, C(5));
  for (const Epilogue<C>& bad : {Epilogue<C>{BiasKind::kPerColumn, nullptr, Activation::kNone},
                                 Epilogue<C>{BiasKind::kPerRow, nullptr, Activation::kRelu}}) {
    const Status status = runtime.Gemm(Layout::kRowMajor, Trans::kNo, 4, Scalar(1), a.data(), 4,
                                       *packed, Scalar(0), c.data(), 4, bad);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(c, std::vector<C>(16, C(5)));
}

// A fixed problem with an epilogue (Bind): the same C, bit for bit, as the Gemm overload with
// that epilogue, canaries and NaN under beta = 0 included, on the bound direct tiles' shapes
// (8^3, 16^3), gemv, direct and packed sizes, both layouts, column and row bias; a malformed
// epilogue fails the binding, M = 0 included.
template <typename T>
void ExpectFixedEpiloguesMatchGemm(Runtime& runtime, DType dtype) {
  int cases = 0;
  for (const auto [m, n, k] : {std::array<std::int64_t, 3>{8, 8, 8}, {16, 16, 16}, {1, 33, 17},
                               {37, 53, 61}, {130, 80, 300}}) {
    for (int variant = 0; variant < 4; ++variant) {
      const Layout layout = variant % 2 == 0 ? Layout::kRowMajor : Layout::kColMajor;
      const Trans ta = variant == 3 ? Trans::kYes : Trans::kNo;
      const Problem p = MakeProblem(m, n, k, 1, dtype, layout, ta, Trans::kNo);
      const T beta = T(variant / 2 == 0 ? 0 : -1);
      ExactOperands<T> x(p, 1, false, T(2), beta, static_cast<unsigned>(m + n + variant));
      const BiasKind kind = variant % 2 == 0 ? BiasKind::kPerColumn : BiasKind::kPerRow;
      std::vector<T> bias(static_cast<std::size_t>(kind == BiasKind::kPerRow ? m : n));
      for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = T(static_cast<int>(i % 7) - 3);
      const Epilogue<T> epilogue{kind, bias.data(),
                                 variant < 2 ? Activation::kRelu : Activation::kSilu};
      SCOPED_TRACE(p.ToString() + " " + ToString(kind) + " " + ToString(epilogue.activation));
      auto fixed = runtime.Bind(layout, ta, Trans::kNo, m, n, k, T(2), x.lda, x.ldb, beta, x.ldc,
                                epilogue);
      ASSERT_TRUE(fixed) << fixed.error().message;
      std::vector<T> want = x.c;
      const Status status = runtime.Gemm(layout, ta, Trans::kNo, m, n, k, T(2), x.a.data(), x.lda,
                                         x.b.data(), x.ldb, beta, want.data(), x.ldc, epilogue);
      ASSERT_TRUE(status) << status.error().message;
      ASSERT_TRUE(fixed->Run(x.a.data(), x.b.data(), x.c.data()));
      ASSERT_EQ(std::memcmp(x.c.data(), want.data(), want.size() * sizeof(T)), 0);
      ++cases;
    }
  }
  EXPECT_EQ(cases, 20);
  const Epilogue<T> no_bias{BiasKind::kPerRow, nullptr, Activation::kNone};
  for (const std::int64_t m : {4, 0}) {
    auto refused = runtime.Bind(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, 4, 4, T(1), 4, 4,
                                T(0), 4, no_bias);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(refused.error().message.find("row bias is a null pointer"), std::string::npos)
        << refused.error().message;
  }
}

TEST_F(RuntimeTest, FixedGemmsRunFusedEpilogues) {
  for (int threads : {1, 2}) {
    auto runtime = Open("", threads);
    ASSERT_NE(runtime, nullptr);
    ExpectFixedEpiloguesMatchGemm<float>(*runtime, DType::kF32);
    ExpectFixedEpiloguesMatchGemm<double>(*runtime, DType::kF64);
  }
}

// The C binding with an epilogue: relu with a column bias on a 2x2 problem, NULL for none; an
// unknown activation fails the binding (*fixed NULL, the routine named).
TEST_F(RuntimeTest, CApiFixedGemmsWithAnEpilogue) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK) << mmtune_last_error();
  const float bias[2] = {1.0f, -20.0f};
  const mmtune_epilogue relu = {MMTUNE_BIAS_PER_COLUMN, bias, MMTUNE_ACT_RELU};
  mmtune_fixed_sgemm* fixed = nullptr;
  ASSERT_EQ(mmtune_bind_sgemm_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                       MMTUNE_NO_TRANS, 2, 2, 2, 1.0f, 2, 2, 0.0f, 2, &relu,
                                       &fixed),
            MMTUNE_OK)
      << mmtune_last_error();
  const float a[4] = {1, 2, -3, 4};
  const float b[4] = {1, -1, 2, 3};
  float c[4] = {NAN, NAN, NAN, NAN};
  ASSERT_EQ(mmtune_fixed_sgemm_run(fixed, a, b, c), MMTUNE_OK) << mmtune_last_error();
  EXPECT_EQ(c[0], 6.0f);  // A B = {5, 5; 5, 15}, plus {1, -20}, relu
  EXPECT_EQ(c[1], 0.0f);
  EXPECT_EQ(c[2], 6.0f);
  EXPECT_EQ(c[3], 0.0f);
  mmtune_fixed_sgemm_free(fixed);
  mmtune_fixed_dgemm* plain = nullptr;
  ASSERT_EQ(mmtune_bind_dgemm_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                       MMTUNE_NO_TRANS, 2, 2, 2, 1.0, 2, 2, 0.0, 2, nullptr,
                                       &plain),
            MMTUNE_OK)
      << mmtune_last_error();
  const double da[4] = {1, 2, -3, 4};
  const double db[4] = {1, -1, 2, 3};
  double dc[4] = {};
  ASSERT_EQ(mmtune_fixed_dgemm_run(plain, da, db, dc), MMTUNE_OK);
  EXPECT_EQ(dc[3], 15.0);
  mmtune_fixed_dgemm_free(plain);
  const mmtune_epilogue unknown = {MMTUNE_BIAS_NONE, nullptr, 9};
  mmtune_fixed_sgemm* refused = reinterpret_cast<mmtune_fixed_sgemm*>(&plain);
  EXPECT_EQ(mmtune_bind_sgemm_epilogue(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                       MMTUNE_NO_TRANS, 2, 2, 2, 1.0f, 2, 2, 0.0f, 2, &unknown,
                                       &refused),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_bind_sgemm_epilogue"),
            std::string::npos)
      << mmtune_last_error();
  mmtune_close(runtime);
}

TEST_F(RuntimeTest, PackedWeightsRunFusedEpilogues) {
  for (int threads : {1, 2}) {
    auto runtime = Open("", threads);
    ASSERT_NE(runtime, nullptr);
    ExpectPackedEpiloguesMatchUnpacked<float>(*runtime, DType::kF32);
    ExpectPackedEpiloguesMatchUnpacked<double>(*runtime, DType::kF64);
    ExpectPackedEpiloguesMatchUnpacked<BFloat16>(*runtime, DType::kBF16);
    ExpectPackedEpiloguesMatchUnpacked<std::int8_t>(*runtime, DType::kS8);
  }
}

// Quantized layers with packed weights: the same f32 C, bit for bit, as the unpacked dequantized
// Gemm (checked against the formula above), for unsigned and signed A with a zero point, column
// scales or one scale, every layout and transpose, M from one up, K = 0; B is overwritten after
// packing, so the column sums the zero point needs must come from the packing. C starts as NaN
// and its padding stays so.
template <typename A>
void ExpectPackedDequantizedMatchUnpacked(Runtime& runtime) {
  std::mt19937 rng(17);
  constexpr bool kSigned = std::is_signed_v<A>;
  int cases = 0;
  // Weights packed for 48 rows hold panels; for one row, column-major ones hold a copy.
  for (const auto [n, k, pack_m] :
       {std::array<std::int64_t, 3>{53, 41, 48}, {20, 0, 48}, {53, 41, 1}}) {
    for (int variant = 0; variant < 8; ++variant) {
      const Layout layout = variant % 2 == 0 ? Layout::kRowMajor : Layout::kColMajor;
      const Trans ta = (variant / 2) % 2 == 0 ? Trans::kNo : Trans::kYes;
      const Trans tb = (variant / 4) % 2 == 0 ? Trans::kNo : Trans::kYes;
      const std::int32_t zero_point = variant % 3 == 0 ? 0 : (kSigned ? -5 : 7);
      const bool per_column = variant % 2 == 0;
      auto b = testing::MakeStored<std::int8_t>(layout, tb, k, n, rng);
      auto packed = runtime.PackB(layout, tb, pack_m, n, k, b.values.data(), b.ld);
      ASSERT_TRUE(packed) << packed.error().message;
      if (pack_m == 1) {
        EXPECT_EQ(packed->holds_panels(), layout == Layout::kRowMajor);
      }
      const auto original_b = b.values;
      for (auto& v : b.values) v = 100;
      std::vector<float> b_scales;
      for (std::int64_t j = 0; j < n; ++j) b_scales.push_back(0.01f * static_cast<float>(j + 1));
      std::vector<float> bias;
      for (std::int64_t j = 0; j < n; ++j) bias.push_back(0.5f * static_cast<float>(j % 5) - 1);
      const Dequantization dequantization{0.125f, zero_point,
                                          per_column ? b_scales.data() : nullptr, 0.03f};
      const Epilogue<float> epilogue{BiasKind::kPerColumn, bias.data(),
                                     variant % 3 == 1 ? Activation::kSilu : Activation::kGelu};
      for (std::int64_t m : {1, 7, 130}) {
        SCOPED_TRACE(std::string(kSigned ? "s8s8f32 " : "u8s8f32 ") + ToString(layout) + " " +
                     TransPairToString(ta, tb) + " " + std::to_string(m) + "x" +
                     std::to_string(n) + "x" + std::to_string(k) + " zero point " +
                     std::to_string(zero_point));
        const auto a = testing::MakeStored<A>(layout, ta, m, k, rng);
        const std::int64_t ldc = MinLeadingDimension(layout, Trans::kNo, m, n) + 1;
        const std::int64_t outer = layout == Layout::kRowMajor ? m : n;
        std::vector<float> want(static_cast<std::size_t>(outer * ldc),
                                std::numeric_limits<float>::quiet_NaN());
        std::vector<float> c = want;
        Status status = runtime.Gemm(layout, ta, tb, m, n, k, a.values.data(), a.ld,
                                     original_b.data(), b.ld, want.data(), ldc, dequantization,
                                     epilogue);
        ASSERT_TRUE(status) << status.error().message;
        status = runtime.Gemm(layout, ta, m, a.values.data(), a.ld, *packed, c.data(), ldc,
                              dequantization, epilogue);
        ASSERT_TRUE(status) << status.error().message;
        ASSERT_EQ(std::memcmp(c.data(), want.data(), c.size() * sizeof(float)), 0);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 72);
  // Malformed: a column bias without values, A's leading dimension below the minimum; M = 0 is
  // still checked. Nothing is written.
  std::vector<std::int8_t> b(16, 1);
  auto packed = runtime.PackB(Layout::kRowMajor, Trans::kNo, 4, 4, 4, b.data(), 4);
  ASSERT_TRUE(packed) << packed.error().message;
  std::vector<A> a(16, A{1});
  std::vector<float> c(16, 5.0f);
  const Epilogue<float> no_bias{BiasKind::kPerColumn, nullptr, Activation::kNone};
  for (const std::int64_t m : {4, 0}) {
    const Status status = runtime.Gemm(Layout::kRowMajor, Trans::kNo, m, a.data(), 4, *packed,
                                       c.data(), 4, Dequantization{}, no_bias);
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find("column bias is a null pointer"), std::string::npos);
  }
  EXPECT_FALSE(runtime.Gemm(Layout::kRowMajor, Trans::kNo, 4, a.data(), 3, *packed, c.data(), 4,
                            Dequantization{}));
  EXPECT_EQ(c, std::vector<float>(16, 5.0f));
}

TEST_F(RuntimeTest, PackedWeightsRunDequantizedLayers) {
  for (int threads : {1, 2}) {
    auto runtime = Open("", threads);
    ASSERT_NE(runtime, nullptr);
    ExpectPackedDequantizedMatchUnpacked<std::uint8_t>(*runtime);
    ExpectPackedDequantizedMatchUnpacked<std::int8_t>(*runtime);
  }
}

// Weights take the runtime's config for their M: panels where it is of the packed family (its
// shorter tiles for fewer rows), else a copy of B that every GEMM runs through the runtime's own
// lookup for its M. Both give exact results in every tier.
TEST_F(RuntimeTest, PackedWeightsArePanelsForPackedConfigsElseACopy) {
  const Problem tuned = MakeProblem(256, 80, 300);
  // The packed model's config on every CPU (on some the default for this shape is direct).
  KernelConfig packed_config = ColdOperandsConfig(tuned, machine_);
  ASSERT_EQ(packed_config.family, KernelFamily::kPacked) << packed_config.ToString();
  packed_config.kc = 32;  // visibly not the default, and several k blocks
  const Problem small = MakeProblem(12, 10, 20);
  const KernelConfig small_config = MarkedConfig(small, machine_);
  ASSERT_NE(small_config.family, KernelFamily::kPacked) << small_config.ToString();
  auto runtime = Open(MakeDb("packed.db",
                             {Winner(tuned, packed_config, 42.0, machine_.fingerprint),
                              Winner(small, small_config, 9.0, machine_.fingerprint)}));
  ASSERT_NE(runtime, nullptr);
  std::vector<float> b(300 * 80, 1.0f);
  auto panels = runtime->PackB(Layout::kRowMajor, Trans::kNo, 256, 80, 300, b.data(), 80);
  ASSERT_TRUE(panels) << panels.error().message;
  EXPECT_EQ(panels->lookup().tier, LookupTier::kExact);
  EXPECT_EQ(panels->lookup().config_text, packed_config.ToString());
  EXPECT_TRUE(panels->holds_panels());
  // Panels of nr columns, each k zero-padded to the k group: at least B's size.
  EXPECT_GE(panels->bytes(), 300u * 80u * sizeof(float));
  auto copy = runtime->PackB(Layout::kRowMajor, Trans::kNo, 12, 10, 20, b.data(), 80);
  ASSERT_TRUE(copy) << copy.error().message;
  EXPECT_EQ(copy->lookup().tier, LookupTier::kExact);
  EXPECT_EQ(copy->lookup().config_text, small_config.ToString());
  EXPECT_FALSE(copy->holds_panels());
  EXPECT_EQ(copy->bytes(), 20u * 10u * sizeof(float));  // B with a tight leading dimension
  for (std::int64_t m : {1, 5, 12, 100, 256, 300}) {
    ExpectPackedWeightsExact<float>(*runtime, MakeProblem(m, 80, 300), 256, 2.0f, -1.0f);
    ExpectPackedWeightsExact<float>(*runtime, MakeProblem(m, 10, 20), 12, 1.0f, 0.0f);
  }
}

// Weights run the winner tuned for weights (`tune --packed-b`) before the plain call's winner of
// the same shape, exactly; a plain call never runs a packed-b winner; without a packed-b winner
// the plain one serves the weights. A packed-b winner of a one-row GEMM is not replaced by
// panels: it was timed as the weights run it.
TEST_F(RuntimeTest, PackedWeightsRunTheWinnerTunedForThem) {
  const Problem plain = MakeProblem(256, 80, 300);
  Problem weights = plain;
  weights.form = CallForm::kPackedB;
  KernelConfig plain_config = ColdOperandsConfig(plain, machine_);
  ASSERT_EQ(plain_config.family, KernelFamily::kPacked) << plain_config.ToString();
  plain_config.kc = 32;
  KernelConfig weights_config = plain_config;
  weights_config.kc = 64;
  const Problem other = MakeProblem(200, 80, 300);  // a plain winner only
  KernelConfig other_config = plain_config;
  other_config.kc = 16;
  Problem decode = MakeProblem(1, 53, 41);
  decode.form = CallForm::kPackedB;
  const KernelConfig gemv = ModelConfig(MakeProblem(1, 53, 41), machine_);
  ASSERT_EQ(gemv.family, KernelFamily::kGemv) << gemv.ToString();
  const std::string db = MakeDb("forms.db",
                                {Winner(plain, plain_config, 40.0, machine_.fingerprint),
                                 Winner(weights, weights_config, 45.0, machine_.fingerprint),
                                 Winner(other, other_config, 41.0, machine_.fingerprint),
                                 Winner(decode, gemv, 5.0, machine_.fingerprint)});
  auto runtime = Open(db);
  ASSERT_NE(runtime, nullptr);
  EXPECT_EQ(runtime->Lookup(plain).config_text, plain_config.ToString());
  EXPECT_EQ(runtime->Lookup(weights).config_text, weights_config.ToString());
  EXPECT_EQ(runtime->Lookup(weights).tuned, weights);

  std::vector<float> b(300 * 80, 1.0f);
  auto packed = runtime->PackB(Layout::kRowMajor, Trans::kNo, 256, 80, 300, b.data(), 80);
  ASSERT_TRUE(packed) << packed.error().message;
  EXPECT_EQ(packed->lookup().tier, LookupTier::kExact);
  EXPECT_EQ(packed->lookup().config_text, weights_config.ToString());
  EXPECT_EQ(packed->lookup().tuned, weights);
  auto borrowed = runtime->PackB(Layout::kRowMajor, Trans::kNo, 200, 80, 300, b.data(), 80);
  ASSERT_TRUE(borrowed) << borrowed.error().message;
  EXPECT_EQ(borrowed->lookup().tier, LookupTier::kExact);
  EXPECT_EQ(borrowed->lookup().config_text, other_config.ToString());
  EXPECT_EQ(borrowed->lookup().tuned, other);
  Problem other_weights = other;
  other_weights.form = CallForm::kPackedB;
  EXPECT_EQ(runtime->Lookup(other_weights).config_text, other_config.ToString());

  auto one_row = runtime->PackB(Layout::kRowMajor, Trans::kNo, 1, 53, 41, b.data(), 53);
  ASSERT_TRUE(one_row) << one_row.error().message;
  EXPECT_EQ(one_row->lookup().tier, LookupTier::kExact);
  EXPECT_EQ(one_row->lookup().config_text, gemv.ToString());
  EXPECT_FALSE(one_row->holds_panels());
  for (std::int64_t m : {1, 7, 256, 300}) {
    ExpectPackedWeightsExact<float>(*runtime, MakeProblem(m, 80, 300), 256, 2.0f, -1.0f);
    ExpectPackedWeightsExact<float>(*runtime, MakeProblem(m, 53, 41), 1, 1.0f, 0.0f);
  }

  // C: the weights say what they run, as mmtune_lookup_json says it for a plain call.
  mmtune_options options;
  mmtune_options_init(&options);
  options.db_path = db.c_str();
  options.max_threads = 1;
  mmtune_runtime* c_runtime = nullptr;
  ASSERT_EQ(mmtune_open_with_options(&options, &c_runtime), MMTUNE_OK) << mmtune_last_error();
  mmtune_packed_b* c_packed = nullptr;
  ASSERT_EQ(mmtune_pack_b_f32(c_runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 256, 80, 300,
                              b.data(), 80, &c_packed),
            MMTUNE_OK)
      << mmtune_last_error();
  const std::int64_t length = mmtune_packed_b_lookup_json(c_packed, nullptr, 0);
  ASSERT_GT(length, 0) << mmtune_last_error();
  std::string text(static_cast<std::size_t>(length) + 1, 'x');
  ASSERT_EQ(mmtune_packed_b_lookup_json(c_packed, text.data(), length + 1), length);
  text.resize(static_cast<std::size_t>(length));
  const nlohmann::json report = nlohmann::json::parse(text);
  EXPECT_EQ(report["tier"], "exact");
  EXPECT_EQ(report["tuned"], weights.ToString());
  EXPECT_EQ(report["config"], weights_config.ToString());
  EXPECT_TRUE(report["runs"].is_null()) << text;  // a winner tuned for the weights runs as it is
  EXPECT_EQ(mmtune_packed_b_lookup_json(nullptr, nullptr, 0), -1);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_packed_b_lookup_json"),
            std::string::npos);
  EXPECT_EQ(mmtune_packed_b_lookup_json(c_packed, nullptr, 5), -1);
  mmtune_packed_b_free(c_packed);
  mmtune_close(c_runtime);
}

// Weights held as a copy of B (a config that reads B as stored) run a packed-b winner of the
// call's very shape, as `tune --packed-b` timed it; other shapes run what a plain call runs.
// Seen through the record file, which counts only calls without an exact winner.
TEST_F(RuntimeTest, WeightsHeldAsACopyRunTheWinnerTunedForThem) {
  Problem small = MakeProblem(12, 10, 20);
  const KernelConfig marked = MarkedConfig(small, machine_);
  ASSERT_NE(marked.family, KernelFamily::kPacked) << marked.ToString();
  small.form = CallForm::kPackedB;
  const std::string db = MakeDb("copy.db", {Winner(small, marked, 9.0, machine_.fingerprint)});
  const std::string record = Path("copy_calls.json");
  std::vector<float> b(20 * 10, 1.0f), a(12 * 20, 1.0f), c(12 * 10, 0.0f);
  {
    auto runtime = Open(db, 1, record);
    ASSERT_NE(runtime, nullptr);
    auto weights = runtime->PackB(Layout::kRowMajor, Trans::kNo, 12, 10, 20, b.data(), 10);
    ASSERT_TRUE(weights) << weights.error().message;
    EXPECT_FALSE(weights->holds_panels());
    EXPECT_EQ(weights->lookup().tier, LookupTier::kExact);
    EXPECT_EQ(weights->lookup().config_text, marked.ToString());
    for (std::int64_t m : {12, 12, 12, 5, 5}) {
      std::fill(c.begin(), c.end(), -1.0f);
      ASSERT_TRUE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, m, 1.0f, a.data(), 20, *weights,
                                0.0f, c.data(), 10));
      for (std::int64_t i = 0; i < m * 10; ++i) ASSERT_EQ(c[i], 20.0f) << "M = " << m;
    }
  }  // closing writes the record
  auto recorded = ReadRecordFile(record);
  ASSERT_TRUE(recorded) << recorded.error().message;
  ASSERT_EQ(recorded->size(), 1u);
  Problem weights_of_5 = MakeProblem(5, 10, 20);  // recorded to be tuned as weights
  weights_of_5.form = CallForm::kPackedB;
  EXPECT_EQ((*recorded)[0].problem, weights_of_5);
  EXPECT_EQ((*recorded)[0].calls, 2u);
}

// GEMMs on packed weights' panels are recorded as packed-b problems (`tune --from-record` then
// tunes them as weights), each M apart, unless a winner of `tune --packed-b` is exact for them.
TEST_F(RuntimeTest, GemmsOnPackedPanelsAreRecordedAsWeights) {
  Problem tuned = MakeProblem(256, 80, 300);
  tuned.form = CallForm::kPackedB;
  const KernelConfig packed = ColdOperandsConfig(MakeProblem(256, 80, 300), machine_);
  ASSERT_EQ(packed.family, KernelFamily::kPacked) << packed.ToString();
  const std::string db =
      MakeDb("panels.db", {Winner(tuned, packed, 40.0, machine_.fingerprint)});
  const std::string record = Path("panels.json");
  std::vector<float> b(300 * 80, 1.0f), a(256 * 300, 1.0f), c(256 * 80, 0.0f);
  {
    auto runtime = Open(db, 1, record);
    ASSERT_NE(runtime, nullptr);
    auto weights = runtime->PackB(Layout::kRowMajor, Trans::kNo, 256, 80, 300, b.data(), 80);
    ASSERT_TRUE(weights) << weights.error().message;
    ASSERT_TRUE(weights->holds_panels());
    for (std::int64_t m : {256, 64, 7, 64}) {
      ASSERT_TRUE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, m, 1.0f, a.data(), 300,
                                *weights, 0.0f, c.data(), 80));
      for (std::int64_t i = 0; i < m * 80; ++i) ASSERT_EQ(c[i], 300.0f) << "M = " << m;
    }
  }  // closing writes the record
  auto recorded = ReadRecordFile(record);
  ASSERT_TRUE(recorded) << recorded.error().message;
  std::vector<std::string> problems;
  for (const auto& entry : *recorded) {
    problems.push_back(entry.problem.ToString() + " x" + std::to_string(entry.calls));
  }
  std::sort(problems.begin(), problems.end());
  EXPECT_EQ(problems, (std::vector<std::string>{"f32 row NN 64x80x300 t1 packed-b x2",
                                                "f32 row NN 7x80x300 t1 packed-b x1"}));
}

// Weights packed for a one-row GEMM hold panels of the packed family (PackedWeightsConfig), even
// where a gemv winner is tuned for that very problem (it was timed reading B as stored); the
// report says the default tier. Column-major weights keep the copy. Exact in every dtype for
// one row and more.
template <typename T>
void ExpectOneRowWeightsTakePanels(Runtime& runtime, DType dtype, const Machine& machine) {
  const Problem decode = MakeProblem(1, 53, 41, 1, dtype);
  std::vector<T> b(53 * 41, testing::FromInt<T>(1));
  auto weights = runtime.PackB(Layout::kRowMajor, Trans::kNo, 1, 53, 41, b.data(), 53);
  ASSERT_TRUE(weights) << weights.error().message;
  EXPECT_TRUE(weights->holds_panels()) << ToString(dtype);
  EXPECT_EQ(weights->lookup().tier, LookupTier::kDefault);
  Problem sized = decode;
  sized.threads = weights->lookup().threads;
  const KernelConfig packed_for = PackedWeightsConfig(sized, machine);
  EXPECT_EQ(weights->lookup().config_text, packed_for.ToString());
  // A one-row GEMM on them runs the shortest kernel of their panel width, and both say so.
  const KernelConfig runs = PanelCallConfig(packed_for, sized, machine);
  EXPECT_EQ(runs.nr, packed_for.nr);
  EXPECT_LE(runs.mr, packed_for.mr);
  EXPECT_EQ(weights->lookup().runs_text, runs == packed_for ? "" : runs.ToString());
  Problem asked = decode;
  asked.form = CallForm::kPackedB;
  EXPECT_EQ(runtime.Lookup(asked).runs_text, weights->lookup().runs_text);
  if constexpr (std::is_same_v<T, float>) {
    EXPECT_EQ(runs.mr, 1);
  }
  auto column_major = runtime.PackB(Layout::kColMajor, Trans::kNo, 1, 53, 41, b.data(), 41);
  ASSERT_TRUE(column_major) << column_major.error().message;
  EXPECT_FALSE(column_major->holds_panels()) << ToString(dtype);
  using Scalar = typename PackedGemmOf<T>::Scalar;
  for (std::int64_t m : {1, 7, 130}) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        const Problem p = MakeProblem(m, 53, 41, 1, dtype, layout, Trans::kNo, tb);
        ExpectPackedWeightsExact<T>(runtime, p, 1, Scalar(2), Scalar(-1));
      }
    }
  }
}

TEST_F(RuntimeTest, PackedWeightsOfOneRowGemmsHoldPanels) {
  const Problem decode = MakeProblem(1, 53, 41);
  const KernelConfig gemv = ModelConfig(decode, machine_);
  ASSERT_EQ(gemv.family, KernelFamily::kGemv) << gemv.ToString();
  auto runtime = Open(MakeDb("gemv.db", {Winner(decode, gemv, 5.0, machine_.fingerprint)}), 2);
  ASSERT_NE(runtime, nullptr);
  EXPECT_EQ(runtime->Lookup(decode).tier, LookupTier::kExact);
  ExpectOneRowWeightsTakePanels<float>(*runtime, DType::kF32, machine_);
  ExpectOneRowWeightsTakePanels<double>(*runtime, DType::kF64, machine_);
  ExpectOneRowWeightsTakePanels<BFloat16>(*runtime, DType::kBF16, machine_);
  ExpectOneRowWeightsTakePanels<std::int8_t>(*runtime, DType::kS8, machine_);
}

TEST_F(RuntimeTest, PackedWeightsRefuseBadArgumentsAndOutliveTheirRuntime) {
  std::optional<PackedWeights<float>> kept;
  std::vector<float> b(6 * 4, 1.0f);
  {
    auto runtime = Open("");
    ASSERT_NE(runtime, nullptr);
    auto no_rows = runtime->PackB(Layout::kRowMajor, Trans::kNo, 0, 4, 6, b.data(), 4);
    ASSERT_FALSE(no_rows);
    EXPECT_EQ(no_rows.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(no_rows.error().message.find("m = 0"), std::string::npos);
    auto low_ldb = runtime->PackB(Layout::kRowMajor, Trans::kNo, 2, 4, 6, b.data(), 3);
    ASSERT_FALSE(low_ldb);
    EXPECT_NE(low_ldb.error().message.find("ldb"), std::string::npos);
    auto packed = runtime->PackB(Layout::kRowMajor, Trans::kNo, 2, 4, 6, b.data(), 4);
    ASSERT_TRUE(packed) << packed.error().message;
    std::vector<float> a(2 * 6, 1.0f), c(2 * 4, 3.0f);
    const Status wrong_layout = runtime->Gemm(Layout::kColMajor, Trans::kNo, 2, 1.0f, a.data(), 2,
                                              *packed, 0.0f, c.data(), 2);
    ASSERT_FALSE(wrong_layout);
    EXPECT_EQ(wrong_layout.error().code, ErrorCode::kInvalidArgument);
    EXPECT_EQ(c, std::vector<float>(2 * 4, 3.0f));
    const Status low_lda = runtime->Gemm(Layout::kRowMajor, Trans::kNo, 2, 1.0f, a.data(), 5,
                                         *packed, 0.0f, c.data(), 4);
    ASSERT_FALSE(low_lda);
    EXPECT_NE(low_lda.error().message.find("lda"), std::string::npos);
    EXPECT_TRUE(runtime->Gemm(Layout::kRowMajor, Trans::kNo, 0, 1.0f, a.data(), 6, *packed, 0.0f,
                              c.data(), 4));  // M = 0: nothing to do
    kept.emplace(std::move(*packed));
  }
  // The runtime is closed; a new one runs the weights packed by the old.
  auto other = Open("");
  ASSERT_NE(other, nullptr);
  std::vector<float> a(3 * 6, 1.0f), c(3 * 4, NAN);
  ASSERT_TRUE(other->Gemm(Layout::kRowMajor, Trans::kNo, 3, 2.0f, a.data(), 6, *kept, 0.0f,
                          c.data(), 4));
  for (float v : c) EXPECT_EQ(v, 12.0f);
}

// One set of weights, panels and a copy, used by several threads at once (each its own A and C).
TEST_F(RuntimeTest, PackedWeightsFromConcurrentCallers) {
  auto runtime = Open("", 2);
  ASSERT_NE(runtime, nullptr);
  std::vector<float> b(300 * 80, 1.0f);
  auto panels = runtime->PackB(Layout::kRowMajor, Trans::kNo, 256, 80, 300, b.data(), 80);
  ASSERT_TRUE(panels) << panels.error().message;
  auto copy = runtime->PackB(Layout::kRowMajor, Trans::kNo, 4, 8, 6, b.data(), 8);
  ASSERT_TRUE(copy) << copy.error().message;
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      const std::int64_t m = 1 + 37 * t;
      std::vector<float> a(static_cast<std::size_t>(m * 300), 1.0f);
      std::vector<float> c(static_cast<std::size_t>(m * 80));
      std::vector<float> small_c(static_cast<std::size_t>(m * 8));
      for (int round = 0; round < 20; ++round) {
        if (!runtime->Gemm(Layout::kRowMajor, Trans::kNo, m, 1.0f, a.data(), 300, *panels, 0.0f,
                           c.data(), 80) ||
            !runtime->Gemm(Layout::kRowMajor, Trans::kNo, m, 2.0f, a.data(), 300, *copy, 0.0f,
                           small_c.data(), 8)) {
          ++wrong;
          return;
        }
        for (float v : c) wrong += v != 300.0f;
        for (float v : small_c) wrong += v != 12.0f;
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(RuntimeTest, CApiPackedWeights) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK) << mmtune_last_error();
  const float b[6] = {1, 0, 0, 1, 1, 1};  // 3x2 row-major
  mmtune_packed_b* packed = nullptr;
  ASSERT_EQ(mmtune_pack_b_f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 2, 3, b, 2, &packed),
            MMTUNE_OK)
      << mmtune_last_error();
  ASSERT_NE(packed, nullptr);
  EXPECT_GE(mmtune_packed_b_bytes(packed), 6 * 4);
  const float a[6] = {1, 2, 3, 4, 5, 6};  // 2x3
  float c[4] = {NAN, NAN, NAN, NAN};
  ASSERT_EQ(mmtune_gemm_f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 2.0f, a, 3,
                                   packed, 0.0f, c, 2),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(c[0], 8.0f);
  EXPECT_EQ(c[1], 10.0f);
  EXPECT_EQ(c[2], 20.0f);
  EXPECT_EQ(c[3], 22.0f);
  // Another dtype's GEMM, NULL handles and operands: one-line errors, C unchanged.
  float cf[4] = {1, 2, 3, 4};
  const mmtune_bf16 abf[6] = {};
  EXPECT_EQ(mmtune_gemm_bf16_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 1.0f, abf, 3,
                                    packed, 0.0f, cf, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("holds f32 weights"), std::string::npos)
      << mmtune_last_error();
  EXPECT_EQ(mmtune_gemm_f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 1.0f, nullptr,
                                   3, packed, 0.0f, cf, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("A is NULL"), std::string::npos);
  EXPECT_EQ(mmtune_gemm_f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 1.0f, a, 3,
                                   nullptr, 0.0f, cf, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(mmtune_gemm_f32_packed(runtime, 7, MMTUNE_NO_TRANS, 2, 1.0f, a, 3, packed, 0.0f, cf,
                                   2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(cf[0], 1.0f);
  mmtune_packed_b* refused = packed;
  EXPECT_EQ(mmtune_pack_b_f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 2, 3, nullptr, 2,
                              &refused),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(refused, nullptr);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_pack_b_f32: B is NULL"),
            std::string::npos)
      << mmtune_last_error();
  EXPECT_EQ(mmtune_pack_b_f32(runtime, MMTUNE_ROW_MAJOR, 99, 2, 2, 3, b, 2, &refused),
            MMTUNE_INVALID_ARGUMENT);
  mmtune_packed_b_free(packed);
  mmtune_packed_b_free(nullptr);

  // u8 x s8 -> s32 with B transposed, column-major: C = A * B.
  const std::int8_t sb[4] = {1, -2, 3, -4};  // op(B) 2x2 col-major transposed: B^T stored
  mmtune_packed_b* packed_s8 = nullptr;
  ASSERT_EQ(mmtune_pack_b_s8(runtime, MMTUNE_COL_MAJOR, MMTUNE_TRANS, 1, 2, 2, sb, 2,
                             &packed_s8),
            MMTUNE_OK)
      << mmtune_last_error();
  const std::uint8_t ua[2] = {5, 7};  // 1x2
  std::int32_t ci[2] = {100, 200};
  ASSERT_EQ(mmtune_gemm_u8s8s32_packed(runtime, MMTUNE_COL_MAJOR, MMTUNE_NO_TRANS, 1, 1, ua, 1,
                                       packed_s8, 1, ci, 1),
            MMTUNE_OK)
      << mmtune_last_error();
  // Stored B^T (col-major 2x2) = [[1, 3], [-2, -4]], so op(B) = [[1, -2], [3, -4]].
  EXPECT_EQ(ci[0], 100 + 5 * 1 + 7 * 3);
  EXPECT_EQ(ci[1], 200 + 5 * -2 + 7 * -4);
  mmtune_packed_b_free(packed_s8);

  // Panels (a packed-family problem) through C: all-ones operands give K everywhere.
  const std::vector<float> ones(300 * 80, 1.0f);
  mmtune_packed_b* panels = nullptr;
  ASSERT_EQ(mmtune_pack_b_f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 256, 80, 300,
                              ones.data(), 80, &panels),
            MMTUNE_OK)
      << mmtune_last_error();
  const std::vector<float> big_a(256 * 300, 1.0f);
  std::vector<float> big_c(256 * 80, NAN);
  ASSERT_EQ(mmtune_gemm_f32_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 256, 1.0f,
                                   big_a.data(), 300, panels, 0.0f, big_c.data(), 80),
            MMTUNE_OK)
      << mmtune_last_error();
  for (float v : big_c) ASSERT_EQ(v, 300.0f);
  mmtune_packed_b_free(panels);
  // f64 and bf16 entry points; NULL out-pointer and runtime.
  const double bd[4] = {1, 2, 3, 4};
  mmtune_packed_b* packed_d = nullptr;
  ASSERT_EQ(mmtune_pack_b_f64(runtime, MMTUNE_COL_MAJOR, MMTUNE_NO_TRANS, 1, 2, 2, bd, 2,
                              &packed_d),
            MMTUNE_OK)
      << mmtune_last_error();
  const double ad[2] = {1, 10};  // 1x2
  double cd[2] = {0, 0};
  ASSERT_EQ(mmtune_gemm_f64_packed(runtime, MMTUNE_COL_MAJOR, MMTUNE_NO_TRANS, 1, 1.0, ad, 1,
                                   packed_d, 0.0, cd, 1),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(cd[0], 1 + 10 * 2);  // column-major B = [[1, 3], [2, 4]]
  EXPECT_EQ(cd[1], 3 + 10 * 4);
  mmtune_packed_b_free(packed_d);
  mmtune_bf16 bb[2];
  const float bf[2] = {2.0f, 3.0f};
  mmtune_f32_to_bf16(bf, bb, 2);
  mmtune_packed_b* packed_bf16 = nullptr;
  ASSERT_EQ(mmtune_pack_b_bf16(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 1, 1, 2, bb, 1,
                               &packed_bf16),
            MMTUNE_OK)
      << mmtune_last_error();
  mmtune_bf16 ab[2];
  mmtune_f32_to_bf16(bf, ab, 2);
  float cb = 0;
  ASSERT_EQ(mmtune_gemm_bf16_packed(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 1, 1.0f, ab, 2,
                                    packed_bf16, 0.0f, &cb, 1),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(cb, 13.0f);
  mmtune_packed_b_free(packed_bf16);
  EXPECT_EQ(mmtune_pack_b_f32(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 2, 3, b, 2, nullptr),
            MMTUNE_INVALID_ARGUMENT);
  mmtune_packed_b* none = nullptr;
  EXPECT_EQ(mmtune_pack_b_f32(nullptr, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS, 2, 2, 3, b, 2, &none),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(mmtune_packed_b_bytes(nullptr), 0);
  mmtune_close(runtime);
}

// ---- Batches (Runtime::GemmBatch). ----

// `count` items of `p` as a strided batch (B shared where `shared_b`) and as pointer arrays
// listing the same items last to first (ExactOperands: exact results, NaN in a float C under
// beta = 0, canaries between the C items never written).
template <typename T>
void ExpectBatchExact(Runtime& runtime, const Problem& p, std::int64_t count, bool shared_b,
                      typename PackedGemmOf<T>::Scalar alpha,
                      typename PackedGemmOf<T>::Scalar beta) {
  using A = typename PackedGemmOf<T>::A;
  using C = typename PackedGemmOf<T>::C;
  ExactOperands<T> x(p, count, shared_b, alpha, beta,
                     static_cast<unsigned>(p.m * 131 + p.n * 7 + p.k + count));
  const BatchStrides& strides = x.strides;
  const std::vector<C> before = x.c;
  const std::string what = p.ToString() + " batch " + std::to_string(count);
  const Status status =
      runtime.GemmBatch(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha, x.a.data(), x.lda,
                        x.b.data(), x.ldb, beta, x.c.data(), x.ldc, strides);
  ASSERT_TRUE(status) << what << ": " << status.error().message;
  for (std::size_t i = 0; i < x.c.size(); ++i) {
    ASSERT_EQ(x.c[i], x.expected[i]) << what << " (strided) C storage element " << i;
  }
  x.c = before;
  std::vector<const A*> a_items;
  std::vector<const T*> b_items;
  std::vector<C*> c_items;
  for (std::int64_t item = count - 1; item >= 0; --item) {
    a_items.push_back(x.a.data() + item * strides.a);
    b_items.push_back(x.b.data() + item * strides.b);
    c_items.push_back(x.c.data() + item * strides.c);
  }
  const Status listed =
      runtime.GemmBatch(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, alpha, a_items.data(),
                        x.lda, b_items.data(), x.ldb, beta, c_items.data(), x.ldc, count);
  ASSERT_TRUE(listed) << what << ": " << listed.error().message;
  for (std::size_t i = 0; i < x.c.size(); ++i) {
    ASSERT_EQ(x.c[i], x.expected[i]) << what << " (pointer arrays) C storage element " << i;
  }
}

template <typename T>
void ExpectBatchesExactEverywhere(Runtime& runtime, DType dtype) {
  using Scalar = typename PackedGemmOf<T>::Scalar;
  for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
    for (Trans ta : {Trans::kNo, Trans::kYes}) {
      for (Trans tb : {Trans::kNo, Trans::kYes}) {
        // Attention-like items, a decode step, and a shape of the packed family; fewer, as
        // many and more items than threads.
        for (const Problem& p : {MakeProblem(16, 24, 8, 1, dtype, layout, ta, tb),
                                 MakeProblem(1, 37, 19, 1, dtype, layout, ta, tb),
                                 MakeProblem(70, 90, 130, 1, dtype, layout, ta, tb)}) {
          for (std::int64_t count : {1, 2, 5}) {
            ExpectBatchExact<T>(runtime, p, count, count == 5, Scalar(1), Scalar(0));
          }
          ExpectBatchExact<T>(runtime, p, 3, false, Scalar(2), Scalar(-1));
        }
      }
    }
  }
}

TEST_F(RuntimeTest, BatchesExactInEveryDtypeLayoutTransposeAndCount) {
  for (int threads : {1, 2}) {
    auto runtime = Open("", threads);
    ASSERT_NE(runtime, nullptr);
    ExpectBatchesExactEverywhere<float>(*runtime, DType::kF32);
    ExpectBatchesExactEverywhere<double>(*runtime, DType::kF64);
    ExpectBatchesExactEverywhere<BFloat16>(*runtime, DType::kBF16);
    ExpectBatchesExactEverywhere<std::int8_t>(*runtime, DType::kS8);
  }
}

// A batch whose operands spill L2, as many items as threads or more, runs each untuned item
// alone with SpilledItemsConfig (a direct tile as wide as N, or the packed family, as the
// core's facts say; docs/analytical-model.md, Batches), exactly; a batch that fits L2 with the
// item's own default.
TEST_F(RuntimeTest, SpilledBatchesRunTheirItemsWithTheColdItemsConfig) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    auto runtime = Open("", threads);
    ASSERT_NE(runtime, nullptr);
    if (runtime->max_threads() < threads) GTEST_SKIP() << "fewer cores than threads";
    const Problem item = MakeProblem(128, 64, 128, 1);
    for (std::int64_t count : {2, 64}) {
      const bool spills = BatchSpillsL2(item, count, CacheBudgetOf(machine_));
      ASSERT_EQ(spills, count == 64) << "L2 of " << CacheBudgetOf(machine_).l2 << " bytes";
      Problem batch = item;
      batch.batch = count;
      KernelConfig expected =
          spills ? SpilledItemsConfig(item, machine_) : UntunedConfig(item, machine_);
      expected.threads = threads;
      const LookupReport report = runtime->Lookup(batch);
      EXPECT_EQ(report.tier, LookupTier::kDefault);
      EXPECT_EQ(report.config_text, expected.ToString()) << count << " items";
    }
    ExpectBatchExact<float>(*runtime, item, 64, false, 1.0f, 0.0f);
    ExpectBatchExact<double>(*runtime, MakeProblem(128, 32, 128, 1, DType::kF64), 64, true, 2.0,
                             -1.0);
  }
}

// A batch of whole items per thread is recorded as the problem of one item on one thread, the
// one `mmtune tune --from-record` should tune for it; fewer items than threads as a plain call.
TEST_F(RuntimeTest, BatchesRecordTheProblemTheirItemsRun) {
  const std::string record = Path("batch.record");
  {
    auto runtime = Open("", 2, record);
    ASSERT_NE(runtime, nullptr);
    if (runtime->max_threads() < 2) GTEST_SKIP() << "one core: no batch splits across threads";
    std::vector<float> a(4 * 6 * 5, 1.0f), b(6 * 7, 1.0f), c(4 * 6 * 7, 0.0f);
    ASSERT_TRUE(runtime->GemmBatch(Layout::kRowMajor, Trans::kNo, Trans::kNo, 6, 7, 5, 1.0f,
                                   a.data(), 5, b.data(), 7, 0.0f, c.data(), 7,
                                   BatchStrides{4, 30, 0, 42}));
    for (float v : c) ASSERT_EQ(v, 5.0f);
    ASSERT_TRUE(runtime->GemmBatch(Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 7, 5, 1.0f,
                                   a.data(), 5, b.data(), 7, 0.0f, c.data(), 7,
                                   BatchStrides{1, 0, 0, 0}));
  }
  auto recorded = ReadRecordFile(record);
  ASSERT_TRUE(recorded) << recorded.error().message;
  std::vector<std::string> problems;
  for (const auto& entry : *recorded) problems.push_back(entry.problem.ToString());
  std::sort(problems.begin(), problems.end());
  EXPECT_EQ(problems, (std::vector<std::string>{"f32 row NN 6x7x5 t1", "f32 row NN 9x7x5 t2"}));
}

// A batch with a fused epilogue: every item gets the bias (the same vector, per column or per
// row) and the activation, its padding and the other items untouched (ExactOperands' integers
// keep the sums exact, relu keeps them so).
template <typename T>
void ExpectBatchEpilogueExact(Runtime& runtime, const Problem& p, std::int64_t count,
                              BiasKind bias_kind) {
  using C = typename PackedGemmOf<T>::C;
  using Scalar = typename PackedGemmOf<T>::Scalar;
  ExactOperands<T> x(p, count, false, Scalar(2), Scalar(-1),
                     static_cast<unsigned>(p.m * 7 + p.n + count));
  std::vector<C> bias(static_cast<std::size_t>(bias_kind == BiasKind::kPerRow ? p.m : p.n));
  for (std::size_t i = 0; i < bias.size(); ++i) bias[i] = static_cast<C>(int(i % 7) - 3);
  std::vector<C> want = x.expected;
  for (std::int64_t item = 0; item < count; ++item) {
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t j = 0; j < p.n; ++j) {
        C& value = want[static_cast<std::size_t>(item * x.strides.c +
                                                 StoredOffset(p.layout, i, j, x.ldc))];
        value = std::max(C(0), static_cast<C>(value + bias[static_cast<std::size_t>(
                                                          bias_kind == BiasKind::kPerRow ? i : j)]));
      }
    }
  }
  const Epilogue<C> epilogue{bias_kind, bias.data(), Activation::kRelu};
  const std::string what = p.ToString() + " batch " + std::to_string(count) + " bias " +
                           ToString(bias_kind);
  const Status status =
      runtime.GemmBatch(p.layout, p.trans_a, p.trans_b, p.m, p.n, p.k, Scalar(2), x.a.data(),
                        x.lda, x.b.data(), x.ldb, Scalar(-1), x.c.data(), x.ldc, x.strides,
                        epilogue);
  ASSERT_TRUE(status) << what << ": " << status.error().message;
  for (std::size_t i = 0; i < x.c.size(); ++i) {
    ASSERT_EQ(x.c[i], want[i]) << what << " C storage element " << i;
  }
}

TEST_F(RuntimeTest, BatchesRunFusedEpilogues) {
  for (int threads : {1, 2}) {
    auto runtime = Open("", threads);
    ASSERT_NE(runtime, nullptr);
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Trans ta : {Trans::kNo, Trans::kYes}) {
        for (BiasKind bias : {BiasKind::kPerColumn, BiasKind::kPerRow}) {
          for (std::int64_t count : {1, 3}) {
            auto p = [&](DType dtype) {
              return MakeProblem(13, 21, 17, threads, dtype, layout, ta, Trans::kNo);
            };
            ExpectBatchEpilogueExact<float>(*runtime, p(DType::kF32), count, bias);
            ExpectBatchEpilogueExact<double>(*runtime, p(DType::kF64), count, bias);
            ExpectBatchEpilogueExact<BFloat16>(*runtime, p(DType::kBF16), count, bias);
            ExpectBatchEpilogueExact<std::int8_t>(*runtime, p(DType::kS8), count, bias);
          }
        }
      }
    }
    // A malformed epilogue is refused with nothing written, an empty batch's too.
    std::vector<float> a(4 * 4, 1.0f), b(4 * 4, 1.0f), c(2 * 16, -1.0f);
    const Epilogue<float> no_bias{BiasKind::kPerColumn, nullptr, Activation::kNone};
    for (std::int64_t count : {0, 2}) {
      const Status refused = runtime->GemmBatch(
          Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, 1.0f, a.data(), 4, b.data(), 4,
          0.0f, c.data(), 4, BatchStrides{count, 16, 0, 16}, no_bias);
      ASSERT_FALSE(refused.ok()) << count;
      EXPECT_EQ(refused.error().code, ErrorCode::kInvalidArgument);
      for (float v : c) ASSERT_EQ(v, -1.0f);
    }
  }
}

// A batch of a count `tune --batch` tuned runs that count's winner for its shape (exact in
// every layout and transpose); other counts, and single calls, run what they ran before. Seen
// through Lookup and the record file, which counts only calls without an exact winner and
// names a batch of an untuned count by the problem its items run.
TEST_F(RuntimeTest, BatchesRunTheWinnerTunedForTheirCount) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE(threads);
    const Problem item = MakeProblem(24, 40, 36, threads);
    Problem tuned = item;
    tuned.batch = 6;
    const KernelConfig tuned_default = ModelConfig(tuned, machine_);
    const KernelConfig item_default = ModelConfig(item, machine_);
    KernelConfig marked = MarkedConfig(tuned, machine_);
    // A winner that neither default runs (the generic level's model unrolls k itself).
    if (marked == tuned_default || marked == item_default) marked.k_unroll = 1;
    ASSERT_NE(marked, tuned_default);
    ASSERT_NE(marked, item_default);
    ASSERT_EQ(marked.threads, threads);
    const std::string db = MakeDb("batch" + std::to_string(threads) + ".db",
                                  {Winner(tuned, marked, 30.0, machine_.fingerprint)});
    const std::string record = Path("batch_calls" + std::to_string(threads) + ".json");
    {
      auto runtime = Open(db, threads, record);
      ASSERT_NE(runtime, nullptr);
      if (runtime->max_threads() < threads) GTEST_SKIP() << "fewer cores than threads";
      const LookupReport batch = runtime->Lookup(tuned);
      EXPECT_EQ(batch.tier, LookupTier::kExact);
      EXPECT_EQ(batch.config_text, marked.ToString());
      EXPECT_EQ(batch.tuned, tuned);
      Problem other_count = tuned;
      other_count.batch = 5;
      EXPECT_EQ(runtime->Lookup(other_count).tier, LookupTier::kDefault);
      EXPECT_NE(runtime->Lookup(other_count).config_text, marked.ToString());
      EXPECT_NE(runtime->Lookup(item).config_text, marked.ToString());
      if (threads == 1) {  // C: mmtune_lookup_batch_json says the same
        mmtune_options options;
        mmtune_options_init(&options);
        options.db_path = db.c_str();
        options.max_threads = 1;
        mmtune_runtime* c_runtime = nullptr;
        ASSERT_EQ(mmtune_open_with_options(&options, &c_runtime), MMTUNE_OK);
        char text[4096];
        ASSERT_GT(mmtune_lookup_batch_json(c_runtime, "f32", MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                           MMTUNE_NO_TRANS, 24, 40, 36, 6, text, sizeof text),
                  0)
            << mmtune_last_error();
        const nlohmann::json report = nlohmann::json::parse(text);
        EXPECT_EQ(report["tier"], "exact");
        EXPECT_EQ(report["config"], marked.ToString());
        EXPECT_EQ(mmtune_lookup_batch_json(c_runtime, "f32", MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                           MMTUNE_NO_TRANS, 24, 40, 36, 0, text, sizeof text),
                  -1);
        EXPECT_NE(std::string(mmtune_last_error()).find("batch"), std::string::npos);
        mmtune_close(c_runtime);
      }
      for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
        for (Trans ta : {Trans::kNo, Trans::kYes}) {
          const Problem p = MakeProblem(24, 40, 36, threads, DType::kF32, layout, ta);
          ExpectBatchExact<float>(*runtime, p, 6, false, 1.0f, 0.0f);
          ExpectBatchExact<float>(*runtime, p, 5, true, 2.0f, -1.0f);
        }
      }
    }  // closing writes the record
    auto recorded = ReadRecordFile(record);
    ASSERT_TRUE(recorded) << recorded.error().message;
    std::vector<std::string> problems;
    for (const auto& entry : *recorded) problems.push_back(entry.problem.ToString());
    std::sort(problems.begin(), problems.end());
    // The tuned count ran its winner, exactly, in row-major NN alone; every other call is
    // recorded, a batch of 5 as its items (alone where there are items for every thread).
    const std::string t = " t" + std::to_string(5 >= threads ? 1 : threads);
    EXPECT_EQ(problems, (std::vector<std::string>{
                            "f32 col NN 24x40x36" + t, "f32 col NN 24x40x36 t" +
                            std::to_string(threads) + " batch:6", "f32 col TN 24x40x36" + t,
                            "f32 col TN 24x40x36 t" + std::to_string(threads) + " batch:6",
                            "f32 row NN 24x40x36" + t, "f32 row TN 24x40x36" + t,
                            "f32 row TN 24x40x36 t" + std::to_string(threads) + " batch:6"}));
  }
}

TEST_F(RuntimeTest, BatchesRefuseMalformedArgumentsAndWriteNothing) {
  auto runtime = Open("", 2);
  ASSERT_NE(runtime, nullptr);
  std::vector<float> a(3 * 20, 1.0f), b(20, 1.0f), c(3 * 20, -1.0f);
  const std::vector<float> before = c;
  auto batch = [&](std::int64_t lda, BatchStrides strides) {
    return runtime->GemmBatch(Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, 1.0f,
                              a.data(), lda, b.data(), 4, 0.0f, c.data(), 4, strides);
  };
  const Status negative = batch(4, BatchStrides{-1, 16, 0, 16});
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.error().message.find("count must be >= 0"), std::string::npos);
  const Status overlap = batch(4, BatchStrides{3, 16, 0, 15});
  ASSERT_FALSE(overlap);
  EXPECT_NE(overlap.error().message.find("would overlap"), std::string::npos);
  const Status short_lda = batch(3, BatchStrides{3, 16, 0, 16});
  ASSERT_FALSE(short_lda);
  EXPECT_NE(short_lda.error().message.find("lda"), std::string::npos);
  const Status no_arrays = runtime->GemmBatch(
      Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, 1.0f, static_cast<const float**>(nullptr),
      4, static_cast<const float**>(nullptr), 4, 0.0f, static_cast<float**>(nullptr), 4, 2);
  ASSERT_FALSE(no_arrays);
  EXPECT_EQ(c, before);
  // An empty batch computes nothing and needs no operands.
  EXPECT_TRUE(runtime->GemmBatch(Layout::kRowMajor, Trans::kNo, Trans::kNo, 4, 4, 4, 1.0f,
                                 static_cast<const float*>(nullptr), 4, nullptr, 4, 0.0f,
                                 nullptr, 4, BatchStrides{}));
}

TEST_F(RuntimeTest, CApiBatches) {
  mmtune_runtime* runtime = nullptr;
  ASSERT_EQ(mmtune_open(nullptr, &runtime), MMTUNE_OK) << mmtune_last_error();
  // Two items of 1x2 = (1x2)(2x2), B shared: [1 2] and [3 4] times [[1 0] [1 1]].
  const float a[4] = {1, 2, 3, 4};
  const float b[4] = {1, 0, 1, 1};
  float c[5] = {NAN, NAN, -1, NAN, NAN};  // C items at 0 and 3, a canary between
  ASSERT_EQ(mmtune_sgemm_batch_strided(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                       MMTUNE_NO_TRANS, 1, 2, 2, 1.0f, a, 2, 2, b, 2, 0, 0.0f, c,
                                       2, 3, 2),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(c[0], 3.0f);
  EXPECT_EQ(c[1], 2.0f);
  EXPECT_EQ(c[2], -1.0f);
  EXPECT_EQ(c[3], 7.0f);
  EXPECT_EQ(c[4], 4.0f);
  EXPECT_EQ(mmtune_sgemm_batch_strided(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                       MMTUNE_NO_TRANS, 1, 2, 2, 1.0f, a, 2, 2, b, 2, 0, 0.0f, c,
                                       2, 1, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("mmtune_sgemm_batch_strided: batch stride of C"),
            std::string::npos)
      << mmtune_last_error();

  // u8 x s8 -> s32 through pointer arrays; a NULL item is named.
  const std::uint8_t ua[2] = {5, 7};
  const std::int8_t sb[2] = {-2, 3};
  std::int32_t c0 = 100, c1 = 200;
  const std::uint8_t* a_items[2] = {ua, ua + 1};
  const std::int8_t* b_items[2] = {sb, sb + 1};
  std::int32_t* c_items[2] = {&c0, &c1};
  ASSERT_EQ(mmtune_gemm_u8s8s32_batch(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                      MMTUNE_NO_TRANS, 1, 1, 1, 2, a_items, 1, b_items, 1, 1,
                                      c_items, 1, 2),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(c0, 100 + 2 * 5 * -2);
  EXPECT_EQ(c1, 200 + 2 * 7 * 3);
  b_items[1] = nullptr;
  EXPECT_EQ(mmtune_gemm_u8s8s32_batch(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                      MMTUNE_NO_TRANS, 1, 1, 1, 2, a_items, 1, b_items, 1, 1,
                                      c_items, 1, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("B is NULL (item 1)"), std::string::npos)
      << mmtune_last_error();
  EXPECT_EQ(c0, 100 + 2 * 5 * -2);  // nothing written
  EXPECT_EQ(mmtune_gemm_u8s8s32_batch(runtime, MMTUNE_ROW_MAJOR, MMTUNE_NO_TRANS,
                                      MMTUNE_NO_TRANS, 1, 1, 1, 2, nullptr, 1, b_items, 1, 1,
                                      c_items, 1, 2),
            MMTUNE_INVALID_ARGUMENT);
  EXPECT_NE(std::string(mmtune_last_error()).find("A's pointer array is NULL"),
            std::string::npos);
  // bf16 and f64 entry points, one item each.
  const mmtune_bf16 one = mmtune::ToBFloat16(1.0f).bits;
  const mmtune_bf16* bf_items[1] = {&one};
  float cf = 0;
  float* cf_items[1] = {&cf};
  ASSERT_EQ(mmtune_gemm_bf16_batch(runtime, MMTUNE_COL_MAJOR, MMTUNE_TRANS, MMTUNE_NO_TRANS, 1,
                                   1, 1, 3.0f, bf_items, 1, bf_items, 1, 0.0f, cf_items, 1, 1),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(cf, 3.0f);
  const double ad[2] = {2, 5};
  double cd[2] = {0, 0};
  ASSERT_EQ(mmtune_dgemm_batch_strided(runtime, MMTUNE_COL_MAJOR, MMTUNE_NO_TRANS,
                                       MMTUNE_NO_TRANS, 1, 1, 1, 1.0, ad, 1, 1, ad, 1, 1, 0.0,
                                       cd, 1, 1, 2),
            MMTUNE_OK)
      << mmtune_last_error();
  EXPECT_EQ(cd[0], 4.0);
  EXPECT_EQ(cd[1], 25.0);
  mmtune_close(runtime);
}

}  // namespace
}  // namespace mmtune
