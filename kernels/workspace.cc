#include "kernels/workspace.h"

#include <cstdlib>
#include <memory>
#include <new>

namespace mmtune {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

struct Buffer {
  std::unique_ptr<void, FreeDeleter> memory;
  std::size_t bytes = 0;
};

constexpr int kSlots = 5;

}  // namespace

void* ThreadWorkspace(WorkspaceSlot slot, std::size_t bytes) {
  thread_local Buffer buffers[kSlots];
  Buffer& buffer = buffers[static_cast<int>(slot)];
  if (buffer.bytes < bytes) {
    // Round up to whole cache lines plus one spare line, so vector over-reads of zero-padded
    // panels stay inside the allocation.
    const std::size_t size = (bytes + 127) / 64 * 64;
    void* memory = std::aligned_alloc(64, size);
    if (memory == nullptr) throw std::bad_alloc();
    buffer.memory.reset(memory);
    buffer.bytes = size;
  }
  return buffer.memory.get();
}

}  // namespace mmtune
