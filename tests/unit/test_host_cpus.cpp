// lib/host_cpus.hpp: which processes share a host's CPUs, across the nodes of an emulated cluster.
#include "lib/host_cpus.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using lanes::detail::host_cpus;
using lanes::detail::read_host_id;
using lanes::detail::StartupRecord;

namespace {

// A process of `node` on the kernel `host`, allowed on the CPUs in `mask` (bit i: CPU i; 0:
// unknown, with `cores` CPUs instead).
StartupRecord process(const std::string& node, const std::string& host, unsigned mask,
                      int cores = 2) {
  StartupRecord r;
  r.node_key = node;
  r.host_id = host;
  r.cores = cores;
  if (mask != 0) r.cpus = std::string(1, static_cast<char>(mask));
  return r;
}

// Two nodes of two processes, each allowed on CPUs 0 and 1, their kernels' boot ids given.
std::vector<StartupRecord> two_nodes(const std::string& kernel0, const std::string& kernel1) {
  return {process("node0", kernel0, 0b11), process("node0", kernel0, 0b11),
          process("node1", kernel1, 0b11), process("node1", kernel1, 0b11)};
}

}  // namespace

// Emulated nodes on one 2-CPU kernel: each node alone fits its CPUs, the host runs 4 processes
// on 2. Real nodes (one kernel each) count alone.
TEST(HostCpus, NodesOnOneKernelCountTogether) {
  const auto shared = host_cpus(two_nodes("k", "k"), two_nodes("k", "k")[2]);
  EXPECT_EQ(shared.processes, 4);
  EXPECT_EQ(shared.cores, 2);
  EXPECT_TRUE(shared.oversubscribed());
  const auto own = host_cpus(two_nodes("k0", "k1"), two_nodes("k0", "k1")[0]);
  EXPECT_EQ(own.processes, 2);
  EXPECT_EQ(own.cores, 2);
  EXPECT_FALSE(own.oversubscribed());
}

// Without boot ids the node stands for the host; masks add up, bound processes included.
TEST(HostCpus, WithoutBootIdsTheNodeIsTheHost) {
  const auto cpus = host_cpus(two_nodes("", ""), two_nodes("", "")[0]);
  EXPECT_EQ(cpus.processes, 2);
  EXPECT_FALSE(cpus.oversubscribed());
  const std::vector<StartupRecord> bound = {process("a", "", 0b01), process("a", "", 0b10)};
  EXPECT_EQ(host_cpus(bound, bound[0]).cores, 2);  // two processes bound to a core each
  EXPECT_FALSE(host_cpus(bound, bound[0]).oversubscribed());
  // A mask unknown: the largest CPU count given instead.
  const std::vector<StartupRecord> unknown = {process("a", "", 0, 1), process("a", "", 0, 1),
                                              process("a", "", 0, 1)};
  EXPECT_EQ(host_cpus(unknown, unknown[0]).cores, 1);
  EXPECT_TRUE(host_cpus(unknown, unknown[0]).oversubscribed());
}

TEST(HostCpus, ThisKernelHasABootId) {
  const std::string id = read_host_id();
  EXPECT_EQ(id.size(), 36u) << "'" << id << "'";
  EXPECT_EQ(read_host_id(), id);
}
