// Checks the peak measurement's plumbing (which loops exist, that every figure is a positive
// rate, that bad options are refused). How fast the machine is belongs in bench/, not here.
#include "tuner/peak.h"

#include <algorithm>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tuner/peak_kernels.h"

namespace mmtune {
namespace {

PeakOptions Quick() {
  PeakOptions options;
  options.sample_seconds = 0.002;
  options.warmup_samples = 1;
  options.samples = 3;
  options.bandwidth_bytes = 8u << 20;
  return options;
}

TEST(PeakKernelsTest, LoopsCountTheirOperations) {
  const CpuFeatures& cpu = HostCpuFeatures();
  for (IsaLevel level : kIsaLevels) {
    if (!IsaWithin(level, cpu.MaxIsaLevel())) continue;
    SCOPED_TRACE(ToString(level));
    const PeakKernels kernels = PeakKernelsFor(level, cpu);
    ASSERT_NE(kernels.f32_fma, nullptr);
    ASSERT_NE(kernels.f64_fma, nullptr);
    // ops = iterations x chains x lanes x 2; f32 has twice the lanes of f64 at every level.
    const double f32_ops = kernels.f32_fma(10);
    const double f64_ops = kernels.f64_fma(10);
    EXPECT_GT(f32_ops, 0.0);
    EXPECT_DOUBLE_EQ(f32_ops / f64_ops, 2.0);
    EXPECT_DOUBLE_EQ(kernels.f32_fma(20), 2 * f32_ops);
    EXPECT_EQ(kernels.bf16_dot != nullptr, (level == IsaLevel::kAvx512 && cpu.avx512_bf16) ||
                                               level == IsaLevel::kNeonBf16);
    if (IsaWithin(IsaLevel::kNeonDot, level)) {
      EXPECT_NE(kernels.int8_dot, nullptr);
    }
    for (const PeakLoop dot : {kernels.bf16_dot, kernels.int8_dot}) {
      if (dot != nullptr) {
        EXPECT_DOUBLE_EQ(dot(20), 2 * dot(10));
      }
    }
  }
}

TEST(PeakKernelsTest, ReadSumAddsEveryElement) {
  alignas(64) double data[64];
  for (int i = 0; i < 64; ++i) data[i] = i;
  const CpuFeatures& cpu = HostCpuFeatures();
  for (IsaLevel level : kIsaLevels) {
    if (!IsaWithin(level, cpu.MaxIsaLevel())) continue;
    SCOPED_TRACE(ToString(level));
    const ReadLoop read_sum = PeakKernelsFor(level, cpu).read_sum;
    ASSERT_NE(read_sum, nullptr);
    EXPECT_DOUBLE_EQ(read_sum(data, 64), 63.0 * 64 / 2);
    EXPECT_DOUBLE_EQ(read_sum(data, 16), 15.0 * 16 / 2);
  }
}

TEST(PeakTest, MeasuresEveryAvailableCeiling) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok()) << machine.error().message;
  std::vector<std::string> steps;
  auto report = MeasurePeaks(*machine, Quick(),
                             [&](std::string_view what) { steps.emplace_back(what); });
  ASSERT_TRUE(report.ok()) << report.error().message;
  EXPECT_EQ(report->isa, machine->kernel_isa);
  EXPECT_GE(report->cores, 1);
  ASSERT_TRUE(report->f32_fma.has_value());
  ASSERT_TRUE(report->f64_fma.has_value());
  EXPECT_GT(report->f32_fma->one_core, 0.0);
  EXPECT_GT(report->f32_fma->all_cores, 0.0);
  EXPECT_GT(report->f64_fma->one_core, 0.0);
  EXPECT_GT(report->memory_read_gbs.one_core, 0.0);
  EXPECT_GT(report->memory_read_gbs.all_cores, 0.0);
  EXPECT_EQ(report->bf16_dot.has_value(), PeakKernelsFor(report->isa, machine->cpu).bf16_dot != nullptr);
  // One progress step per measurement: 1 core and, on multi-core machines, all cores; one per
  // point of the read sweep.
  const std::size_t per_measure = report->cores > 1 ? 2 : 1;
  const std::size_t measures = 3 + report->bf16_dot.has_value() + report->int8_dot.has_value();

