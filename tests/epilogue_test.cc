// Fused epilogues (mmtune/types.h: Epilogue). The activations of every ISA level's epilogue
// functions against a reference in double, with the documented NaN and infinity results; then
// GEMMs with a bias and an activation in every dtype, through every family (gemv, direct,
// packed, A read in place), in k blocks, on one and two threads, both layouts and every
// transpose pair; the special values through every level's kernels; and s8 GEMMs dequantized to
// f32 the same ways. Operands are small integers, so the product is exact and only the
// epilogue's own rounding is allowed for; canaries around C show a write outside it, NaN in C
// under beta = 0 shows a read of the old C.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gemm_test_util.h"
#include "kernels/default_config.h"
#include "kernels/epilogue.h"
#include "kernels/gemm.h"
#include "kernels/gemm_args.h"
#include "kernels/reference_gemm.h"
#include "machine/machine.h"
#include "small_integers.h"

namespace mmtune {
namespace {

using testing::MakeStored;
using testing::RunnableLevels;
using testing::Stored;
using testing::TwoMembers;

constexpr Activation kActivations[] = {Activation::kNone, Activation::kRelu, Activation::kGelu,
                                       Activation::kSilu};

// The error an activation of C type `C` may make: none for relu and the identity; for those
// that take an exponential a relative error of a few units in the last place (e^z carries the
// relative error of z times |z|, up to ~90 for f32), and results below 1e-30 (f32) or 1e-300
// (f64) may come out as zero (mmtune/types.h).
template <typename C>
bool Close(Activation activation, C got, double want) {
  if (std::isnan(want)) return std::isnan(static_cast<double>(got));
  if (activation == Activation::kNone || activation == Activation::kRelu) {
    return static_cast<double>(got) == want;
  }
  if (std::isinf(want)) return static_cast<double>(got) == want;
  const double relative = std::is_same_v<C, float> ? 2e-5 : 1e-12;
  const double tiny = std::is_same_v<C, float> ? 1e-30 : 1e-300;
  return std::abs(static_cast<double>(got) - want) <= relative * std::abs(want) + tiny;
}


// The values where the exponential leaves its range, where x^2 overflows (f32), and the special
// values: what the activations must take as documented.
template <typename C>
std::vector<C> ActivationEdges() {
  using Limits = std::numeric_limits<C>;
  std::vector<C> values;
  for (double x : {-1e30, -1e20, -1e10, -745.0, -709.0, -120.0, -104.0, -90.0, -88.5, -87.5,
                   -45.0, -11.0, -10.0, -9.5, -5.5, -1.0, -1e-30, 1e-30, 0.5, 6.0, 9.5, 30.0,
                   88.5, 90.0, 709.5, 1e10, 1e20, 1e30}) {
    values.push_back(static_cast<C>(x));
  }
  values.insert(values.end(), {C(0), C(-0.0), Limits::quiet_NaN(), Limits::infinity(),
                               -Limits::infinity(), Limits::max(), Limits::lowest(),
                               Limits::denorm_min(), Limits::min()});
  return values;
}

template <typename C>
class ActivationTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ActivationTest, FloatTypes);

// Every activation of every runnable level over a sweep through the range where they bend, the
// values where the exponential leaves its range, and the special values, in a row (unit column
// stride, long enough for the vector loops) and down a column (strided): each element against
// the reference, and the canaries between strided elements untouched.
TYPED_TEST(ActivationTest, EveryLevelMatchesTheReference) {
  using C = TypeParam;
  using Limits = std::numeric_limits<C>;
  std::vector<C> inputs;
  for (int i = -400; i <= 400; ++i) inputs.push_back(static_cast<C>(i * 0.037));
  const std::vector<C> edges = ActivationEdges<C>();
  inputs.insert(inputs.end(), edges.begin(), edges.end());
  const auto n = static_cast<std::int64_t>(inputs.size());
  for (IsaLevel isa : RunnableLevels()) {
    for (Activation activation : kActivations) {
      SCOPED_TRACE(std::string(ToString(isa)) + " " + ToString(activation));
      const EpilogueFn<C> fn = FindEpilogue<C>(EpilogueKernels(isa), BiasKind::kNone, activation);
      std::vector<C> row = inputs;
      fn(row.data(), 0, 1, 1, n, nullptr);
      constexpr C kCanaryValue = C(-98765.25);
      std::vector<C> column(static_cast<std::size_t>(2 * n), kCanaryValue);
      for (std::int64_t i = 0; i < n; ++i) column[static_cast<std::size_t>(2 * i)] = inputs[i];
      fn(column.data(), 2, 1, n, 1, nullptr);
      for (std::int64_t i = 0; i < n; ++i) {
        const double x = static_cast<double>(inputs[static_cast<std::size_t>(i)]);
        const double want = ReferenceActivation(activation, x);
        EXPECT_TRUE(Close(activation, row[static_cast<std::size_t>(i)], want))
            << "x = " << x << ": got " << row[static_cast<std::size_t>(i)] << ", want " << want;
        EXPECT_TRUE(Close(activation, column[static_cast<std::size_t>(2 * i)], want))
            << "x = " << x << " (column)";
        EXPECT_EQ(column[static_cast<std::size_t>(2 * i + 1)], kCanaryValue);
      }
      // The documented special values.
      auto at = [&](C x) {
        std::vector<C> one = {x};
        fn(one.data(), 0, 1, 1, 1, nullptr);
        return one[0];
      };
      EXPECT_TRUE(std::isnan(at(Limits::quiet_NaN())));
      EXPECT_EQ(at(Limits::infinity()), Limits::infinity());
      if (activation != Activation::kNone) {
        EXPECT_EQ(at(-Limits::infinity()), C(0));
      }
    }
  }
}

// s32 (s8 GEMMs): relu, and a bias that wraps modulo 2^32 like the accumulation.
TEST(ActivationTest, S32AddsItsBiasModulo2To32AndKnowsRelu) {
  constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
  constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
  for (IsaLevel isa : RunnableLevels()) {
    const EpilogueEntry& entry = EpilogueKernels(isa);
    std::vector<std::int32_t> c(40);
    std::vector<std::int32_t> bias(40);
    for (int j = 0; j < 40; ++j) {
      c[static_cast<std::size_t>(j)] = j % 2 == 0 ? kMax : j - 20;
      bias[static_cast<std::size_t>(j)] = j % 2 == 0 ? 1 : 3;
    }
    std::vector<std::int32_t> relu = c;
    FindEpilogue<std::int32_t>(entry, BiasKind::kPerColumn, Activation::kNone)(
        c.data(), 0, 1, 1, 40, bias.data());
    FindEpilogue<std::int32_t>(entry, BiasKind::kPerColumn, Activation::kRelu)(
        relu.data(), 0, 1, 1, 40, bias.data());
    for (int j = 0; j < 40; ++j) {
      const std::int32_t want = j % 2 == 0 ? kMin : j - 17;
      EXPECT_EQ(c[static_cast<std::size_t>(j)], want) << ToString(isa) << " column " << j;
      EXPECT_EQ(relu[static_cast<std::size_t>(j)], want < 0 ? 0 : want)
          << ToString(isa) << " column " << j;
    }
  }
}

// A GEMM with an epilogue and the C storage a correct run leaves: C's window with canaries
// around it (ld two past the minimum, a row or column of canaries after it).
template <typename X>
struct EpilogueCase {
  using A = typename GemmTypes<X>::A;
  using B = typename GemmTypes<X>::B;
  using C = typename GemmTypes<X>::C;
  using Scalar = typename GemmTypes<X>::Scalar;
  static constexpr C kCanary = C(-7777);
  Stored<A> a;
  Stored<B> b;
  std::vector<C> bias;
  std::vector<C> c;
  std::vector<C> expected;
  GemmArgs<X> args;

