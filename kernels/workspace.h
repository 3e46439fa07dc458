// Per-thread scratch memory for packed panels and GEMV accumulators. Buffers are 64-byte
// aligned, grow on demand and are kept for the thread's lifetime, so steady-state GEMM calls
// allocate nothing.
#pragma once

#include <cstddef>

namespace mmtune {

enum class WorkspaceSlot {
  kPackedA = 0,
  kPackedB = 1,
  kEdgeA = 2,
  kEdgeB = 3,
  kVector = 4,
  kSums = 5,
};

// At least `bytes` of 64-byte aligned memory owned by the calling thread for `slot`; valid until
// the same thread asks for the same slot again. Null where the memory cannot be had (the slot
// keeps what it held): the drivers then return an error before they write any output.
void* ThreadWorkspace(WorkspaceSlot slot, std::size_t bytes) noexcept;

// At most `bytes` per scratch request from now on, for every thread (0: no limit, the start); a
// request past it fails as if memory had run out. For tests of that path, and for hosts that
// must bound what a GEMM may take.
void SetWorkspaceLimit(std::size_t bytes) noexcept;

template <typename T>
T* ThreadWorkspaceOf(WorkspaceSlot slot, std::size_t count) noexcept {
  if (count > static_cast<std::size_t>(-1) / sizeof(T)) return nullptr;
  return static_cast<T*>(ThreadWorkspace(slot, count * sizeof(T)));
}

}  // namespace mmtune
