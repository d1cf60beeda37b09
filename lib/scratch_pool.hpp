// Scratch buffers reused from call to call: a fresh allocation of megabytes per call costs a page
// fault per page on first touch, which is more than many collectives' own copies.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace lanes::detail {

class ScratchPool {
 public:
  // A buffer of at least the asked size, given back to its pool when the lease ends. The pool
  // must outlive its leases.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept { *this = std::move(other); }
    Lease& operator=(Lease&& other) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }
    std::byte* data() const { return buffer_.get(); }
    std::size_t capacity() const { return capacity_; }
    const ScratchPool* pool() const { return pool_; }

   private:
    friend class ScratchPool;
    void release();
    ScratchPool* pool_ = nullptr;
    std::unique_ptr<std::byte[]> buffer_;
    std::size_t capacity_ = 0;
  };

  explicit ScratchPool(std::size_t keep = 4) : keep_(keep) {}
  Lease take(std::size_t bytes);

 private:
  struct Idle {
    std::unique_ptr<std::byte[]> buffer;
    std::size_t capacity = 0;
  };
  void give_back(std::unique_ptr<std::byte[]> buffer, std::size_t capacity);

  std::size_t keep_;
  std::mutex mutex_;
  std::vector<Idle> idle_;
};

}  // namespace lanes::detail
