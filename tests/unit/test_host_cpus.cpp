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

}  // namespace

// 2 emulated nodes x 2 processes on one 2-CPU kernel: each node alone fits its CPUs, the host
// runs 4 processes on 2.
TEST(HostCpus, EmulatedNodesOnOneKernelCountTogether) {
  const std::vector<StartupRecord> records = {
      process("node0", "k", 0b11), process("node0", "k", 0b11), process("node1", "k", 0b11),
      process("node1", "k", 0b11)};
  const auto cpus = host_cpus(records, records[2]);
  EXPECT_EQ(cpus.processes, 4);
  EXPECT_EQ(cpus.cores, 2);
  EXPECT_TRUE(cpus.oversubscribed());
}

// Real nodes: one kernel each.
TEST(HostCpus, NodesOnTheirOwnKernelsCountAlone) {
  const std::vector<StartupRecord> records = {process("a", "ka", 0b11), process("a", "ka", 0b11),
                                              process("b", "kb", 0b11), process("b", "kb", 0b11)};
  const auto cpus = host_cpus(records, records[0]);
  EXPECT_EQ(cpus.processes, 2);
  EXPECT_EQ(cpus.cores, 2);
  EXPECT_FALSE(cpus.oversubscribed());
}

// Without boot ids the node stands for the host; masks add up, bound processes included.
TEST(HostCpus, WithoutBootIdsTheNodeIsTheHost) {
  const std::vector<StartupRecord> records = {process("a", "", 0b01), process("a", "", 0b10),
                                              process("b", "", 0b01)};
  const auto cpus = host_cpus(records, records[0]);
  EXPECT_EQ(cpus.processes, 2);
  EXPECT_EQ(cpus.cores, 2);  // two processes bound to a core each
  EXPECT_FALSE(cpus.oversubscribed());
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
