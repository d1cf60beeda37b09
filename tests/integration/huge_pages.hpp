// Memory for the tests' large buffers, with transparent huge pages asked for: on a VM each first
// touch of a 4 KiB page traps, and at 64 MiB and beyond those traps cost more than the
// collectives under test. Smaller buffers, and every buffer under AddressSanitizer (whose red
// zones catch a write past the end, which mapped pages would not), come from the heap.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <span>

#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define LANES_TESTS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LANES_TESTS_ASAN 1
#endif
#endif

namespace lanes_tests {

inline constexpr std::size_t kHugePagesMin = 32u << 20;

// Whether a buffer of `bytes` is mapped (map_huge_pages) rather than taken from the heap.
inline bool mapped(std::size_t bytes) {
#ifdef LANES_TESTS_ASAN
  (void)bytes;
  return false;
#else
  return bytes >= kHugePagesMin;
#endif
}

inline void* map_huge_pages(std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: small pages work too
  return p;
}

inline void unmap_huge_pages(void* p, std::size_t bytes) {
  munmap(p, bytes);
}

// One buffer of `bytes`, unwritten, mapped or from the heap as mapped() says; freed when it goes.
class TestBuffer {
 public:
  explicit TestBuffer(std::size_t bytes) : bytes_(bytes) {
    if (mapped(bytes)) {
      data_ = static_cast<char*>(map_huge_pages(bytes));
    } else {
      heap_ = std::make_unique_for_overwrite<char[]>(bytes);
      data_ = heap_.get();
    }
  }
  TestBuffer(const TestBuffer&) = delete;
  TestBuffer& operator=(const TestBuffer&) = delete;
  ~TestBuffer() {
    if (heap_ == nullptr && data_ != nullptr) unmap_huge_pages(data_, bytes_);
  }
  std::span<char> span() { return {data_, bytes_}; }

 private:
  std::size_t bytes_;
  std::unique_ptr<char[]> heap_;
  char* data_ = nullptr;
};

}  // namespace lanes_tests
