// Anonymous memory for the tests' large buffers, with transparent huge pages asked for: on a VM
// each first touch of a 4 KiB page traps, and at 64 MiB and beyond those traps cost more than the
// collectives under test. The pages read as zero until written.
#pragma once

#include <cstddef>
#include <new>
#include <span>
#include <utility>

#include <sys/mman.h>

namespace lanes_tests {

inline void* map_huge_pages(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: small pages work too
  return p;
}

inline void unmap_huge_pages(void* p, std::size_t bytes) {
  munmap(p, bytes);
}

// One such buffer, unmapped when it goes.
class HugePageBuffer {
 public:
  explicit HugePageBuffer(std::size_t bytes)
      : bytes_(bytes), data_(bytes == 0 ? nullptr : map_huge_pages(bytes)) {}
  HugePageBuffer(HugePageBuffer&& other) noexcept
      : bytes_(std::exchange(other.bytes_, 0)), data_(std::exchange(other.data_, nullptr)) {}
  HugePageBuffer& operator=(HugePageBuffer&&) = delete;
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  ~HugePageBuffer() {
    if (data_ != nullptr) unmap_huge_pages(data_, bytes_);
  }
  std::span<char> span() { return {static_cast<char*>(data_), bytes_}; }

 private:
  std::size_t bytes_;
  void* data_;
};

}  // namespace lanes_tests