  EpilogueCase(Layout layout, Trans ta, Trans tb, std::int64_t m, std::int64_t n, std::int64_t k,
               Scalar alpha, Scalar beta, const Epilogue<C>& epilogue, std::mt19937& rng)
      : a(MakeStored<A>(layout, ta, m, k, rng)), b(MakeStored<B>(layout, tb, k, n, rng)) {
    const std::int64_t ldc = MinLeadingDimension(layout, Trans::kNo, m, n) + 2;
    const std::int64_t outer = layout == Layout::kRowMajor ? m : n;
    c.assign(static_cast<std::size_t>((outer + 1) * ldc), kCanary);
    std::uniform_int_distribution<int> small(-12, 12);
    const std::int64_t bias_length = epilogue.bias_kind == BiasKind::kPerRow ? m : n;
    for (std::int64_t i = 0; i < bias_length; ++i) bias.push_back(Quarter(small(rng)));
    expected = c;
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const auto at = static_cast<std::size_t>(StoredOffset(layout, i, j, ldc));
        const C old = beta == 0 && std::is_floating_point_v<C>
                          ? std::numeric_limits<C>::quiet_NaN()
                          : static_cast<C>(small(rng));
        c[at] = old;
        double sum = 0;
        for (std::int64_t q = 0; q < k; ++q) sum += a.At(i, q) * b.At(q, j);
        const C bias_value = epilogue.bias_kind == BiasKind::kPerColumn ? bias[j]
                             : epilogue.bias_kind == BiasKind::kPerRow  ? bias[i]
                                                                        : C(0);
        if constexpr (std::is_integral_v<C>) {  // modulo 2^32 throughout
          std::uint32_t value = static_cast<std::uint32_t>(alpha) *
                                static_cast<std::uint32_t>(static_cast<std::int64_t>(sum));
          if (beta != 0) {
            value += static_cast<std::uint32_t>(beta) * static_cast<std::uint32_t>(old);
          }
          value += static_cast<std::uint32_t>(bias_value);
          expected[at] = static_cast<C>(
              ReferenceActivation(epilogue.activation, static_cast<C>(value)));
        } else {
          // Exact in C's type: small integers, alpha and bias in quarters.
          double value = static_cast<double>(alpha) * sum;
          if (beta != 0) value += static_cast<double>(beta) * static_cast<double>(old);
          value = static_cast<double>(static_cast<C>(value + static_cast<double>(bias_value)));
          expected[at] = static_cast<C>(ReferenceActivation(epilogue.activation, value));
        }
      }
    }
    Epilogue<C> bound = epilogue;
    if (bound.bias_kind != BiasKind::kNone) bound.bias = bias.data();
    args = GemmArgs<X>{layout, ta, tb, m, n, k, alpha, a.values.data(), a.ld, b.values.data(),
                       b.ld, beta, c.data(), ldc, bound};
  }

  static C Quarter(int value) {
    if constexpr (std::is_integral_v<C>) {
      return static_cast<C>(value);
    } else {
      return static_cast<C>(value) / C(4);
    }
  }

  // Every element of C's storage against the expected one, canaries included.
  int Mismatches(Activation activation) const {
    int bad = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const bool canary = expected[i] == kCanary;
      const bool ok = canary ? c[i] == kCanary
                             : Close(activation, c[i], static_cast<double>(expected[i]));
      if (!ok && bad++ < 3) {
        ADD_FAILURE() << "C storage element " << i << ": got " << c[i] << ", expected "
                      << expected[i];
      }
    }
    return bad;
  }
};


