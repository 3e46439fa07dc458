// Throughput of the epilogue functions (kernels/epilogue.h) on a tile of C in L1, one thread, per
// ISA level the CPU supports: what each activation costs per element, apart from any GEMM. The
// kernels apply the same activation math in their registers. Each iteration restores the tile
// from a copy first (gelu of gelu of ... would drift to subnormal values); `BM_RestoreOnly`
// times that copy alone.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/epilogue.h"
#include "machine/cpu_features.h"

namespace mmtune {
namespace {

constexpr std::int64_t kRows = 32;
constexpr std::int64_t kBytesPerRow = 512;  // a 16 KiB tile, in every L1

// Values of C spread over [-6, 6): gelu and silu run both of their branches.
template <typename C>
std::vector<C> TileValues(std::int64_t columns) {
  std::vector<C> values(static_cast<std::size_t>(kRows * columns));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<C>(static_cast<double>(i * 37 % 1200) / 100.0 - 6.0);
  }
  return values;
}

template <typename C>
void BM_Epilogue(benchmark::State& state, IsaLevel level, BiasKind bias_kind,
                 Activation activation) {
  if (level > HostCpuFeatures().MaxIsaLevel()) {
    state.SkipWithError("CPU lacks this ISA level");
    return;
  }
  const EpilogueFn<C> apply = FindEpilogue<C>(EpilogueKernels(level), bias_kind, activation);
  if (apply == nullptr) {
    state.SkipWithError("no such epilogue");
    return;
  }
  constexpr std::int64_t kColumns = kBytesPerRow / static_cast<std::int64_t>(sizeof(C));
  const std::vector<C> fresh = TileValues<C>(kColumns);
  std::vector<C> tile = fresh;
  const std::vector<C> bias(static_cast<std::size_t>(kColumns), C(0.25));
  for (auto _ : state) {
    std::memcpy(tile.data(), fresh.data(), fresh.size() * sizeof(C));
    apply(tile.data(), kColumns, 1, kRows, kColumns, bias.data());
    benchmark::DoNotOptimize(tile.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kRows * kColumns);
}

void BM_RestoreOnly(benchmark::State& state) {
  const std::vector<float> fresh = TileValues<float>(kBytesPerRow / sizeof(float));
  std::vector<float> tile = fresh;
  for (auto _ : state) {
    std::memcpy(tile.data(), fresh.data(), fresh.size() * sizeof(float));
    benchmark::DoNotOptimize(tile.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(fresh.size()));
}
BENCHMARK(BM_RestoreOnly);

// Every activation with a bias per column, f32 and f64, at each level.
template <typename C>
void RegisterEpilogues(const char* type) {
  for (const IsaLevel level : kIsaLevels) {
    for (const Activation activation :
         {Activation::kNone, Activation::kRelu, Activation::kGelu, Activation::kSilu}) {
      const std::string name = std::string("BM_Epilogue/") + type + "/" + ToString(level) +
                               "/bias+" + ToString(activation);
      benchmark::RegisterBenchmark(name.c_str(), BM_Epilogue<C>, level, BiasKind::kPerColumn,
                                   activation);
    }
  }
}

}  // namespace
}  // namespace mmtune

int main(int argc, char** argv) {
  mmtune::RegisterEpilogues<float>("f32");
  mmtune::RegisterEpilogues<double>("f64");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