  // The read sweep: from the L2 size, doubling, to half the 8 MiB buffer, one step each.
  ASSERT_FALSE(report->read_sweep.empty());
  EXPECT_LE(report->read_sweep.back().bytes, 4u << 20);
  for (std::size_t i = 0; i < report->read_sweep.size(); ++i) {
    EXPECT_GT(report->read_sweep[i].gbs, 0.0);
    if (i > 0) {
      EXPECT_EQ(report->read_sweep[i].bytes, 2 * report->read_sweep[i - 1].bytes);
    }
  }
  EXPECT_EQ(report->effective_llc_bytes,
            EffectiveLlcBytes(report->read_sweep, report->memory_read_gbs.one_core));
  // With AVX-512 kernels, one core's f32 FMAs on 256-bit vectors too, and the zmm pipes they
  // show (one step more).
  const bool zmm = report->isa == IsaLevel::kAvx512;
  EXPECT_EQ(report->ymm_f32_fma_gflops > 0.0, zmm);
  if (zmm) {
    EXPECT_TRUE(report->zmm_fmas_per_cycle == 1.0 || report->zmm_fmas_per_cycle == 2.0)
        << report->zmm_fmas_per_cycle;
  } else {
    EXPECT_EQ(report->zmm_fmas_per_cycle, 0.0);
  }
  // The core facts' calibration (one step more), one probe per fact this machine probes (with
  // two zmm pipes, all of them), each holding where it reaches its threshold.
  const std::vector<std::string_view> probed =
      ProbedCoreFacts(*machine, report->zmm_fmas_per_cycle);
  const bool calibrates = !probed.empty();
  ASSERT_EQ(report->core_facts.size(), probed.size());
  for (std::size_t i = 0; i < probed.size(); ++i) {
    EXPECT_EQ(report->core_facts[i].fact, probed[i]);
  }
  if (report->zmm_fmas_per_cycle >= 2.0) {
    EXPECT_EQ(probed.size(), std::size(kMeasuredCoreFactFields));
  }
  for (const CoreFactProbe& probe : report->core_facts) {
    EXPECT_GT(probe.speedup, 0.0) << probe.fact;
    EXPECT_EQ(probe.holds, FactShown(probe.speedup, probe.threshold)) << probe.fact;
  }
  EXPECT_EQ(steps.size(), per_measure * measures + (zmm ? 1 : 0) + (calibrates ? 1 : 0) +
                              report->read_sweep.size());

  const nlohmann::json json = *report;
  EXPECT_GT(json.at("f32_fma_gflops").at("one_core").get<double>(), 0.0);
  EXPECT_EQ(json.at("bf16_dot_gops").is_null(), !report->bf16_dot.has_value());
  EXPECT_EQ(json.at("effective_llc_bytes").get<std::uint64_t>(), report->effective_llc_bytes);
  EXPECT_EQ(json.at("read_sweep_bytes_gbs").size(), report->read_sweep.size());
  EXPECT_EQ(json.contains("zmm_fmas_per_cycle"), zmm);
  Machine described = *machine;
  TakeMeasuredFacts(json, &described);
  EXPECT_EQ(described.zmm_fmas_per_cycle, report->zmm_fmas_per_cycle);
  EXPECT_EQ(described.effective_llc_bytes, report->effective_llc_bytes);
  EXPECT_EQ(json.contains("core_facts"), calibrates);
  EXPECT_EQ(described.measured_facts, MeasuredFactsOf(report->core_facts));
}

