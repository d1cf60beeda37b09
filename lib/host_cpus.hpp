// The CPUs that the processes of one host share, judged from the start-up records. A host is one
// kernel (one boot id), which several nodes may share: the network namespaces or containers of
// an emulated cluster each see all of the host's CPUs, so a node alone cannot tell that the
// cluster as a whole runs more processes than there are cores. Where a record has no boot id,
// its node stands for its host.
#pragma once

#include <string>
#include <vector>

#include "lib/world_layout.hpp"

namespace lanes::detail {

struct HostCpus {
  int processes = 0;  // processes on the host
  int cores = 1;      // CPUs they may run on together
  // More processes than CPUs: a process that waits must give its CPU away.
  bool oversubscribed() const { return processes > cores; }
};

// The host of `mine` among `records` (which include it): its processes, and the union of their
// affinity masks (each record's own CPU count where a mask is unknown).
HostCpus host_cpus(const std::vector<StartupRecord>& records, const StartupRecord& mine);

// This kernel's boot id (/proc/sys/kernel/random/boot_id), empty where it cannot be read.
std::string read_host_id();

}  // namespace lanes::detail
