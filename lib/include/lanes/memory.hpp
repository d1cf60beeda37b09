// lanes::Memory: a block from Runtime::allocate(), which the other processes of its node read in
// place. Node messages whose source lies in such a block cost one memcpy by their receiver (a
// reduction combines them straight from there), where ordinary memory costs the kernel's copy
// (process_vm_readv, 1.7-3.4 times memcpy's time) or two copies through the node segment.
// Move-only; the block goes back to the heap when the Memory is destroyed, also after the
// runtime ended.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace lanes {

class Memory {
 public:
  Memory() = default;
  Memory(Memory&&) noexcept = default;
  Memory& operator=(Memory&&) noexcept = default;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
  ~Memory() = default;

  void* data() const { return block_.get(); }
  std::size_t size() const { return size_; }
  // The block as `size() / sizeof(T)` elements of T.
  template <class T>
  std::span<T> as() const {
    return {static_cast<T*>(block_.get()), size_ / sizeof(T)};
  }
  // Whether the block lies in the shared heap (false: ordinary memory, where the heap is off,
  // LANES_HEAP_SIZE=0, or full).
  bool shared() const { return shared_; }
  explicit operator bool() const { return block_ != nullptr; }

 private:
  friend class Runtime;
  Memory(std::shared_ptr<void> block, std::size_t size, bool shared)
      : block_(std::move(block)), size_(size), shared_(shared) {}
  std::shared_ptr<void> block_;  // its deleter gives the block back
  std::size_t size_ = 0;
  bool shared_ = false;
};

}  // namespace lanes
