// A POSIX shared-memory segment shared by the processes of one node. Created O_EXCL with mode
// 0600 under an unguessable name, its space reserved before mmap (a full /dev/shm is a clear
// error, not a SIGBUS later), and unlinked as soon as every local process has mapped it.
#pragma once

#include <cstddef>
#include <string>

namespace lanes::transport {

class ShmSegment {
 public:
  ShmSegment() = default;
  // Creates and maps a new segment of `bytes`. Throws lanes::Error(resource) when /dev/shm lacks
  // the space, naming what is needed and what is free.
  static ShmSegment create(std::size_t bytes);
  // Maps an existing segment by name.
  static ShmSegment attach(const std::string& name, std::size_t bytes);

  ShmSegment(ShmSegment&& o) noexcept { *this = std::move(o); }
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  // Removes the name (the mapping stays). Idempotent, and harmless after another process did;
  // the creator also unlinks on destruction.
  void unlink() noexcept;

  void* data() const { return base_; }
  std::size_t size() const { return bytes_; }
  const std::string& name() const { return name_; }
  explicit operator bool() const { return base_ != nullptr; }

 private:
  // Unlinks (when the creator) and unmaps: what the destructor does, and a move assignment
  // before it takes the other segment.
  void release() noexcept;
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  std::string name_;
  bool owner_ = false;
  bool unlinked_ = false;
};

// Prefix of every segment name lanes creates in /dev/shm.
inline constexpr const char* kShmNamePrefix = "/lanes-";

}  // namespace lanes::transport