// The configs to run an m x n x k problem with: the default (gemv, direct or packed by the
// shape), the packed model's, and each again in k blocks of 64 (where the family has blocks)
// and on two threads split by columns and by rows; for bf16 and s8 the packed configs also read
// A in place.
template <typename X>
std::vector<KernelConfig> ConfigsFor(const Machine& machine, const Problem& problem) {
  std::vector<KernelConfig> configs;
  for (const KernelConfig& base :
       {ModelConfig(problem, machine), ColdOperandsConfig(problem, machine)}) {
    for (int variant = 0; variant < 4; ++variant) {
      KernelConfig config = base;
      if (variant == 1 && config.family != KernelFamily::kGemv) config.kc = 64;
      if (variant >= 2) {
        config.threads = 2;
        config.parallel_loop = variant == 2 ? ParallelLoop::kJc : ParallelLoop::kIc;
      }
      if (variant % 2 == 1 && config.family == KernelFamily::kPacked &&
          config.parallel_loop != ParallelLoop::kJr) {
        config.a_in_place = true;
      }
      if (config.ValidateFor(GemmTypes<X>::kDType).ok()) configs.push_back(config);
    }
  }
  return configs;
}

// Runs `run(problem, plan)` with a plan of every config of ConfigsFor, for gemv shapes both
// ways, a direct-sized and a packed-sized one with primes and several k blocks, and K = 0, in
// both layouts and every transpose pair; stops at the first fatal failure.
template <typename X, typename Run>
void ForEveryPlan(const Machine& machine, const Run& run) {
  struct Shape3 {
    std::int64_t m, n, k;
  };
  const Shape3 shapes[] = {{1, 37, 19}, {23, 1, 9}, {7, 13, 17}, {45, 70, 150}, {6, 5, 0}};
  for (const Shape3 s : shapes) {
    for (int variant = 0; variant < 8; ++variant) {
      const Layout layout = variant % 2 == 0 ? Layout::kRowMajor : Layout::kColMajor;
      const Trans ta = (variant / 2) % 2 == 0 ? Trans::kNo : Trans::kYes;
      const Trans tb = (variant / 4) % 2 == 0 ? Trans::kNo : Trans::kYes;
      const Problem problem{GemmTypes<X>::kDType, layout, ta, tb, s.m, s.n, s.k, 2};
      for (const KernelConfig& config : ConfigsFor<X>(machine, problem)) {
        auto plan = GemmPlan<X>::Create(config);
        ASSERT_TRUE(plan.ok()) << plan.error().message;
        run(problem, *plan);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

template <typename X>
class EpilogueGemmTest : public ::testing::Test {};
using GemmTypesUnderTest = ::testing::Types<float, double, Bf16Gemm, S8Gemm>;
TYPED_TEST_SUITE(EpilogueGemmTest, GemmTypesUnderTest);

TYPED_TEST(EpilogueGemmTest, EveryFamilyAppliesTheEpilogueOnceToEveryElement) {
  using X = TypeParam;
  using C = typename GemmTypes<X>::C;
  using Scalar = typename GemmTypes<X>::Scalar;
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  std::mt19937 rng(29);
  int cases = 0;
  ForEveryPlan<X>(*machine, [&](const Problem& problem, const GemmPlan<X>& plan) {
    for (Activation activation : kActivations) {
      if (std::is_integral_v<C> && activation != Activation::kNone &&
          activation != Activation::kRelu) {
        continue;
      }
      for (BiasKind bias : {BiasKind::kNone, BiasKind::kPerColumn, BiasKind::kPerRow}) {
        if (bias == BiasKind::kNone && activation == Activation::kNone) continue;
        // alpha 1 / beta 0 under NaN, and a general alpha / beta (s8: integers).
        const bool general = (cases % 2) == 1;
        const Scalar alpha = general ? Scalar(std::is_integral_v<C> ? -3 : 0.25) : Scalar(1);
        const Scalar beta = general ? Scalar(2) : Scalar(0);
        Epilogue<C> epilogue;
        epilogue.bias_kind = bias;
        epilogue.activation = activation;
        EpilogueCase<X> ec(problem.layout, problem.trans_a, problem.trans_b, problem.m,
                           problem.n, problem.k, alpha, beta, epilogue, rng);
        SCOPED_TRACE(plan.config().ToString() + " " + problem.ToString() + " bias " +
                     ToString(bias) + " " + ToString(activation) +
                     (general ? " alpha/beta" : ""));
        const Status status = plan.Run(ec.args, TwoMembers());
        ASSERT_TRUE(status.ok()) << status.error().message;
        ASSERT_EQ(ec.Mismatches(activation), 0);
        ++cases;
      }
    }
  });
  EXPECT_GT(cases, 0);
}

// The plan's other ways in take the epilogue as Run does: a bound problem (whose small direct
// tiles are otherwise planned once), packed B, and a batch (each item with the same bias).
TYPED_TEST(EpilogueGemmTest, BoundPackedBAndBatchedCallsApplyIt) {
  using X = TypeParam;
  using C = typename GemmTypes<X>::C;
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  std::mt19937 rng(31);
  Epilogue<C> epilogue;
  epilogue.bias_kind = BiasKind::kPerColumn;
  epilogue.activation = Activation::kRelu;
  for (const auto [m, n, k] : {std::array<std::int64_t, 3>{5, 9, 7}, {40, 52, 90}}) {
    const Problem problem{GemmTypes<X>::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo,
                          m, n, k, 1};
    {
      auto plan = GemmPlan<X>::Create(ModelConfig(problem, *machine));
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      EpilogueCase<X> ec(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1, 0, epilogue, rng);
      auto bound = plan->Bind(ec.args);
      ASSERT_TRUE(bound.ok()) << bound.error().message;
      ASSERT_TRUE(bound->Run(ec.args.a, ec.args.b, ec.args.c, TwoMembers()).ok());
      EXPECT_EQ(ec.Mismatches(epilogue.activation), 0) << "bound " << plan->config().ToString();
    }
    {
      auto plan = GemmPlan<X>::Create(ColdOperandsConfig(problem, *machine));
      ASSERT_TRUE(plan.ok()) << plan.error().message;
      if (plan->config().family == KernelFamily::kPacked) {
        EpilogueCase<X> ec(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1, 0, epilogue,
                           rng);
        auto packed = plan->PackB(Layout::kRowMajor, Trans::kNo, n, k, ec.args.b, ec.args.ldb);
        ASSERT_TRUE(packed.ok()) << packed.error().message;
        ASSERT_TRUE(plan->Run(ec.args, *packed, TwoMembers()).ok());
        EXPECT_EQ(ec.Mismatches(epilogue.activation), 0) << "packed B";
      }
      // A batch of two: the same A, B and bias, C apart.
      EpilogueCase<X> ec(Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1, 0, epilogue, rng);
      const auto c_size = static_cast<std::int64_t>(ec.c.size());
      std::vector<C> storage = ec.c;
      storage.insert(storage.end(), ec.c.begin(), ec.c.end());
      GemmArgs<X> args = ec.args;
      args.c = storage.data();
      const BatchStrides strides{2, 0, 0, c_size};
      ASSERT_TRUE(plan->RunBatch(args, strides, TwoMembers()).ok());
      for (int item = 0; item < 2; ++item) {
        std::copy(storage.begin() + item * c_size, storage.begin() + (item + 1) * c_size,
                  ec.c.begin());
        EXPECT_EQ(ec.Mismatches(epilogue.activation), 0) << "batch item " << item;
      }
    }
  }
}

// The kernels' own activations (one copy per form, activation_math.h: Form) on the values where
// the exponential leaves its range, where x^2 overflows, and the special values: a per-column
// bias carries them over a product of zeros, at every runnable level, through every family.
TYPED_TEST(EpilogueGemmTest, EveryFamilyTakesTheActivationsSpecialValues) {
  using X = TypeParam;
  using A = typename GemmTypes<X>::A;
  using B = typename GemmTypes<X>::B;
  using C = typename GemmTypes<X>::C;
  if constexpr (std::is_integral_v<C>) {
    GTEST_SKIP() << "s32 C takes relu only, exact on every value";
  } else {
    using Limits = std::numeric_limits<C>;
    const std::vector<C> values = ActivationEdges<C>();
    const auto n = static_cast<std::int64_t>(values.size());
    auto host = DetectHostMachine();
    ASSERT_TRUE(host.ok()) << host.error().message;
    int cases = 0;
    for (IsaLevel isa : RunnableLevels()) {
      Machine machine = *host;
      machine.kernel_isa = isa;
      for (const auto [m, k] : {std::array<std::int64_t, 2>{1, 19}, {7, 17}, {45, 150}}) {
        const Problem problem{GemmTypes<X>::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo,
                              m, n, k, 2};
        const std::vector<A> a(static_cast<std::size_t>(m * k), A{});
        const std::vector<B> b(static_cast<std::size_t>(k * n), B{});
        for (const KernelConfig& config : ConfigsFor<X>(machine, problem)) {
          auto plan = GemmPlan<X>::Create(config);
          ASSERT_TRUE(plan.ok()) << plan.error().message;
          for (Activation activation : kActivations) {
            SCOPED_TRACE(config.ToString() + " " + problem.ToString() + " " +
                         ToString(activation));
            const Epilogue<C> epilogue{BiasKind::kPerColumn, values.data(), activation};
            std::vector<C> c(static_cast<std::size_t>(m * n), Limits::quiet_NaN());
            const GemmArgs<X> args{Layout::kRowMajor, Trans::kNo, Trans::kNo, m, n, k, 1,
                                   a.data(), k, b.data(), n, 0, c.data(), n, epilogue};
            const Status status = plan->Run(args, TwoMembers());
            ASSERT_TRUE(status.ok()) << status.error().message;
            for (std::int64_t i = 0; i < m; ++i) {
              for (std::int64_t j = 0; j < n; ++j) {
                const C got = c[static_cast<std::size_t>(i * n + j)];
                const double want = ReferenceActivation(activation, values[j]);
                ASSERT_TRUE(Close(activation, got, want))
                    << "row " << i << ", x " << values[j] << ": got " << got << ", want "
                    << want;
              }
            }
            ++cases;
          }
        }
      }
    }
    EXPECT_GT(cases, 0);
  }
}

// A bias kind without a bias, and s32 activations other than relu, are refused before anything
// is written.
TYPED_TEST(EpilogueGemmTest, MalformedEpiloguesAreRefusedAndWriteNothing) {
  using X = TypeParam;
  using C = typename GemmTypes<X>::C;
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  std::mt19937 rng(37);
  const Problem problem{GemmTypes<X>::kDType, Layout::kRowMajor, Trans::kNo, Trans::kNo,
                        9, 11, 13, 1};
  auto plan = GemmPlan<X>::Create(ModelConfig(problem, *machine));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  auto refused = [&](Epilogue<C> epilogue, const std::string& words) {
    EpilogueCase<X> ec(Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 11, 13, 1, 1, {}, rng);
    const std::vector<C> before = ec.c;
    ec.args.epilogue = epilogue;
    const Status status = plan->Run(ec.args);
    ASSERT_FALSE(status.ok()) << words;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(words), std::string::npos) << status.error().message;
    EXPECT_EQ(ec.c, before);
  };
  Epilogue<C> no_bias;
  no_bias.bias_kind = BiasKind::kPerRow;
  refused(no_bias, "row bias is a null pointer");
  if constexpr (std::is_integral_v<C>) {
    Epilogue<C> gelu;
    gelu.activation = Activation::kGelu;
    refused(gelu, "activation gelu needs a floating-point C");
  }
}

// s8 products dequantized to f32 in C's storage (epilogue.h: DequantizeToF32) through every
// family, layout and transpose pair, with every bias kind and activation: C = act(scale_j *
// (sum + offset_j) + bias). Scales are powers of two and the bias in quarters, so all but the
// activation is exact; canaries (s32 bits) around C stay.
TEST(DequantizeGemmTest, EveryFamilyWritesTheF32ResultOverTheSums) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  std::mt19937 rng(41);
  std::uniform_int_distribution<int> small(-12, 12);
  int cases = 0;
  ForEveryPlan<S8Gemm>(*machine, [&](const Problem& problem, const GemmPlan<S8Gemm>& plan) {
    const std::int64_t m = problem.m;
    const std::int64_t n = problem.n;
    for (Activation activation : kActivations) {
      for (BiasKind bias_kind : {BiasKind::kNone, BiasKind::kPerColumn, BiasKind::kPerRow}) {
        EpilogueCase<S8Gemm> ec(problem.layout, problem.trans_a, problem.trans_b, m, n,
                                problem.k, 1, 0, {}, rng);
        std::vector<float> scales;
        std::vector<std::int32_t> offsets;
        std::vector<float> bias;
        for (std::int64_t j = 0; j < n; ++j) {
          scales.push_back(std::ldexp(1.0f, small(rng) % 4 - 1));
          offsets.push_back(small(rng) * 100);
        }
        for (std::int64_t i = 0; i < (bias_kind == BiasKind::kPerRow ? m : n); ++i) {
          bias.push_back(static_cast<float>(small(rng)) / 4);
        }
        const DequantizeToF32 dequantize{scales.data(), offsets.data(),
                                         {bias_kind, bias.data(), activation}};
        ec.args.dequantize = &dequantize;
        SCOPED_TRACE(plan.config().ToString() + " " + problem.ToString() + " bias " +
                     ToString(bias_kind) + " " + ToString(activation));
        const Status status = plan.Run(ec.args, TwoMembers());
        ASSERT_TRUE(status.ok()) << status.error().message;
        std::vector<bool> inside(ec.c.size(), false);
        int bad = 0;
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < n; ++j) {
            const auto at =
                static_cast<std::size_t>(StoredOffset(problem.layout, i, j, ec.args.ldc));
            inside[at] = true;
            const double x = static_cast<double>(scales[j]) * (ec.expected[at] + offsets[j]) +
                             (bias_kind == BiasKind::kPerColumn ? bias[j]
                              : bias_kind == BiasKind::kPerRow  ? bias[i]
                                                                : 0.0);
            float got;
            std::memcpy(&got, &ec.c[at], sizeof got);
            const double want = ReferenceActivation(activation, x);
            if (!Close(activation, got, want) && bad++ < 3) {
              ADD_FAILURE() << "C(" << i << ", " << j << "): got " << got << ", expected "
                            << want;
            }
          }
        }
        for (std::size_t at = 0; at < ec.c.size(); ++at) {
          if (!inside[at] && ec.c[at] != EpilogueCase<S8Gemm>::kCanary && bad++ < 3) {
            ADD_FAILURE() << "canary at " << at << " overwritten";
          }
        }
        ASSERT_EQ(bad, 0);
        ++cases;
      }
    }
  });
  EXPECT_GT(cases, 0);
}