// The zmm rate over the ymm rate counts the 512-bit FMAs a cycle, as a whole pipe: Zen 4 runs a
// zmm FMA as two halves (the same flops a cycle as ymm), Zen 5 and Intel's server cores have two
// zmm pipes (twice them); clocks that drop under zmm load still round to the count.
TEST(PeakTest, ZmmPipesAreTheZmmRateOverTheYmmRate) {
  EXPECT_EQ(ZmmFmasPerCycle(115.0, 114.0), 1.0);  // Zen 4
  EXPECT_EQ(ZmmFmasPerCycle(220.0, 112.0), 2.0);  // two pipes
  EXPECT_EQ(ZmmFmasPerCycle(170.0, 112.0), 2.0);  // two pipes, a lower zmm clock
  EXPECT_EQ(ZmmFmasPerCycle(140.0, 112.0), 1.0);
  EXPECT_EQ(ZmmFmasPerCycle(500.0, 100.0), 2.0);  // never more than two
  EXPECT_EQ(ZmmFmasPerCycle(30.0, 100.0), 1.0);   // nor fewer than one
  EXPECT_EQ(ZmmFmasPerCycle(100.0, 0.0), 0.0);
  EXPECT_EQ(ZmmFmasPerCycle(0.0, 100.0), 0.0);
}

// The effective last-level cache is the largest working set up to which every point reads at
// least 1.5x memory's rate; the first point (the L2 size) counts whatever it reads.
TEST(PeakTest, EffectiveLlcIsWhereReadsSlowToMemorysRate) {
  const std::uint64_t mib = 1u << 20;
  // A guest whose hwloc lists a 508 MiB L3: 32 MiB still reads at 1.6x memory, 64 MiB at it.
  const std::vector<ReadSweepPoint> guest = {{1 * mib, 130.0}, {2 * mib, 90.0}, {4 * mib, 95.0},
                                             {8 * mib, 95.0},  {16 * mib, 65.0}, {32 * mib, 40.0},
                                             {64 * mib, 29.0}, {128 * mib, 25.0}};
  EXPECT_EQ(EffectiveLlcBytes(guest, 25.0), 32 * mib);
  // A dip stops the search even if a larger set reads fast again (noise, not a cache).
  std::vector<ReadSweepPoint> dip = guest;
  dip[3].gbs = 30.0;
  EXPECT_EQ(EffectiveLlcBytes(dip, 25.0), 4 * mib);
  // Nothing beyond L2 is faster than memory: the L2 size.
  EXPECT_EQ(EffectiveLlcBytes({{1 * mib, 30.0}, {2 * mib, 26.0}}, 25.0), 1 * mib);
  EXPECT_EQ(EffectiveLlcBytes({{1 * mib, 100.0}, {2 * mib, 90.0}}, 25.0), 2 * mib);
  EXPECT_EQ(EffectiveLlcBytes({}, 25.0), 0u);
}

TEST(PeakTest, GenericCapMeasuresGenericLoops) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  Machine generic = DescribeMachine(machine->cpu, machine->topology, IsaLevel::kGeneric);
  auto report = MeasurePeaks(generic, Quick());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->isa, IsaLevel::kGeneric);
  EXPECT_FALSE(report->bf16_dot.has_value());
  EXPECT_FALSE(report->int8_dot.has_value());
}

TEST(PeakTest, RejectsMeaninglessOptions) {
  auto machine = DetectHostMachine();
  ASSERT_TRUE(machine.ok());
  PeakOptions options = Quick();
  options.samples = 0;
  EXPECT_FALSE(MeasurePeaks(*machine, options).ok());
  options = Quick();
  options.sample_seconds = 0.0;
  EXPECT_FALSE(MeasurePeaks(*machine, options).ok());
}

