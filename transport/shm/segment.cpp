#include "transport/shm/segment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <lanes/error.hpp>

namespace lanes::transport {

namespace {

// Mapping a segment's pages at once: a message's first use of a slot would otherwise take a page
// fault per page in each process (about 300 us for the chunk buffers of one 1 MiB staged message
// in a virtual machine, eight times over as the slots first come into use). Larger segments (many
// ranks per node, most pairs rarely used) are left to fault in as they are touched, so start-up
// stays bounded.
constexpr std::size_t kPopulateLimit = 64u << 20;

int map_flags(std::size_t bytes) {
  return MAP_SHARED | (bytes <= kPopulateLimit ? MAP_POPULATE : 0);
}

std::string random_name() {
  std::uint64_t bits[2] = {0, 0};
  if (getrandom(bits, sizeof bits, 0) != static_cast<ssize_t>(sizeof bits)) {
    throw Error(Errc::resource, std::string("getrandom failed: ") + std::strerror(errno));
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s%016llx%016llx", kShmNamePrefix,
                static_cast<unsigned long long>(bits[0]), static_cast<unsigned long long>(bits[1]));
  return buf;
}

std::string mib(std::size_t bytes) {
  return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    release();
    base_ = o.base_;
    bytes_ = o.bytes_;
    name_ = std::move(o.name_);
    owner_ = o.owner_;
    unlinked_ = o.unlinked_;
    o.base_ = nullptr;
    o.owner_ = false;
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  release();
}

void ShmSegment::release() noexcept {
  if (owner_) unlink();
  if (base_ != nullptr) munmap(base_, bytes_);
  base_ = nullptr;
  owner_ = false;
}

void ShmSegment::unlink() noexcept {
  if (!unlinked_ && !name_.empty()) {
    shm_unlink(name_.c_str());
    unlinked_ = true;
  }
}

ShmSegment ShmSegment::create(std::size_t bytes) {
  struct statvfs vfs {};
  if (statvfs("/dev/shm", &vfs) == 0) {
    const std::size_t free_bytes = static_cast<std::size_t>(vfs.f_bavail) * vfs.f_frsize;
    if (free_bytes < bytes) {
      throw Error(Errc::resource, "/dev/shm has " + mib(free_bytes) + " free but the node's " +
                                      "shared-memory segment needs " + mib(bytes) +
                                      ": free space in /dev/shm or enlarge it " +
                                      "(mount -o remount,size=... /dev/shm)");
    }
  }
  ShmSegment seg;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    seg.name_ = random_name();
    fd = shm_open(seg.name_.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      throw Error(Errc::resource, "shm_open(" + seg.name_ + ") failed: " + std::strerror(errno));
    }
  }
  if (fd < 0) throw Error(Errc::resource, "could not create a unique shared-memory segment name");
  Fd guard(fd);
  seg.owner_ = true;  // from here on the destructor unlinks
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    throw Error(Errc::resource, "ftruncate of " + seg.name_ + " to " + mib(bytes) +
                                    " failed: " + std::strerror(errno));
  }
  // Reserve the pages now: a full tmpfs fails here instead of raising SIGBUS on first touch.
  const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  if (rc != 0) {
    throw Error(Errc::resource, "cannot reserve " + mib(bytes) + " in /dev/shm for the node's " +
                                    "shared-memory segment (" + std::strerror(rc) +
                                    "): free space in /dev/shm or enlarge it");
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, map_flags(bytes), fd, 0);
  if (base == MAP_FAILED) {
    throw Error(Errc::resource, "mmap of " + mib(bytes) + " failed: " + std::strerror(errno));
  }
  seg.base_ = base;
  seg.bytes_ = bytes;
  return seg;
}

ShmSegment ShmSegment::attach(const std::string& name, std::size_t bytes) {
  const int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw Error(Errc::transport, "cannot open the node's shared-memory segment " + name + ": " +
                                     std::strerror(errno) +
                                     " (do all processes of a node share /dev/shm?)");
  }
  Fd guard(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < bytes) {
    throw Error(Errc::transport, "shared-memory segment " + name + " is smaller than expected");
  }
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, map_flags(bytes), fd, 0);
  if (base == MAP_FAILED) {
    throw Error(Errc::resource, "mmap of " + name + " failed: " + std::strerror(errno));
  }
  ShmSegment seg;
  seg.name_ = name;
  seg.base_ = base;
  seg.bytes_ = bytes;
  // Any process that mapped the segment may remove its name (unlink()): the node's first rank
  // need not outlive the set-up for /dev/shm to be left clean. Only the creator's destructor does.
  return seg;
}

}  // namespace lanes::transport