// A dequantizing GEMM needs beta = 0 (C holds no s32 values to scale), no s32 epilogue beside
// it, and its scales and offsets; only the s8 GEMM has one. Refused before anything is written.
TEST(DequantizeGemmTest, MalformedDequantizationsAreRefusedAndWriteNothing) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  std::mt19937 rng(43);
  const Problem problem{DType::kS8, Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 11, 13, 1};
  auto plan = GemmPlan<S8Gemm>::Create(ModelConfig(problem, *machine));
  ASSERT_TRUE(plan.ok()) << plan.error().message;
  const std::vector<float> scales(11, 1.0f);
  const std::vector<std::int32_t> offsets(11, 0);
  auto refused = [&](std::int32_t beta, const Epilogue<std::int32_t>& s32,
                     const DequantizeToF32& dequantize, const std::string& words) {
    EpilogueCase<S8Gemm> ec(Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 11, 13, 1, beta, {},
                            rng);
    const std::vector<std::int32_t> before = ec.c;
    ec.args.epilogue = s32;
    ec.args.dequantize = &dequantize;
    const Status status = plan->Run(ec.args);
    ASSERT_FALSE(status.ok()) << words;
    EXPECT_EQ(status.error().code, ErrorCode::kInvalidArgument);
    EXPECT_NE(status.error().message.find(words), std::string::npos) << status.error().message;
    EXPECT_EQ(ec.c, before);
  };
  const DequantizeToF32 good{scales.data(), offsets.data(), {}};
  refused(1, {}, good, "takes beta = 0");
  Epilogue<std::int32_t> relu;
  relu.activation = Activation::kRelu;
  refused(0, relu, good, "no s32 epilogue");
  refused(0, {}, {scales.data(), nullptr, {}}, "scales or offsets are a null pointer");
  refused(0, {}, {scales.data(), offsets.data(), {BiasKind::kPerRow, nullptr, Activation::kNone}},
          "row bias is a null pointer");

  auto f32_plan = GemmPlan<float>::Create(
      ModelConfig({DType::kF32, Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 11, 13, 1},
                    *machine));
  ASSERT_TRUE(f32_plan.ok()) << f32_plan.error().message;
  EpilogueCase<float> ec(Layout::kRowMajor, Trans::kNo, Trans::kNo, 9, 11, 13, 1, 0, {}, rng);
  ec.args.dequantize = &good;
  const Status status = f32_plan->Run(ec.args);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("only the s8 GEMM dequantizes"), std::string::npos);
}

}  // namespace
}  // namespace mmtune
