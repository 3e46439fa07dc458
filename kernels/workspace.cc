#include "kernels/workspace.h"

#include <atomic>
#include <cstdlib>
#include <memory>

namespace mmtune {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct Buffer {
  std::unique_ptr<void, FreeDeleter> memory;
  std::size_t bytes = 0;
};

constexpr int kSlots = 6;

std::atomic<std::size_t> g_limit{0};

}  // namespace

void SetWorkspaceLimit(std::size_t bytes) noexcept {
  g_limit.store(bytes, std::memory_order_relaxed);
}

void* ThreadWorkspace(WorkspaceSlot slot, std::size_t bytes) noexcept {
  const std::size_t limit = g_limit.load(std::memory_order_relaxed);
  if (limit != 0 && bytes > limit) return nullptr;
  thread_local Buffer buffers[kSlots];
  Buffer& buffer = buffers[static_cast<int>(slot)];
  if (buffer.bytes < bytes) {
    // Round up to whole cache lines plus one spare line, so vector over-reads of zero-padded
    // panels stay inside the allocation.
    if (bytes > static_cast<std::size_t>(-1) - 127) return nullptr;
    const std::size_t size = (bytes + 127) / 64 * 64;
    void* memory = std::aligned_alloc(64, size);
    if (memory == nullptr) return nullptr;
    buffer.memory.reset(memory);
    buffer.bytes = size;
  }
  return buffer.memory.get();
}

}  // namespace mmtune
