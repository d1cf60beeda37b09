#include "transport/shm/cma.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

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

double cma_slowdown(pid_t pid, const void* remote, const void* local, std::size_t bytes) {
  using clock = std::chrono::steady_clock;
  std::vector<char> sink(bytes);
  std::string error;
  double best_read = 1e30, best_copy = 1e30;
  // Round 0 warms pages and caches up; the best of the others, as where processes share cores
  // a round may lose its core midway (best of 3 rounds gave 1.7-3.2 on 4 processes on 2 cores).
  // Forty of them: on an Intel Xeon whose ratio lies near 2, eight start-ups gave 1.9-2.4 with
  // the best of 8 and 2.0-2.2 with the best of 40 (1.7-2.1 in later start-ups).
  for (int round = 0; round < 41; ++round) {
    const auto t0 = clock::now();
    if (!cma_read(pid, sink.data(), remote, bytes, error)) return 0;
    const auto t1 = clock::now();
    std::memcpy(sink.data(), local, bytes);
    const auto t2 = clock::now();
    asm volatile("" : : "r"(sink.data()) : "memory");  // the copy is not optimized away
    if (round == 0) continue;
    best_read = std::min(best_read, std::chrono::duration<double>(t1 - t0).count());
    best_copy = std::min(best_copy, std::chrono::duration<double>(t2 - t1).count());
  }
  return best_copy > 0 ? best_read / best_copy : 0;
}

double cma_page_seconds(pid_t pid, const void* remote) {
  using clock = std::chrono::steady_clock;
  std::vector<char> sink(4096);
  std::string error;
  double best = 1e30;
  // As above: round 0 warms up, the best of forty others (a round may lose its core midway).
  for (int round = 0; round < 41; ++round) {
    const auto t0 = clock::now();
    if (!cma_read(pid, sink.data(), remote, sink.size(), error)) return 0;
    const auto t1 = clock::now();
    if (round > 0) best = std::min(best, std::chrono::duration<double>(t1 - t0).count());
  }
  return best;
}

}  // namespace lanes::transport
