#include "transport/shm/cma.hpp"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace lanes::transport {

namespace {

// The kernel may move fewer bytes than asked; loop until all are moved.
template <class Fn>
bool cma_loop(Fn fn, pid_t pid, char* local, char* remote, std::size_t bytes, std::string& error,
              const char* what) {
  while (bytes > 0) {
    iovec l{local, bytes};
    iovec r{remote, bytes};
    const ssize_t n = fn(pid, &l, 1, &r, 1, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR) continue;
      const int saved = n < 0 ? errno : EIO;
      error = std::string(what) + " with process " + std::to_string(pid) +
              " failed: " + std::strerror(saved);
      errno = saved;
      return false;
    }
    local += n;
    remote += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool cma_read(pid_t pid, void* local, const void* remote, std::size_t bytes, std::string& error) {
  return cma_loop(process_vm_readv, pid, static_cast<char*>(local),
                  const_cast<char*>(static_cast<const char*>(remote)), bytes, error,
                  "process_vm_readv");
}

bool cma_write(pid_t pid, const void* local, void* remote, std::size_t bytes, std::string& error) {
  return cma_loop(process_vm_writev, pid, const_cast<char*>(static_cast<const char*>(local)),
                  static_cast<char*>(remote), bytes, error, "process_vm_writev");
}

}  // namespace lanes::transport
