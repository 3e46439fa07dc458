#include "kernels/packing.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <type_traits>

#include "kernels/cache_line.h"
#include "kernels/packing_wide.h"
#include "machine/cpu_features.h"
#include "mmtune/bf16.h"

namespace mmtune {
namespace {

constexpr int kVectorBytes = 16;  // SSE2 / NEON width: every target this file compiles for

// Rows of B that PackB copies into every panel before it moves to the next (see there).
constexpr std::int64_t kPackBRowGroup = 4;
// How far below the rows it packs PackRowMajorBGroups prefetches: 8 to 64 rows ran alike
// (docs/low-precision.md).
constexpr std::int64_t kPackBRowsAhead = 16;

// Element p of `src` to packed[p * mr] for p < depth, prefetching `next` a line at a time.
template <typename T>
void PackRow(const T* src, const T* next, std::int64_t depth, int mr, T* packed) {
  constexpr std::int64_t kLine = kCacheLineBytes / sizeof(T);
  std::int64_t p = 0;
  for (; p + kLine <= depth; p += kLine) {
    __builtin_prefetch(next + p);
    for (std::int64_t q = p; q < p + kLine; ++q) packed[q * mr] = src[q];
  }
  for (; p < depth; ++p) packed[p * mr] = src[p];
}

// Rows `r0` and `r1` to packed[p * mr] and packed[p * mr + 1], prefetching `next0` and `next1`
// as PackRow does: a vector of each row is interleaved with the other (r0[p], r1[p], r0[p + 1],
// ...) and each pair stored whole, so a 6-row panel takes three stores per k instead of six,
// and A blocks pack markedly faster than one row at a time.
template <typename T>
void PackRowPair(const T* r0, const T* r1, const T* next0, const T* next1, std::int64_t depth,
                 int mr, T* packed) {
  constexpr int kLanes = kVectorBytes / sizeof(T);
  typedef T V __attribute__((vector_size(kVectorBytes)));
  constexpr std::int64_t kLine = kCacheLineBytes / sizeof(T);
  static_assert(kLine % kLanes == 0);
  auto interleave = [&](std::int64_t p) {
    V x, y;
    __builtin_memcpy(&x, r0 + p, sizeof(V));
    __builtin_memcpy(&y, r1 + p, sizeof(V));
    V lo, hi;
    if constexpr (kLanes == 4) {
      lo = __builtin_shufflevector(x, y, 0, 4, 1, 5);
      hi = __builtin_shufflevector(x, y, 2, 6, 3, 7);
    } else {
      lo = __builtin_shufflevector(x, y, 0, 2);
      hi = __builtin_shufflevector(x, y, 1, 3);
    }
    const T* pairs[2] = {reinterpret_cast<const T*>(&lo), reinterpret_cast<const T*>(&hi)};
    constexpr int kPairsPerVector = kLanes / 2;
    for (int q = 0; q < kLanes; ++q) {
      __builtin_memcpy(packed + (p + q) * mr,
                       pairs[q / kPairsPerVector] + (q % kPairsPerVector) * 2, 2 * sizeof(T));
    }
  };
  std::int64_t p = 0;
  for (; p + kLine <= depth; p += kLine) {
    __builtin_prefetch(next0 + p);
    __builtin_prefetch(next1 + p);
    for (std::int64_t q = p; q < p + kLine; q += kLanes) interleave(q);
  }
  for (; p + kLanes <= depth; p += kLanes) interleave(p);
  for (; p < depth; ++p) {
    packed[p * mr] = r0[p];
    packed[p * mr + 1] = r1[p];
  }
}


// Whether a group of G values of T is one 4-byte word of more than one value (bf16 pairs, byte
// quads): the groups the vector paths below move.
template <typename T, int G>
constexpr bool kWordGroups = G > 1 && G * sizeof(T) == 4;

using Bytes16 = std::uint8_t __attribute__((vector_size(kVectorBytes)));
using Halves8 = std::uint16_t __attribute__((vector_size(kVectorBytes)));

// Pairs of 16-bit values, x[j] then y[j], for j in [0, 4) (`lo`) and [4, 8) (`hi`).
inline void ZipHalves(Halves8 x, Halves8 y, Halves8& lo, Halves8& hi) {
  lo = __builtin_shufflevector(x, y, 0, 8, 1, 9, 2, 10, 3, 11);
  hi = __builtin_shufflevector(x, y, 4, 12, 5, 13, 6, 14, 7, 15);
}

// The groups of 16 bytes' worth of columns starting at column l, from G rows whose group is 4
// bytes (bf16 pairs, byte quads): each column's G values in a row. Interleaves of 16-byte
// vectors (unpack instructions on SSE2, zips on NEON) instead of one value at a time.
template <typename T, int G>
void InterleaveColumns(const T* const* rows, std::int64_t l, T* out) {
  static_assert(kWordGroups<T, G>);
  auto load = [&](int t) {
    Bytes16 v;
    __builtin_memcpy(&v, rows[t] + l, sizeof(v));
    return v;
  };
  // Each vector stored on its own: through an array, GCC also spills them to the stack.
  auto store = [&](int u, Halves8 v) {
    __builtin_memcpy(static_cast<void*>(out + u * (kVectorBytes / sizeof(T))), &v, sizeof(v));
  };
  Halves8 quads[4];
  if constexpr (G == 2) {
    ZipHalves(reinterpret_cast<Halves8>(load(0)), reinterpret_cast<Halves8>(load(1)), quads[0],
              quads[1]);
    store(0, quads[0]);
    store(1, quads[1]);
  } else {
    const Bytes16 r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
    auto zip_bytes = [](Bytes16 x, Bytes16 y, int half) {
      return reinterpret_cast<Halves8>(
          half == 0 ? __builtin_shufflevector(x, y, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6,
                                              22, 7, 23)
                    : __builtin_shufflevector(x, y, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13,
                                              29, 14, 30, 15, 31));
    };
    ZipHalves(zip_bytes(r0, r1, 0), zip_bytes(r2, r3, 0), quads[0], quads[1]);
    ZipHalves(zip_bytes(r0, r1, 1), zip_bytes(r2, r3, 1), quads[2], quads[3]);
    for (int u = 0; u < 4; ++u) store(u, quads[u]);
  }
}

using Words4 = std::uint32_t __attribute__((vector_size(kVectorBytes)));

// Groups [0, groups) of a panel's `width` lines whose k is contiguous and whose group is 4 bytes
// (bf16 pairs, byte quads), `groups` a multiple of 4: four lines by four groups at a time, read
// as one 16-byte vector per line and transposed in registers, so that each store writes the
// group of four lines. The lines past a multiple of four are copied a group at a time.
template <typename T>
void TransposeGroupQuads(int width, std::int64_t groups, const T* base, std::int64_t line_stride,
                         T* out) {
  constexpr int kValues = 4 / sizeof(T);  // values per group
  auto group_of = [&](std::int64_t g, int l) { return out + (g * width + l) * kValues; };
  int l = 0;
  for (; l + 4 <= width; l += 4) {
    const T* line = base + l * line_stride;
    for (std::int64_t g = 0; g < groups; g += 4) {
      Words4 r[4];
      for (int t = 0; t < 4; ++t) {
        __builtin_memcpy(&r[t], line + t * line_stride + g * kValues, sizeof(Words4));
      }
      const Words4 t0 = __builtin_shufflevector(r[0], r[1], 0, 4, 1, 5);
      const Words4 t1 = __builtin_shufflevector(r[0], r[1], 2, 6, 3, 7);
      const Words4 t2 = __builtin_shufflevector(r[2], r[3], 0, 4, 1, 5);
      const Words4 t3 = __builtin_shufflevector(r[2], r[3], 2, 6, 3, 7);
      const Words4 columns[4] = {
          __builtin_shufflevector(t0, t2, 0, 1, 4, 5), __builtin_shufflevector(t0, t2, 2, 3, 6, 7),
          __builtin_shufflevector(t1, t3, 0, 1, 4, 5), __builtin_shufflevector(t1, t3, 2, 3, 6, 7)};
      for (int u = 0; u < 4; ++u) {
        __builtin_memcpy(static_cast<void*>(group_of(g + u, l)), &columns[u], 16);
      }
    }
  }
  for (; l < width; ++l) {
    for (std::int64_t g = 0; g < groups; ++g) {
      std::memcpy(static_cast<void*>(group_of(g, l)), base + l * line_stride + g * kValues, 4);
    }
  }
}

// One whole group of `width` lines that lie side by side (line l of row t of the group at
// first[t * k_stride + l]): each line's G values in a row, from `out` on; returns the end.
template <typename T, int G>
T* InterleaveGroup(int width, const T* first, std::int64_t k_stride, T* out) {
  const T* rows[G];
  for (int t = 0; t < G; ++t) rows[t] = first + t * k_stride;
  int l = 0;
  if constexpr (kWordGroups<T, G>) {
    constexpr int kColumns = kVectorBytes / sizeof(T);
    for (; l + kColumns <= width; l += kColumns, out += kColumns * G) {
      InterleaveColumns<T, G>(rows, l, out);
    }
  }
  for (; l < width; ++l) {
    for (int t = 0; t < G; ++t) *out++ = rows[t][l];
  }
  return out;
}

// One panel of `width` lines (rows of A or columns of B), `valid` of them real: the value of
// line `l` at k offset `p` is base[l * line_stride + p * k_stride] (one of the strides is 1).
// Written group by group so that the output is sequential. Whole groups take a fast path
// without bounds checks: where k is contiguous, a group of each real line copied whole (four
// lines by four groups transposed in registers in a full panel) and the missing lines' zeroed
// (an edge panel of A, the rows short of a tall tile, is packed in every k block: element by
// element it slowed whole GEMMs, docs/low-precision.md); InterleaveGroup where lines are
// contiguous, in a full panel. The rest (the last partial group; an edge panel with lines
// contiguous) is zero-filled element by element.
template <typename T, int G>
T* PackPanel(int width, int valid, std::int64_t depth, std::int64_t padded_depth, const T* base,
             std::int64_t line_stride, std::int64_t k_stride, T* out) {
  const std::int64_t groups = padded_depth / G;
  const std::int64_t fast_groups = valid == width ? depth / G : 0;
  std::int64_t g = 0;
  if (k_stride == 1) {
    if constexpr (kWordGroups<T, G>) {
      const std::int64_t quads = fast_groups / 4 * 4;
      TransposeGroupQuads(width, quads, base, line_stride, out);
      g = quads;
      out += quads * width * G;
    }
    for (; g < depth / G; ++g) {
      const T* first = base + g * G;
      for (int l = 0; l < valid; ++l, out += G) {
        std::memcpy(out, first + l * line_stride, G * sizeof(T));
      }
      out = std::fill_n(out, (width - valid) * G, T{});
    }
  } else if (line_stride == 1) {
    for (; g < fast_groups; ++g) {
      out = InterleaveGroup<T, G>(width, base + g * G * k_stride, k_stride, out);
    }
  }
  for (; g < groups; ++g) {
    for (int l = 0; l < width; ++l) {
      for (int t = 0; t < G; ++t) {
        const std::int64_t p = g * G + t;
        *out++ = l < valid && p < depth ? base[l * line_stride + p * k_stride] : T{};
      }
    }
  }
  return out;
}

// The groups of the dot-product instructions (2, 4) and the tile rows of AMX (64 bytes).
template <typename T>
T* PackPanelOfGroup(int group, int width, int valid, std::int64_t depth,
                    std::int64_t padded_depth, const T* base, std::int64_t line_stride,
                    std::int64_t k_stride, T* out) {
  auto pack = [&]<int G>() {
    return PackPanel<T, G>(width, valid, depth, padded_depth, base, line_stride, k_stride, out);
  };
  switch (group) {
    case 2: return pack.template operator()<2>();
    case 4: return pack.template operator()<4>();
    case 32: return pack.template operator()<32>();
    case 64: return pack.template operator()<64>();
    default: return pack.template operator()<1>();
  }
}

// f32 and f64 panels, k not grouped, with a fast path for each operand layout.
template <typename T>
void PackAUngrouped(const MatrixView<T>& a, std::int64_t row0, std::int64_t rows,
                    std::int64_t col0, std::int64_t depth, int mr, T* packed) {
  for (std::int64_t panel = 0; panel < rows; panel += mr) {
    const int valid = static_cast<int>(rows - panel < mr ? rows - panel : mr);
    if (a.trans == Trans::kYes) {
      // op(A) rows are contiguous in storage columns: copy mr consecutive values per p.
      for (std::int64_t p = 0; p < depth; ++p) {
        const T* src = a.data + (col0 + p) * a.ld + row0 + panel;
        T* dst = packed + p * mr;
        for (int i = 0; i < valid; ++i) dst[i] = src[i];
        for (int i = valid; i < mr; ++i) dst[i] = T(0);
      }
    } else {
      // Rows two at a time: each pair of source rows is read sequentially and written as
      // interleaved pairs, one store per k for both rows (PackRowPair). One row is a few KiB,
      // too short for the hardware prefetchers to get ahead of, so the next rows are
      // prefetched a line per line copied, which packs A blocks from memory much faster.
      const T* first = a.data + (row0 + panel) * a.ld + col0;
      int i = 0;
      for (; i + 2 <= valid; i += 2) {
        const T* src = first + i * a.ld;
        const T* next0 = panel + i + 2 < rows ? src + 2 * a.ld : src;
        const T* next1 = panel + i + 3 < rows ? src + 3 * a.ld : src;
        PackRowPair(src, src + a.ld, next0, next1, depth, mr, packed + i);
      }
      if (i < valid) {
        const T* src = first + i * a.ld;
        const T* next = panel + i + 1 < rows ? src + a.ld : src;
        PackRow(src, next, depth, mr, packed + i);
        ++i;
      }
      for (; i < mr; ++i) {
        for (std::int64_t p = 0; p < depth; ++p) packed[p * mr + i] = T(0);
      }
    }
    packed += depth * mr;
  }
}

template <typename T>
void PackBUngrouped(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth,
                    std::int64_t col0, std::int64_t cols, int nr, T* packed) {
  if (b.trans == Trans::kNo) {
    // A group of kPackBRowGroup rows at a time across all the panels: each source row is read
    // sequentially, which the hardware prefetchers follow (panel by panel, a 16-float strip of
    // every row is a new cache line and often a new page, and the whole GEMM runs slower), and
    // each panel gets the group's rows as one contiguous run. One row at a time would write a
    // line to every panel in turn, panels kc * nr elements apart: at kc = 512 and nr = 64 that
    // is 128 KiB, one L2 way, so 16 or more panels crowd the same sets. The next group's rows
    // are prefetched a line per line copied: where B's rows are a page or more apart each one
    // starts a new page, which the hardware prefetchers do not cross. Packing a large B from
    // memory in groups is faster than one row at a time, and much faster than in blocks of
    // columns.
    const std::int64_t panels = (cols + nr - 1) / nr;
    constexpr std::int64_t kLine = kCacheLineBytes / sizeof(T);
    for (std::int64_t p = 0; p < depth; p += kPackBRowGroup) {
      const std::int64_t rows = depth - p < kPackBRowGroup ? depth - p : kPackBRowGroup;
      const std::int64_t rows_ahead = depth - p - rows < rows ? depth - p - rows : rows;
      const T* group = b.data + (row0 + p) * b.ld + col0;
      for (std::int64_t q = 0; q < panels; ++q) {
        const int valid = static_cast<int>(cols - q * nr < nr ? cols - q * nr : nr);
        T* dst = packed + (q * depth + p) * nr;
        for (std::int64_t r = 0; r < rows; ++r, dst += nr) {
          const T* src = group + r * b.ld + q * nr;
          if (r < rows_ahead) {
            for (int j = 0; j < valid; j += kLine) __builtin_prefetch(src + rows * b.ld + j);
          }
          for (int j = 0; j < valid; ++j) dst[j] = src[j];
          for (int j = valid; j < nr; ++j) dst[j] = T(0);
        }
      }
    }
    return;
  }
  for (std::int64_t panel = 0; panel < cols; panel += nr) {
    const int valid = static_cast<int>(cols - panel < nr ? cols - panel : nr);
    for (int j = 0; j < valid; ++j) {
      const T* src = b.data + (col0 + panel + j) * b.ld + row0;
      for (std::int64_t p = 0; p < depth; ++p) packed[p * nr + j] = src[p];
    }
    for (int j = valid; j < nr; ++j) {
      for (std::int64_t p = 0; p < depth; ++p) packed[p * nr + j] = T(0);
    }
    packed += depth * nr;
  }
}

template <typename T>
void PackAGrouped(const MatrixView<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0,
                  std::int64_t depth, int mr, int group, std::int64_t padded_depth, T* packed) {
  // op(A)(i, p) = a.At(i, p): rows are the lines.
  const bool k_contiguous = a.trans == Trans::kNo;
  const std::int64_t line_stride = k_contiguous ? a.ld : 1;
  const std::int64_t k_stride = k_contiguous ? 1 : a.ld;
  for (std::int64_t panel = 0; panel < rows; panel += mr) {
    const int valid = static_cast<int>(rows - panel < mr ? rows - panel : mr);
    packed = PackPanelOfGroup<T>(group, mr, valid, depth, padded_depth,
                                 &a.At(row0 + panel, col0), line_stride, k_stride, packed);
  }
}

// The wide interleave of a strip's group of G values of T where this CPU runs it at the
// dispatched level (MMTUNE_ISA caps it as it caps the kernels); null elsewhere.
template <typename T, int G>
wide::StripFn<T> WideStrips() {
#if MMTUNE_X86_KERNELS
  static const bool avx512 = [] {
    const auto cap = IsaCapFromEnvironment();
    return DispatchIsaLevel(HostCpuFeatures().MaxIsaLevel(),
                            cap.ok() ? *cap : std::optional<IsaLevel>{}) == IsaLevel::kAvx512;
  }();
  if (avx512) {
    if constexpr (std::is_same_v<T, BFloat16> && G == 2) return wide::Avx512PairStrips();
    if constexpr (std::is_same_v<T, std::int8_t> && G == 4) return wide::Avx512QuadStrips();
  }
#endif
  return nullptr;
}

// The whole groups of op(B) rows of a B stored row-major (columns side by side), a few panels
// at a time (kPackBRowStepBytes of each row, at most kPackBMaxPanelsAtOnce panels; one panel
// where its strip of a row is that long), each group in turn, so that every line of B is read
// whole and a few lines of each row together, which the prefetchers follow better than one line
// of every row. Writing a group to every panel in turn (panels kc * nr * 2 or 4 bytes apart,
// often a multiple of 4 KiB) would store into more L1 lines of one set than it has ways.
// Returns the k values packed, a multiple of G; the rest is PackPanel's.
template <typename T, int G>
std::int64_t PackRowMajorBGroups(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth,
                                 std::int64_t col0, std::int64_t cols, int nr,
                                 std::int64_t padded_depth, T* packed) {
  const std::int64_t groups = depth / G;
  const std::int64_t panels = (cols + nr - 1) / nr;
  const std::int64_t strip_bytes = nr * std::int64_t{sizeof(T)};
  const std::int64_t per_step =
      std::clamp<std::int64_t>(kPackBRowStepBytes / strip_bytes, 1, kPackBMaxPanelsAtOnce);
  constexpr int kColumns = kVectorBytes / sizeof(T);
  const wide::StripFn<T> wide_strip =
      strip_bytes % wide::kStripBytes == 0 ? WideStrips<T, G>() : nullptr;
  // Whether panel q is whole and its strips whole vectors: its groups take the vector path.
  auto vectors_only = [&](std::int64_t q) {
    return kWordGroups<T, G> && (q + 1) * nr <= cols && nr % kColumns == 0;
  };
  // Where group g of panel q starts: its first row's strip in B, and its place in `packed`.
  auto strip_at = [&](std::int64_t q, std::int64_t g) {
    return b.data + (row0 + g * G) * b.ld + col0 + q * nr;
  };
  auto packed_at = [&](std::int64_t q, std::int64_t g) {
    return packed + (q * padded_depth + g * G) * nr;
  };
  // Group g of panel q into `out`: its G rows' strips interleaved, columns past B's edge zero.
  auto pack_group = [&](std::int64_t q, std::int64_t g, bool vectors, T* out) {
    const T* first = strip_at(q, g);
    if constexpr (kWordGroups<T, G>) {
      if (vectors) {
        const T* rows[G];
        for (int t = 0; t < G; ++t) rows[t] = first + t * b.ld;
        for (int l = 0; l < nr; l += kColumns, out += kColumns * G) {
          InterleaveColumns<T, G>(rows, l, out);
        }
        return;
      }
    }
    const int valid = static_cast<int>(std::min<std::int64_t>(nr, cols - q * nr));
    out = InterleaveGroup<T, G>(valid, first, b.ld, out);
    std::fill_n(out, (nr - valid) * G, T{});
  };
  // The rows kPackBRowsAhead below group g's, under the strips of panels [q0, q1): where B's
  // rows are a page or more apart each starts a new page, which the hardware prefetchers do
  // not cross, and packing a B from L3 would wait on every line.
  const std::int64_t groups_ahead = kPackBRowsAhead / G;
  auto strips_ahead = [&](std::int64_t q0, std::int64_t g) -> const T* {
    return g + groups_ahead < groups ? strip_at(q0, g + groups_ahead) : nullptr;
  };
  auto strip_bytes_of = [&](std::int64_t q0, std::int64_t q1) {
    return (std::min(cols, q1 * nr) - q0 * nr) * std::int64_t{sizeof(T)};
  };
  // Panels [q0, q1), a group at a time; kWhole: every one of them whole, which takes the vector
  // path's branch out of the loops (measurably faster).
  auto pack_step = [&](std::int64_t q0, std::int64_t q1, auto whole) {
    constexpr bool kWhole = decltype(whole)::value;
    const std::int64_t bytes = strip_bytes_of(q0, q1);
    if (kWhole && wide_strip != nullptr) {
      wide_strip(strip_at(q0, 0), b.ld, groups, nr, static_cast<int>(q1 - q0), padded_depth * nr,
                 packed_at(q0, 0), groups_ahead, bytes);
      return;
    }
    for (std::int64_t g = 0; g < groups; ++g) {
      if (const T* next = strips_ahead(q0, g)) wide::PrefetchStrips(next, b.ld, G, bytes);
      for (std::int64_t q = q0; q < q1; ++q) {
        pack_group(q, g, kWhole || vectors_only(q), packed_at(q, g));
      }
    }
  };
  for (std::int64_t q0 = 0; q0 < panels; q0 += per_step) {
    const std::int64_t q1 = std::min(panels, q0 + per_step);
    if (vectors_only(q1 - 1)) {
      pack_step(q0, q1, std::true_type{});
    } else {
      pack_step(q0, q1, std::false_type{});
    }
  }
  return groups * G;
}

// op(B)'s columns are the rows of op(B)^T, which is B's view with the other transpose flag, so
// B's panels are A's panels of that view; a row-major B packs its whole groups a few panels at
// a time first (PackRowMajorBGroups).
template <typename T>
void PackBGrouped(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0,
                  std::int64_t cols, int nr, int group, std::int64_t padded_depth, T* packed) {
  std::int64_t done = 0;
  if (b.trans == Trans::kNo) {
    auto across = [&]<int G>() {
      return PackRowMajorBGroups<T, G>(b, row0, depth, col0, cols, nr, padded_depth, packed);
    };
    done = group == 2 ? across.template operator()<2>()
           : group == 4 ? across.template operator()<4>()
                        : 0;
  }
  if (done == 0) {
    const MatrixView<T> transposed{b.data, b.ld, b.trans == Trans::kNo ? Trans::kYes : Trans::kNo};
    return PackAGrouped(transposed, col0, cols, row0, depth, nr, group, padded_depth, packed);
  }
  for (std::int64_t panel = 0; panel < cols; panel += nr) {  // the last partial group, padding
    const int valid = static_cast<int>(std::min<std::int64_t>(nr, cols - panel));
    PackPanelOfGroup<T>(group, nr, valid, depth - done, padded_depth - done,
                        &b.At(row0 + done, col0 + panel), 1, b.ld,
                        packed + panel * padded_depth + done * nr);
  }
}

std::int64_t PaddedDepth(std::int64_t depth, int group, std::int64_t padded_depth) {
  return padded_depth != 0 ? padded_depth : (depth + group - 1) / group * group;
}

}  // namespace

template <typename T>
void PackA(const MatrixView<T>& a, std::int64_t row0, std::int64_t rows, std::int64_t col0,
           std::int64_t depth, int mr, int group, T* packed, std::int64_t padded_depth) {
  padded_depth = PaddedDepth(depth, group, padded_depth);
  if constexpr (std::is_floating_point_v<T>) {
    if (group == 1 && padded_depth == depth) {
      return PackAUngrouped(a, row0, rows, col0, depth, mr, packed);
    }
  }
  PackAGrouped(a, row0, rows, col0, depth, mr, group, padded_depth, packed);
}

template <typename T>
void PackB(const MatrixView<T>& b, std::int64_t row0, std::int64_t depth, std::int64_t col0,
           std::int64_t cols, int nr, int group, T* packed, std::int64_t padded_depth) {
  padded_depth = PaddedDepth(depth, group, padded_depth);
  if constexpr (std::is_floating_point_v<T>) {
    if (group == 1 && padded_depth == depth) {
      return PackBUngrouped(b, row0, depth, col0, cols, nr, packed);
    }
  }
  PackBGrouped(b, row0, depth, col0, cols, nr, group, padded_depth, packed);
}

#define MMTUNE_INSTANTIATE_PACKING(T)                                                    \
  template void PackA<T>(const MatrixView<T>&, std::int64_t, std::int64_t, std::int64_t, \
                         std::int64_t, int, int, T*, std::int64_t);                      \
  template void PackB<T>(const MatrixView<T>&, std::int64_t, std::int64_t, std::int64_t, \
                         std::int64_t, int, int, T*, std::int64_t);
MMTUNE_INSTANTIATE_PACKING(float)
MMTUNE_INSTANTIATE_PACKING(double)
MMTUNE_INSTANTIATE_PACKING(BFloat16)
MMTUNE_INSTANTIATE_PACKING(std::uint8_t)
MMTUNE_INSTANTIATE_PACKING(std::int8_t)
#undef MMTUNE_INSTANTIATE_PACKING

}  // namespace mmtune