// The bandwidth buffer outgrows the caches (8x the last level) yet stays bounded: without the
// 1 GiB cap a VM that reports two 508 MiB L3s would get 8 GiB a process.
TEST(PeakTest, BandwidthBufferOutgrowsTheCachesWithinBounds) {
  auto with_l3 = [](std::uint64_t bytes, int instances) {
    Topology topology;
    topology.caches = {CacheLevel{1, CacheKind::kData, 48u << 10, 64, 12, {{0}, {1}}},
                       CacheLevel{2, CacheKind::kUnified, 1u << 20, 64, 8, {{0}, {1}}}};
    std::vector<std::vector<int>> sharing;
    for (int i = 0; i < instances; ++i) sharing.push_back({i});
    topology.caches.push_back(CacheLevel{3, CacheKind::kUnified, bytes, 64, 16, sharing});
    return topology;
  };
  constexpr std::uint64_t kGiB = 1ull << 30;
  constexpr std::uint64_t kMiB = 1ull << 20;
  EXPECT_EQ(DefaultBandwidthBytes(with_l3(16 * kMiB, 1), 24 * kGiB), 256 * kMiB);
  EXPECT_EQ(DefaultBandwidthBytes(with_l3(32 * kMiB, 2), 24 * kGiB), 512 * kMiB);
  EXPECT_EQ(DefaultBandwidthBytes(with_l3(508 * kMiB, 2), 24 * kGiB), kGiB);
  EXPECT_EQ(DefaultBandwidthBytes(with_l3(508 * kMiB, 2), 0), kGiB);
  EXPECT_EQ(DefaultBandwidthBytes(with_l3(32 * kMiB, 2), 2 * kGiB), 256 * kMiB);
  EXPECT_EQ(DefaultBandwidthBytes(Topology{}, 0), 256 * kMiB);
}

// A fact holds a few percent above its threshold and not as far below it, and in between the
// measurement tells nothing. The probes become the machine's measured facts by name, the
// undecided ones and those no probe measured left unset.
TEST(CoreCalibrationTest, ProbesBecomeTheMeasuredFacts) {
  EXPECT_EQ(FactShown(1.05 * (1 + kUndecidedBand), 1.05), std::optional<bool>(true));
  EXPECT_EQ(FactShown(1.2, 1.05), std::optional<bool>(true));
  EXPECT_EQ(FactShown(1.06, 1.05), std::nullopt);
  EXPECT_EQ(FactShown(1.04, 1.05), std::nullopt);
  EXPECT_EQ(FactShown(1.05 * (1 - kUndecidedBand), 1.05), std::optional<bool>(false));
  EXPECT_EQ(FactShown(0.7, 1.0), std::optional<bool>(false));
  const std::vector<CoreFactProbe> probes = {{"tall_tile_over_one_panel", 1.12, 1.05, true},
                                             {"l3_streams_crowded_panels", 0.7, 1.0, false},
                                             {"unrolls_long_direct_k", 1.06, 1.05, std::nullopt}};
  const MeasuredCoreFacts measured = MeasuredFactsOf(probes);
  EXPECT_EQ(measured.tall_tile_over_one_panel, std::optional<bool>(true));
  EXPECT_EQ(measured.l3_streams_crowded_panels, std::optional<bool>(false));
  EXPECT_FALSE(measured.unrolls_long_direct_k.has_value());
  EXPECT_EQ(MeasuredFactsOf({}), MeasuredCoreFacts{});
}

// Only AVX-512 kernels on two zmm pipes probe the facts of two zmm pipes, which apply nowhere
// else; every machine probes how its direct family reads a batch's cold items.
TEST(CoreCalibrationTest, TwoZmmPipesProbeEveryFactOthersTheRest) {
  std::vector<std::string_view> every;
  for (const MeasuredCoreFactField& field : kMeasuredCoreFactFields) every.push_back(field.name);
  const std::vector<std::string_view> anywhere = {"direct_reads_cold_items"};
  std::sort(every.begin(), every.end());
  Machine machine;
  machine.kernel_isa = IsaLevel::kAvx512;
  std::vector<std::string_view> all = ProbedCoreFacts(machine, 2.0);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, every);
  EXPECT_EQ(ProbedCoreFacts(machine, 1.0), anywhere);
  EXPECT_EQ(ProbedCoreFacts(machine, 0.0), anywhere);
  for (IsaLevel isa : {IsaLevel::kAvx2, IsaLevel::kGeneric}) {
    machine.kernel_isa = isa;
    EXPECT_EQ(ProbedCoreFacts(machine, 2.0), anywhere);
  }
}

}  // namespace
}  // namespace mmtune
