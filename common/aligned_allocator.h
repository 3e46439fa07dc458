// A standard allocator whose blocks start on a multiple of kAlignment bytes: std::vector storage
// on cache lines or pages, as applications' tensors are, where alignment changes which path a
// kernel takes (a tile row across two cache lines stores slower).
#pragma once

#include <cstddef>
#include <new>

namespace mmtune {

template <typename T, std::size_t kAlignment>
struct AlignedAllocator {
  static_assert(kAlignment >= alignof(T) && (kAlignment & (kAlignment - 1)) == 0);
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = AlignedAllocator<U, kAlignment>;
  };

  AlignedAllocator() = default;
  template <typename U>
  explicit AlignedAllocator(const AlignedAllocator<U, kAlignment>&) {}

  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kAlignment}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kAlignment}); }
  bool operator==(const AlignedAllocator&) const = default;
};

}  // namespace mmtune
