// The epilogue functions (epilogue.h), written once over GCC's vector extensions, as wide as
// the ISA level of the translation unit that includes this (epilogue_<isa>.cc sets
// MMTUNE_EPILOGUE_VECTOR_BYTES and compiles with that level's flags); the activations are
// activation_math.h's. Included only by the per-ISA units.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/activation_math.h"
#include "kernels/epilogue.h"

#ifndef MMTUNE_EPILOGUE_VECTOR_BYTES
#error "epilogue_impl.h: define MMTUNE_EPILOGUE_VECTOR_BYTES, this level's vector width"
#endif

namespace mmtune::epilogue {
// Internal linkage: each ISA's translation unit keeps its own copies. Shared template instances
// (the same names in every unit) would let the linker keep one level's code for all of them.
namespace {

// A vector of this level's width for each element type the epilogues use (the attribute takes no
// dependent type, so one specialization each).
template <typename T>
struct VectorOf;
#define MMTUNE_EPILOGUE_VECTOR_OF(T)                                   \
  template <>                                                          \
  struct VectorOf<T> {                                                 \
    using Type [[gnu::vector_size(MMTUNE_EPILOGUE_VECTOR_BYTES)]] = T; \
  };
MMTUNE_EPILOGUE_VECTOR_OF(float)
MMTUNE_EPILOGUE_VECTOR_OF(double)
MMTUNE_EPILOGUE_VECTOR_OF(std::int32_t)
MMTUNE_EPILOGUE_VECTOR_OF(std::uint32_t)
MMTUNE_EPILOGUE_VECTOR_OF(std::int64_t)
#undef MMTUNE_EPILOGUE_VECTOR_OF
template <typename T>
using Vec = typename VectorOf<T>::Type;
template <typename T>
constexpr std::int64_t kLanes = MMTUNE_EPILOGUE_VECTOR_BYTES / sizeof(T);

template <typename T>
[[gnu::always_inline]] inline Vec<T> Splat(T value) {
  Vec<T> v;
  for (std::int64_t lane = 0; lane < kLanes<T>; ++lane) v[lane] = value;
  return v;
}

// `count` elements from p[0], p[stride], ...; the lanes after them zero (a finite input to
// every activation).
template <typename T>
[[gnu::always_inline]] inline Vec<T> Load(const T* p, std::int64_t stride, std::int64_t count) {
  Vec<T> v{};
  if (stride == 1 && count == kLanes<T>) {
    std::memcpy(&v, p, sizeof v);
  } else {
    for (std::int64_t lane = 0; lane < count; ++lane) v[lane] = p[lane * stride];
  }
  return v;
}

// The first `count` lanes of `v` to p[0], p[stride], ..., as bytes (Stored is the storage's
// type, of T's size: an s32 C takes its dequantized floats).
template <typename Stored, typename T>
[[gnu::always_inline]] inline void Store(Stored* p, std::int64_t stride, std::int64_t count,
                                         Vec<T> v) {
  static_assert(sizeof(Stored) == sizeof(T));
  if (stride == 1 && count == kLanes<T>) {
    std::memcpy(p, &v, sizeof v);
  } else {
    for (std::int64_t lane = 0; lane < count; ++lane) {
      const T value = v[lane];
      std::memcpy(p + lane * stride, &value, sizeof value);
    }
  }
}

// s32 adds modulo 2^32, as its accumulation does.
template <typename C>
[[gnu::always_inline]] inline Vec<C> AddBias(Vec<C> x, Vec<C> bias) {
  if constexpr (std::is_same_v<C, std::int32_t>) {
    using Unsigned = Vec<std::uint32_t>;
    return std::bit_cast<Vec<C>>(std::bit_cast<Unsigned>(x) + std::bit_cast<Unsigned>(bias));
  } else {
    return x + bias;
  }
}

// The bias of `count` elements from column j of row i.
template <BiasKind kBias, typename T>
[[gnu::always_inline]] inline Vec<T> BiasAt(const T* bias, std::int64_t i, std::int64_t j,
                                            std::int64_t count) {
  if constexpr (kBias == BiasKind::kPerColumn) return Load(bias + j, 1, count);
  if constexpr (kBias == BiasKind::kPerRow) return Splat(bias[i]);
  return Vec<T>{};
}

// Calls `chunk(row, j, count)` for the region's rows in chunks of up to a vector's lanes.
template <typename T, typename Chunk>
[[gnu::always_inline]] inline void ForEachChunk(std::int64_t m, std::int64_t n,
                                                const Chunk& chunk) {
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t j = 0;
    for (; j + kLanes<T> <= n; j += kLanes<T>) chunk(i, j, kLanes<T>);
    if (j < n) chunk(i, j, n - j);
  }
}

template <typename C, BiasKind kBias, Activation kAct>
void ApplyRegion(C* __restrict c, std::int64_t row_stride, std::int64_t col_stride,
                 std::int64_t m, std::int64_t n, const C* __restrict bias) {
  ForEachChunk<C>(m, n, [&](std::int64_t i, std::int64_t j, std::int64_t count)
                            __attribute__((always_inline)) {
    C* at = c + i * row_stride + j * col_stride;
    const Vec<C> x =
        AddBias<C>(Load(at, col_stride, count), BiasAt<kBias>(bias, i, j, count));
    Store<C, C>(at, col_stride, count, activation::Activate<kAct>(x));
  });
}

// The s32 sums read and the f32 results written at the same addresses, by memcpy (one object's
// bytes seen as two types).
template <BiasKind kBias, Activation kAct>
void DequantizeRegion(std::int32_t* c, std::int64_t row_stride, std::int64_t col_stride,
                      std::int64_t m, std::int64_t n, const float* __restrict scales,
                      const std::int32_t* __restrict offsets, const float* __restrict bias) {
  static_assert(kLanes<float> == kLanes<std::int32_t>);
  ForEachChunk<float>(m, n, [&](std::int64_t i, std::int64_t j, std::int64_t count)
                                __attribute__((always_inline)) {
    std::int32_t* at = c + i * row_stride + j * col_stride;
    const Vec<std::int32_t> sum =
        AddBias<std::int32_t>(Load(at, col_stride, count), Load(offsets + j, 1, count));
    const Vec<float> x = activation::MulAdd(Load(scales + j, 1, count),
                                            __builtin_convertvector(sum, Vec<float>),
                                            BiasAt<kBias>(bias, i, j, count));
    Store<std::int32_t, float>(at, col_stride, count, activation::Activate<kAct>(x));
  });
}

template <BiasKind kBias>
constexpr std::array<DequantizeFn, 4> DequantizeFns() {
  return {&DequantizeRegion<kBias, Activation::kNone>, &DequantizeRegion<kBias, Activation::kRelu>,
          &DequantizeRegion<kBias, Activation::kGelu>, &DequantizeRegion<kBias, Activation::kSilu>};
}

constexpr DequantizeTable DequantizeFunctions() {
  return {DequantizeFns<BiasKind::kNone>(), DequantizeFns<BiasKind::kPerColumn>(),
          DequantizeFns<BiasKind::kPerRow>()};
}

template <typename C, BiasKind kBias, Activation kAct>
constexpr EpilogueFn<C> RegionFn() {
  if constexpr (std::is_integral_v<C> && kAct != Activation::kNone &&
                kAct != Activation::kRelu) {
    return nullptr;  // CheckEpilogue refuses these
  } else {
    return &ApplyRegion<C, kBias, kAct>;
  }
}

template <typename C, BiasKind kBias>
constexpr std::array<EpilogueFn<C>, 4> RegionFns() {
  return {RegionFn<C, kBias, Activation::kNone>(), RegionFn<C, kBias, Activation::kRelu>(),
          RegionFn<C, kBias, Activation::kGelu>(), RegionFn<C, kBias, Activation::kSilu>()};
}

template <typename C>
constexpr EpilogueTable<C> Table() {
  return {RegionFns<C, BiasKind::kNone>(), RegionFns<C, BiasKind::kPerColumn>(),
          RegionFns<C, BiasKind::kPerRow>()};
}

}  // namespace
}  // namespace mmtune::epilogue

// Defines `PREFIX##Epilogues()`, this translation unit's row of the epilogue table.
#define MMTUNE_DEFINE_EPILOGUE_TABLE(PREFIX)                                            \
  const ::mmtune::EpilogueEntry& PREFIX##Epilogues() {                                 \
    static constexpr ::mmtune::EpilogueEntry kEntry = {                                \
        ::mmtune::epilogue::Table<float>(), ::mmtune::epilogue::Table<double>(),       \
        ::mmtune::epilogue::Table<std::int32_t>(),                                     \
        ::mmtune::epilogue::DequantizeFunctions()};                                    \
    return kEntry;                                                                     \
  }
