// Batched GEMMs (GemmPlan::RunBatch): strided batches and pointer arrays, every dtype, both
// layouts and every transpose pair, the analytical default's family for each shape (gemv, direct,
// packed), one and two threads, batches of 0 to 5 items (fewer and more items than threads).
// Operands are small integers, so results are exact and compared element by element with a
// reference computed here; canaries fill the gaps between the C items and the space around
// them. Malformed batches are refused before anything is written.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/default_config.h"
#include "kernels/gemm.h"
#include "kernels/gemm_args.h"
#include "kernels/workspace.h"
#include "machine/machine.h"
#include "small_integers.h"

namespace mmtune {
namespace {

using testing::FromInt;
using testing::MakeStored;
using testing::Stored;
using testing::TwoMembers;

constexpr std::int64_t kGap = 5;  // canary elements between (and around) consecutive C items

template <typename X>
using CType = typename GemmTypes<X>::C;

template <typename X>
constexpr CType<X> kCanary = CType<X>(-7777);

struct Shape3 {
  std::int64_t m, n, k;
};

// `count` GEMMs of one shape laid out as a strided batch (B shared by every item where
// `shared_b`), with the expected C storage after a correct run.
template <typename X>
struct BatchCase {
  using A = typename GemmTypes<X>::A;
  using B = typename GemmTypes<X>::B;
  using C = CType<X>;
  std::vector<A> a;
  std::vector<B> b;
  std::vector<C> c;
  std::vector<C> expected;
  GemmArgs<X> args;  // item 0's operands
  BatchStrides strides;

  BatchCase(Layout layout, Trans ta, Trans tb, Shape3 s, std::int64_t count, bool shared_b,
            typename GemmTypes<X>::Scalar alpha, typename GemmTypes<X>::Scalar beta,
            std::mt19937& rng) {
    std::vector<Stored<A>> as;
    std::vector<Stored<B>> bs;
    for (std::int64_t item = 0; item < count; ++item) {
      as.push_back(MakeStored<A>(layout, ta, s.m, s.k, rng));
      if (!shared_b || item == 0) bs.push_back(MakeStored<B>(layout, tb, s.k, s.n, rng));
    }
    const Stored<A> a0 = MakeStored<A>(layout, ta, s.m, s.k, rng);  // sizes for count = 0
    const Stored<B> b0 = MakeStored<B>(layout, tb, s.k, s.n, rng);
    strides.count = count;
    strides.a = static_cast<std::int64_t>(a0.values.size()) + 1;
    strides.b = shared_b ? 0 : static_cast<std::int64_t>(b0.values.size()) + 2;
    const std::int64_t ldc = MinLeadingDimension(layout, Trans::kNo, s.m, s.n) + 2;
    const std::int64_t c_extent =
        s.m == 0 || s.n == 0 ? 0
                             : (layout == Layout::kRowMajor ? (s.m - 1) * ldc + s.n
                                                            : (s.n - 1) * ldc + s.m);
    strides.c = c_extent + kGap;
    a.assign(static_cast<std::size_t>(std::max<std::int64_t>(count, 1) * strides.a), A{});
    b.assign(static_cast<std::size_t>(std::max<std::int64_t>(count, 1) * strides.b +
                                      b0.values.size()),
             B{});
    c.assign(static_cast<std::size_t>(kGap + std::max<std::int64_t>(count, 1) * strides.c),
             kCanary<X>);
    for (std::int64_t item = 0; item < count; ++item) {
      std::copy(as[item].values.begin(), as[item].values.end(), a.begin() + item * strides.a);
      if (!shared_b) {
        std::copy(bs[item].values.begin(), bs[item].values.end(), b.begin() + item * strides.b);
      }
    }
    if (shared_b && count > 0) std::copy(bs[0].values.begin(), bs[0].values.end(), b.begin());
    expected = c;
    std::uniform_int_distribution<int> small(-3, 3);
    for (std::int64_t item = 0; item < count; ++item) {
      const Stored<A>& ai = as[item];
      const Stored<B>& bi = bs[shared_b ? 0 : item];
      for (std::int64_t i = 0; i < s.m; ++i) {
        for (std::int64_t j = 0; j < s.n; ++j) {
          const auto at =
              static_cast<std::size_t>(kGap + item * strides.c + StoredOffset(layout, i, j, ldc));
          const C old = beta == 0 && std::is_floating_point_v<C>
                            ? std::numeric_limits<C>::quiet_NaN()
                            : static_cast<C>(small(rng));
          c[at] = old;
          double sum = 0;
          for (std::int64_t q = 0; q < s.k; ++q) sum += ai.At(i, q) * bi.At(q, j);
          double value = static_cast<double>(alpha) * sum;
          if (beta != 0) value += static_cast<double>(beta) * static_cast<double>(old);
          expected[at] = static_cast<C>(value);
        }
      }
    }
    args = GemmArgs<X>{layout, ta,    tb,       s.m,  s.n,           s.k, alpha, a.data(),
                       a0.ld,  b.data(), b0.ld, beta, c.data() + kGap, ldc, {}};
  }

