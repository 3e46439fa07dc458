// Per-thread scratch memory for packed panels and GEMV accumulators. Buffers are 64-byte
// aligned, grow on demand and are kept for the thread's lifetime, so steady-state GEMM calls
// allocate nothing.
#pragma once

#include <cstddef>

namespace mmtune {

enum class WorkspaceSlot { kPackedA = 0, kPackedB = 1, kEdgeA = 2, kEdgeB = 3, kVector = 4 };

// At least `bytes` of 64-byte aligned memory owned by the calling thread for `slot`; valid until
// the same thread asks for the same slot again.
void* ThreadWorkspace(WorkspaceSlot slot, std::size_t bytes);

template <typename T>
T* ThreadWorkspaceOf(WorkspaceSlot slot, std::size_t count) {
  return static_cast<T*>(ThreadWorkspace(slot, count * sizeof(T)));
}

}  // namespace mmtune
