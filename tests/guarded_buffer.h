// A read-only copy of some elements that ends exactly where an inaccessible page begins, so a
// kernel that reads even one element past the end faults at once (in any build, not only under
// AddressSanitizer, and also for reads that a heap allocation's slack would hide).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>

namespace mmtune::testing {

template <typename T>
class GuardedCopy {
 public:
  GuardedCopy(const T* values, std::size_t count) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t data_pages = (count * sizeof(T) + page - 1) / page;
    size_ = (data_pages + 1) * page;
    void* base = mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::runtime_error("GuardedCopy: mmap failed");
    base_ = static_cast<char*>(base);
    char* guard = base_ + data_pages * page;
    data_ = reinterpret_cast<T*>(guard) - count;
    if (count > 0) std::memcpy(data_, values, count * sizeof(T));
    if (mprotect(guard, page, PROT_NONE) != 0) {
      munmap(base_, size_);
      throw std::runtime_error("GuardedCopy: mprotect failed");
    }
  }
  ~GuardedCopy() { munmap(base_, size_); }
  GuardedCopy(const GuardedCopy&) = delete;
  GuardedCopy& operator=(const GuardedCopy&) = delete;

  const T* data() const { return data_; }

 private:
  char* base_ = nullptr;
  std::size_t size_ = 0;
  T* data_ = nullptr;
};

}  // namespace mmtune::testing