  // Every element of C's storage, canaries included, against the expected one.
  int Mismatches() const {
    int bad = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (c[i] != expected[i] && bad++ < 3) {
        ADD_FAILURE() << "C storage element " << i << ": got " << c[i] << ", expected "
                      << expected[i];
      }
    }
    return bad;
  }
};

template <typename X>
GemmPlan<X> PlanFor(const Machine& machine, Layout layout, Trans ta, Trans tb, Shape3 s,
                    int threads) {
  const Problem problem{GemmTypes<X>::kDType, layout, ta, tb, s.m, s.n, s.k, threads};
  KernelConfig config = ModelConfig(problem, machine);
  config.threads = threads;
  auto plan = GemmPlan<X>::Create(config);
  EXPECT_TRUE(plan.ok()) << plan.error().message;
  return std::move(*plan);
}

template <typename X>
class GemmBatchTest : public ::testing::Test {};
using GemmTypesUnderTest = ::testing::Types<float, double, Bf16Gemm, S8Gemm>;
TYPED_TEST_SUITE(GemmBatchTest, GemmTypesUnderTest);

TYPED_TEST(GemmBatchTest, StridedAndPointerBatchesMatchTheReference) {
  using X = TypeParam;
  using Scalar = typename GemmTypes<X>::Scalar;
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  std::mt19937 rng(23);
  // Single elements, M = 1 and N = 1 (gemv), small and medium (direct or packed) with primes,
  // K = 0 (C only scaled: zeros over NaN under beta = 0) and M = 0 (nothing to write).
  const Shape3 shapes[] = {{1, 1, 1}, {1, 37, 19}, {23, 1, 9}, {7, 13, 17},
                           {45, 70, 33}, {6, 5, 0}, {0, 5, 3}};
  for (const Shape3 s : shapes) {
    for (Layout layout : {Layout::kRowMajor, Layout::kColMajor}) {
      for (Trans ta : {Trans::kNo, Trans::kYes}) {
        for (Trans tb : {Trans::kNo, Trans::kYes}) {
          for (int threads : {1, 2}) {
            const GemmPlan<X> plan = PlanFor<X>(*machine, layout, ta, tb, s, threads);
            for (std::int64_t count : {0, 1, 3, 5}) {
              const bool shared_b = count == 3;
              const bool plain = count != 5;
              SCOPED_TRACE(plan.config().ToString() + " " + ToString(layout) + " " +
                           TransPairToString(ta, tb) + " " + std::to_string(s.m) + "x" +
                           std::to_string(s.n) + "x" + std::to_string(s.k) + " batch " +
                           std::to_string(count) + (shared_b ? " shared B" : ""));
              BatchCase<X> strided(layout, ta, tb, s, count, shared_b, Scalar(plain ? 1 : 2),
                                   Scalar(plain ? 0 : -1), rng);
              BatchCase<X> arrays = strided;
              arrays.args.a = arrays.a.data();  // its own buffers, not the copied pointers
              arrays.args.b = arrays.b.data();
              arrays.args.c = arrays.c.data() + kGap;
              const Status status = plan.RunBatch(strided.args, strided.strides, TwoMembers());
              ASSERT_TRUE(status.ok()) << status.error().message;
              EXPECT_EQ(strided.Mismatches(), 0) << "strided";

              // The same items through pointer arrays, listed last to first.
              std::vector<const typename GemmTypes<X>::A*> a_items;
              std::vector<const typename GemmTypes<X>::B*> b_items;
              std::vector<CType<X>*> c_items;
              const BatchStrides& st = arrays.strides;
              for (std::int64_t item = count - 1; item >= 0; --item) {
                a_items.push_back(arrays.args.a + item * st.a);
                b_items.push_back(arrays.args.b + item * st.b);
                c_items.push_back(arrays.args.c + item * st.c);
              }
              const Status listed = plan.RunBatch(arrays.args, count, a_items.data(),
                                                  b_items.data(), c_items.data(), TwoMembers());
              ASSERT_TRUE(listed.ok()) << listed.error().message;
              EXPECT_EQ(arrays.Mismatches(), 0) << "pointer arrays";
              if (::testing::Test::HasFailure()) return;
            }
          }
        }
      }
    }
  }
}

TEST(GemmBatchErrorsTest, MalformedBatchesAreRefusedAndWriteNothing) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  std::mt19937 rng(3);
  const Shape3 s{9, 11, 7};
  const GemmPlan<float> plan =
      PlanFor<float>(*machine, Layout::kRowMajor, Trans::kNo, Trans::kNo, s, 2);
  BatchCase<float> batch(Layout::kRowMajor, Trans::kNo, Trans::kNo, s, 3, false, 1, 1, rng);
  const std::vector<float> before = batch.c;
  auto refused = [&](BatchStrides strides, const std::string& says) {
    const Status status = plan.RunBatch(batch.args, strides, TwoMembers());
    ASSERT_FALSE(status.ok()) << says;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(says), std::string::npos) << status.error().message;
    EXPECT_EQ(batch.c, before);
  };
  BatchStrides strides = batch.strides;
  strides.count = -1;
  refused(strides, "count must be >= 0");
  strides = batch.strides;
  strides.a = -1;
  refused(strides, "strides must be >= 0");
  strides = batch.strides;
  strides.c = (s.m - 1) * batch.args.ldc + s.n - 1;  // one element short of a whole C
  refused(strides, "would overlap");
  strides = batch.strides;
  strides.b = std::numeric_limits<std::int64_t>::max() / 2;
  refused(strides, "overflow");

  GemmArgs<float> bad_ld = batch.args;
  bad_ld.lda = s.k - 1;
  const Status ld_status = plan.RunBatch(bad_ld, batch.strides, TwoMembers());
  ASSERT_FALSE(ld_status.ok());
  EXPECT_NE(ld_status.error().message.find("lda"), std::string::npos);
  const Status no_arrays =
      plan.RunBatch(batch.args, 3, nullptr, nullptr, nullptr, TwoMembers());
  ASSERT_FALSE(no_arrays.ok());
  EXPECT_NE(no_arrays.error().message.find("must not be null"), std::string::npos);
  EXPECT_EQ(batch.c, before);
  // An empty batch needs no operands at all.
  EXPECT_TRUE(plan.RunBatch(batch.args, 0, nullptr, nullptr, nullptr, TwoMembers()).ok());
  EXPECT_TRUE(plan.RunBatch(batch.args, BatchStrides{}, TwoMembers()).ok());
  // A batch of one never moves by its strides, whatever they are.
  BatchCase<float> one(Layout::kRowMajor, Trans::kNo, Trans::kNo, s, 1, false, 1, 0, rng);
  const Status single = plan.RunBatch(
      one.args, BatchStrides{1, -5, std::numeric_limits<std::int64_t>::max(), 0}, TwoMembers());
  ASSERT_TRUE(single.ok()) << single.error().message;
  EXPECT_EQ(one.Mismatches(), 0);
}

