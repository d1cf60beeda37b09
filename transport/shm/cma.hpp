// Single-copy transfers between processes of one node (process_vm_readv / process_vm_writev).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace lanes::transport {

// Copies `bytes` from `remote` in process `pid` to `local`. Returns false and sets `error`;
// errno is then ESRCH when the other process is gone.
bool cma_read(pid_t pid, void* local, const void* remote, std::size_t bytes, std::string& error);
// Copies `bytes` from `local` to `remote` in process `pid`.
bool cma_write(pid_t pid, const void* local, void* remote, std::size_t bytes, std::string& error);

// How many times longer this process takes to read `bytes` of process `pid`'s memory at `remote`
// (process_vm_readv) than to memcpy the same pages from `local`, its own mapping of them: the
// best of a few rounds of each after one warm-up. 0 when the read fails.
double cma_slowdown(pid_t pid, const void* remote, const void* local, std::size_t bytes);

// Seconds this process takes to read one page of process `pid`'s memory at `remote`
// (process_vm_readv): the kernel's cost per call, which a small single copy pays whole. The best
// of a few rounds after one warm-up; 0 when the read fails.
double cma_page_seconds(pid_t pid, const void* remote);

}  // namespace lanes::transport
