// Memory that the other processes of a node read and write in place. Each process's heap is one
// memfd (no name in /dev/shm; its pages go with the last mapping), sized to its capacity at once
// and mapped whole: the kernel gives it pages only as they are touched. A node peer maps it
// through /proc/<pid>/fd/<fd> (ptrace's read access: the same user). A message whose source lies
// in its sender's heap is then copied by its receiver with memcpy out of its own mapping, or
// combined straight from there, where the kernel's copy of a peer's pages (process_vm_readv) takes
// 1.7-3.4 times memcpy's time and a staged message two copies.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

namespace lanes::transport {

// What a process publishes of its heap in its node segments.
struct HeapView {
  std::int64_t pid = 0;
  std::int64_t fd = -1;
  std::uint64_t inode = 0;  // the memfd's, so that a peer opens that file and no other
  std::uint64_t base = 0;   // its address in its owner
  std::uint64_t bytes = 0;  // 0: no heap
};

class SharedHeap {
 public:
  // Throws lanes::Error(resource) when the memfd or its mapping cannot be made.
  explicit SharedHeap(std::size_t capacity);
  // Unmaps the heap, except while blocks are still allocated: pointers the program still holds
  // stay valid until the process ends.
  ~SharedHeap();
  SharedHeap(const SharedHeap&) = delete;
  SharedHeap& operator=(const SharedHeap&) = delete;

  // A block of `bytes` rounded up to whole pages (one page for 0), page-aligned: the lowest of
  // the smallest free runs that hold it (O(log n) in the free runs); nullptr when none does.
  // Thread-safe.
  void* allocate(std::size_t bytes);
  // Gives a block back; false when `p` is not the start of a block of this heap. Blocks of
  // kReturnPagesMin bytes or more give their pages back to the kernel. Thread-safe.
  bool release(void* p) noexcept;
  // Whether [p, p + bytes) lies inside the heap (allocated or not).
  bool contains(const void* p, std::size_t bytes) const noexcept {
    const auto* c = static_cast<const char*>(p);
    return c >= base_ && bytes <= capacity_ &&
           c - base_ <= static_cast<std::ptrdiff_t>(capacity_ - bytes);
  }
  HeapView view() const;
  std::size_t capacity() const { return capacity_; }
  std::size_t allocated() const;

  static constexpr std::size_t kPage = 4096;
  static constexpr std::size_t kReturnPagesMin = std::size_t{1} << 20;

 private:
  void add_free(std::size_t at, std::size_t bytes);
  void remove_free(std::map<std::size_t, std::size_t>::iterator run);
  mutable std::mutex mu_;
  std::map<std::size_t, std::size_t> free_;                // offset -> bytes, neighbours merged
  std::set<std::pair<std::size_t, std::size_t>> by_size_;  // (bytes, offset) of free_
  std::unordered_map<std::size_t, std::size_t> used_;      // offset -> bytes
  std::size_t allocated_ = 0;
  int fd_ = -1;
  std::uint64_t inode_ = 0;
  char* base_ = nullptr;
  std::size_t capacity_ = 0;
};

// This process's mappings of its node peers' heaps, shared by its communicators: each heap is
// mapped once, on first use, and unmapped when this object goes.
class PeerHeaps {
 public:
  PeerHeaps() = default;
  PeerHeaps(const PeerHeaps&) = delete;
  PeerHeaps& operator=(const PeerHeaps&) = delete;
  ~PeerHeaps();
  // This process's address of the heap `view` describes, mapped on first use; nullptr where it
  // cannot be (the peer is gone, its file is not the one published, /proc/<pid>/fd may not be
  // opened here). Thread-safe.
  char* map(const HeapView& view);

 private:
  using Key = std::tuple<std::int64_t, std::int64_t, std::uint64_t>;  // pid, fd, inode
  std::mutex mu_;
  std::map<Key, std::pair<char*, std::size_t>> maps_;
};

}  // namespace lanes::transport