// Where scratch memory runs out, no item is half-written: each is done or unchanged (items of
// one shape ask for the same scratch, so here every one of them is refused).
TEST(GemmBatchErrorsTest, ScratchShortageLeavesEveryItemWholeOrUnchanged) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  std::mt19937 rng(8);
  const Shape3 s{64, 64, 64};
  KernelConfig config = ModelConfig(
      Problem{DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, s.m, s.n, s.k, 2},
      *machine);
  config.family = KernelFamily::kPacked;  // packs A and B into scratch memory
  config.mc = config.mr;
  config.nc = config.nr;
  config.kc = 16;
  config.threads = 2;
  auto plan = GemmPlan<float>::Create(config);
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  BatchCase<float> batch(Layout::kRowMajor, Trans::kNo, Trans::kNo, s, 4, false, 1, 1, rng);
  const std::vector<float> before = batch.c;
  SetWorkspaceLimit(64);
  const Status status = plan->RunBatch(batch.args, batch.strides, TwoMembers());
  SetWorkspaceLimit(0);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::kIo);
  for (std::int64_t item = 0; item < 4; ++item) {
    const auto first = static_cast<std::size_t>(kGap + item * batch.strides.c);
    const auto last = first + static_cast<std::size_t>(batch.strides.c - kGap);
    const bool unchanged = std::equal(batch.c.begin() + first, batch.c.begin() + last,
                                      before.begin() + first);
    const bool done = std::equal(batch.c.begin() + first, batch.c.begin() + last,
                                 batch.expected.begin() + first);
    EXPECT_TRUE(unchanged || done) << "item " << item << " is half-written";
    EXPECT_TRUE(unchanged) << "item " << item << " ran without its scratch memory";
  }
}

}  // namespace
}  // namespace mmtune
