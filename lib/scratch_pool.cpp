#include "lib/scratch_pool.hpp"

#include <algorithm>
#include <utility>

namespace lanes::detail {

ScratchPool::Lease& ScratchPool::Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    pool_ = std::exchange(other.pool_, nullptr);
    buffer_ = std::move(other.buffer_);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void ScratchPool::Lease::release() {
  if (pool_ != nullptr && buffer_) pool_->give_back(std::move(buffer_), capacity_);
  pool_ = nullptr;
  capacity_ = 0;
}

ScratchPool::Lease ScratchPool::take(std::size_t bytes) {
  Lease lease;
  if (bytes == 0) return lease;
  lease.pool_ = this;
  {
    std::lock_guard lock(mutex_);
    // The smallest idle buffer that is large enough.
    auto best = idle_.end();
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->capacity >= bytes && (best == idle_.end() || it->capacity < best->capacity))
        best = it;
    }
    if (best != idle_.end()) {
      lease.buffer_ = std::move(best->buffer);
      lease.capacity_ = best->capacity;
      idle_.erase(best);
      return lease;
    }
  }
  lease.buffer_.reset(new std::byte[bytes]);
  lease.capacity_ = bytes;
  return lease;
}

void ScratchPool::give_back(std::unique_ptr<std::byte[]> buffer, std::size_t capacity) {
  std::lock_guard lock(mutex_);
  idle_.push_back({std::move(buffer), capacity});
  if (idle_.size() > keep_) {
    // Keep the largest: they serve every smaller call too.
    const auto smallest =
        std::min_element(idle_.begin(), idle_.end(),
                         [](const Idle& a, const Idle& b) { return a.capacity < b.capacity; });
    idle_.erase(smallest);
  }
}

}  // namespace lanes::detail
