#include "transport/shm/heap.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <lanes/error.hpp>
#include <string>

namespace lanes::transport {

namespace {

std::string why(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

SharedHeap::SharedHeap(std::size_t capacity) {
  capacity_ = (capacity + kPage - 1) / kPage * kPage;
  if (capacity_ == 0) throw Error(Errc::invalid_argument, "a shared heap needs a capacity");
  fd_ = memfd_create("lanes-heap", MFD_CLOEXEC);
  if (fd_ < 0) throw Error(Errc::resource, why("memfd_create for the shared heap"));
  struct stat st {};
  void* base = MAP_FAILED;
  if (ftruncate(fd_, static_cast<off_t>(capacity_)) == 0 && fstat(fd_, &st) == 0) {
    base = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd_, 0);
  }
  if (base == MAP_FAILED) {
    const std::string message = why("reserving the shared heap");
    ::close(fd_);
    throw Error(Errc::resource, message + " (" + std::to_string(capacity_ >> 20) + " MiB)");
  }
  base_ = static_cast<char*>(base);
  inode_ = static_cast<std::uint64_t>(st.st_ino);
  add_free(0, capacity_);
}

void SharedHeap::add_free(std::size_t at, std::size_t bytes) {
  free_.emplace(at, bytes);
  by_size_.emplace(bytes, at);
}

void SharedHeap::remove_free(std::map<std::size_t, std::size_t>::iterator run) {
  by_size_.erase(std::make_pair(run->second, run->first));
  free_.erase(run);
}

SharedHeap::~SharedHeap() {
  const std::lock_guard<std::mutex> lock(mu_);
  if (allocated_ > 0) return;  // the program still holds blocks: they stay mapped
  munmap(base_, capacity_);
  ::close(fd_);
}

void* SharedHeap::allocate(std::size_t bytes) {
  const std::size_t want = bytes == 0 ? kPage : (bytes + kPage - 1) / kPage * kPage;
  if (bytes > capacity_) return nullptr;
  const std::lock_guard<std::mutex> lock(mu_);
  const auto fit = by_size_.lower_bound(std::make_pair(want, std::size_t{0}));
  if (fit == by_size_.end()) return nullptr;
  const std::size_t at = fit->second;
  const std::size_t left = fit->first - want;
  remove_free(free_.find(at));
  if (left > 0) add_free(at + want, left);
  used_.emplace(at, want);
  allocated_ += want;
  return base_ + at;
}

bool SharedHeap::release(void* p) noexcept {
  if (p == nullptr || !contains(p, 1)) return false;
  const auto at = static_cast<std::size_t>(static_cast<char*>(p) - base_);
  const std::lock_guard<std::mutex> lock(mu_);
  const auto used = used_.find(at);
  if (used == used_.end()) return false;
  const std::size_t bytes = used->second;
  used_.erase(used);
  allocated_ -= bytes;
  // Large blocks hand their pages back; small ones keep them for the next allocation.
  if (bytes >= kReturnPagesMin) madvise(base_ + at, bytes, MADV_REMOVE);
  std::size_t start = at, size = bytes;
  auto next = free_.lower_bound(at);
  if (next != free_.end() && next->first == at + bytes) {
    size += next->second;
    next = std::next(next);
    remove_free(std::prev(next));
  }
  if (next != free_.begin()) {
    const auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      remove_free(prev);
    }
  }
  add_free(start, size);
  return true;
}

HeapView SharedHeap::view() const {
  HeapView v;
  v.pid = static_cast<std::int64_t>(getpid());
  v.fd = fd_;
  v.inode = inode_;
  v.base = reinterpret_cast<std::uint64_t>(base_);
  v.bytes = capacity_;
  return v;
}

std::size_t SharedHeap::allocated() const {
  const std::lock_guard<std::mutex> lock(mu_);
  return allocated_;
}

// ---------------------------------------------------------------------------------------------
PeerHeaps::~PeerHeaps() {
  for (const auto& [key, mapping] : maps_) munmap(mapping.first, mapping.second);
}

char* PeerHeaps::map(const HeapView& view) {
  if (view.bytes == 0 || view.fd < 0 || view.pid <= 0) return nullptr;
  const Key key{view.pid, view.fd, view.inode};
  const std::lock_guard<std::mutex> lock(mu_);
  if (const auto it = maps_.find(key); it != maps_.end()) return it->second.first;
  const std::string path = "/proc/" + std::to_string(view.pid) + "/fd/" + std::to_string(view.fd);
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st {};
  void* base = MAP_FAILED;
  if (fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_ino) == view.inode &&
      static_cast<std::uint64_t>(st.st_size) == view.bytes) {
    base = mmap(nullptr, view.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  }
  ::close(fd);
  if (base == MAP_FAILED) return nullptr;
  maps_.emplace(key,
                std::make_pair(static_cast<char*>(base), static_cast<std::size_t>(view.bytes)));
  return static_cast<char*>(base);
}

}  // namespace lanes::transport
