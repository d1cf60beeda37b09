#include "topo/topology.hpp"

#include <gtest/gtest.h>
#include <hwloc.h>

#include <string>
#include <vector>

#include "lanes/error.hpp"

namespace lanes::topo {
namespace {

// hwloc loads its plugins (and their libraries, some with thread-local storage) when the first
// topology of the process is initialized and unloads them when the last one is destroyed. One
// topology kept for the whole run keeps them loaded: this binary makes and destroys dozens, and
// LeakSanitizer's scan of thread-local storage at exit crashes on the slots that glibc 2.36's
// dlclose leaves behind (Debian 12's libc6 2.36-9+deb12u14).
const hwloc_topology_t kKeepPluginsLoaded = [] {
  hwloc_topology_t t = nullptr;
  return hwloc_topology_init(&t) == 0 ? t : nullptr;
}();

const std::string kDataDir = LANES_TEST_DATA;

HostTopology two_hca_host() {
  return discover_from_xml(kDataDir + "/two_numa_two_hca.xml");
}

// The error message of `fn`, which must throw lanes::Error with `code`.
template <typename Fn>
std::string error_message(Fn&& fn, Errc code) {
  try {
    fn();
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), code);
    return error.what();
  }
  ADD_FAILURE() << "expected lanes::Error";
  return {};
}

TEST(Discovery, XmlTwoNumaNodesTwoHcas) {
  const HostTopology host = two_hca_host();
  EXPECT_EQ(host.numa_nodes, 2);
  EXPECT_EQ(host.cores, 4);
  EXPECT_EQ(host.pus, 8);
  // mlx5_1 port 2 is down (state 1), so only port 1 is listed. eth0 hangs off the machine, not a
  // package, so its NUMA node is unknown.
  const std::vector<NetDevice> expected = {
      {"ib0", "network", 0},          {"mlx5_0:1", "openfabrics", 0}, {"ib1", "network", 1},
      {"mlx5_1:1", "openfabrics", 1}, {"eth0", "network", -1},
  };
  EXPECT_EQ(host.devices, expected);
}

TEST(Discovery, XmlEthernetOnly) {
  const HostTopology host = discover_from_xml(kDataDir + "/one_numa_ethernet.xml");
  EXPECT_EQ(host.numa_nodes, 1);
  EXPECT_EQ(host.cores, 4);
  EXPECT_EQ(host.pus, 4);
  const std::vector<NetDevice> expected = {{"eth0", "network", 0}};
  EXPECT_EQ(host.devices, expected);
}

TEST(Discovery, MissingXmlNamesTheFile) {
  const std::string path = kDataDir + "/no_such_topology.xml";
  const std::string message = error_message([&] { discover_from_xml(path); }, Errc::topology);
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(Discovery, InvalidXmlNamesTheFile) {
  // A C++ source file is not hwloc XML.
  const std::string path = kDataDir + "/../unit/test_topology.cpp";
  const std::string message = error_message([&] { discover_from_xml(path); }, Errc::topology);
  EXPECT_NE(message.find(path), std::string::npos) << message;
}

TEST(Discovery, SyntheticCounts) {
  const HostTopology host = discover_from_synthetic("pack:2 numa:1 core:4 pu:2");
  EXPECT_EQ(host.numa_nodes, 2);
  EXPECT_EQ(host.cores, 8);
  EXPECT_EQ(host.pus, 16);
  EXPECT_TRUE(host.devices.empty());
}

TEST(Discovery, InvalidSyntheticThrows) {
  const std::string message =
      error_message([] { discover_from_synthetic("not a topology"); }, Errc::topology);
  EXPECT_NE(message.find("not a topology"), std::string::npos) << message;
}

TEST(Discovery, ThisHost) {
  HostTopology host;
  ASSERT_NO_THROW(host = discover_host());
  EXPECT_GE(host.numa_nodes, 1);
  EXPECT_GE(host.cores, 1);
  EXPECT_GE(host.pus, host.cores);
  for (const NetDevice& device : host.devices) {
    EXPECT_NE(device.name, "lo");
    EXPECT_NE(device.kind, "loopback");
    EXPECT_GE(device.numa_node, -1);
    EXPECT_LT(device.numa_node, host.numa_nodes);
  }
  // Whatever the host has, some rail is chosen.
  EXPECT_FALSE(choose_rails(host, std::nullopt).empty());
}

TEST(Discovery, CurrentNumaNodeInRange) {
  const int node = current_numa_node();
  EXPECT_GE(node, -1);
  EXPECT_LT(node, discover_host().numa_nodes);
}

TEST(ChooseRails, DefaultPrefersOpenFabricsPorts) {
  const std::vector<NetDevice> expected = {{"mlx5_0:1", "openfabrics", 0},
                                           {"mlx5_1:1", "openfabrics", 1}};
  EXPECT_EQ(choose_rails(two_hca_host(), std::nullopt), expected);
}

TEST(ChooseRails, DefaultFallsBackToPhysicalNetwork) {
  HostTopology host;
  host.devices = {{"docker0", "network", -1}, {"eth0", "network", 0},  {"virbr0", "network", -1},
                  {"br-1a2b", "network", -1}, {"ifb0", "network", -1}, {"veth1", "veth", -1},
                  {"eth1", "network", 1}};
  const std::vector<NetDevice> expected = {{"eth0", "network", 0}, {"eth1", "network", 1}};
  EXPECT_EQ(choose_rails(host, std::nullopt), expected);
}

TEST(ChooseRails, DefaultFallsBackToVeth) {
  HostTopology host;
  host.devices = {{"docker0", "network", -1}, {"rail0", "veth", -1}, {"rail1", "veth", -1}};
  const std::vector<NetDevice> expected = {{"rail0", "veth", -1}, {"rail1", "veth", -1}};
  EXPECT_EQ(choose_rails(host, std::nullopt), expected);
}

TEST(ChooseRails, DefaultFallsBackToLoopback) {
  const std::vector<NetDevice> expected = {{"lo", "loopback", -1}};
  EXPECT_EQ(choose_rails(HostTopology{}, std::nullopt), expected);
  HostTopology bridges_only;
  bridges_only.devices = {{"docker0", "network", -1}};
  EXPECT_EQ(choose_rails(bridges_only, std::nullopt), expected);
}

TEST(ChooseRails, ExplicitListKeepsOrder) {
  const std::vector<NetDevice> expected = {{"eth0", "network", -1}, {"mlx5_1:1", "openfabrics", 1}};
  EXPECT_EQ(choose_rails(two_hca_host(), std::vector<std::string>{"eth0", "mlx5_1:1"}), expected);
}

TEST(ChooseRails, BareOpenFabricsNameMatchesFirstPort) {
  const std::vector<NetDevice> expected = {{"mlx5_0:1", "openfabrics", 0}};
  EXPECT_EQ(choose_rails(two_hca_host(), std::vector<std::string>{"mlx5_0"}), expected);
}

TEST(ChooseRails, BareNameDoesNotMatchAPrefix) {
  // "mlx5" is not a device: it must not match "mlx5_0:1".
  error_message([] { choose_rails(two_hca_host(), std::vector<std::string>{"mlx5"}); },
                Errc::topology);
}

TEST(ChooseRails, UnknownNameListsAvailableNames) {
  const std::string message = error_message(
      [] {
        choose_rails(two_hca_host(), std::vector<std::string>{"mlx5_0", "eth7"});
      },
      Errc::topology);
  EXPECT_NE(message.find("eth7"), std::string::npos) << message;
  for (const char* name : {"ib0", "mlx5_0:1", "ib1", "mlx5_1:1", "eth0", "lo"}) {
    EXPECT_NE(message.find(name), std::string::npos) << name << " missing in: " << message;
  }
  EXPECT_NE(message.find("LANES_RAILS"), std::string::npos) << message;
}

TEST(ChooseRails, InactivePortIsUnknown) {
  const std::string message = error_message(
      [] { choose_rails(two_hca_host(), std::vector<std::string>{"mlx5_1:2"}); }, Errc::topology);
  EXPECT_NE(message.find("mlx5_1:2"), std::string::npos) << message;
}

TEST(ChooseRails, EmptyEntryIsAnError) {
  const std::string message = error_message(
      [] {
        choose_rails(two_hca_host(), std::vector<std::string>{"mlx5_0:1", ""});
      },
      Errc::topology);
  EXPECT_NE(message.find("LANES_RAILS"), std::string::npos) << message;
  error_message([] { choose_rails(two_hca_host(), std::vector<std::string>{}); }, Errc::topology);
}

TEST(ChooseRails, RepetitionAllowed) {
  const std::vector<NetDevice> expected = {{"mlx5_0:1", "openfabrics", 0},
                                           {"mlx5_0:1", "openfabrics", 0}};
  EXPECT_EQ(choose_rails(two_hca_host(), std::vector<std::string>{"mlx5_0:1", "mlx5_0"}), expected);
}

TEST(ChooseRails, LoopbackAccepted) {
  const std::vector<NetDevice> expected = {{"lo", "loopback", -1}, {"lo", "loopback", -1}};
  EXPECT_EQ(choose_rails(HostTopology{}, std::vector<std::string>{"lo", "lo"}), expected);
  EXPECT_EQ(choose_rails(two_hca_host(), std::vector<std::string>{"lo"}).front().kind, "loopback");
}

TEST(AssignRails, UnknownNumaIsRoundRobin) {
  const std::vector<NetDevice> rails = {{"a", "veth", -1}, {"b", "veth", -1}, {"c", "veth", -1}};
  EXPECT_EQ(assign_rails({-1, -1, -1, -1, -1}, rails), (std::vector<int>{0, 1, 2, 0, 1}));
}

TEST(AssignRails, KnownNumaWithoutLocalRailsIsRoundRobin) {
  const std::vector<NetDevice> rails = {{"a", "veth", -1}, {"b", "veth", -1}};
  EXPECT_EQ(assign_rails({0, 0, 1, 1}, rails), (std::vector<int>{0, 1, 0, 1}));
}

TEST(AssignRails, NumaLocalRails) {
  const std::vector<NetDevice> rails = choose_rails(two_hca_host(), std::nullopt);
  ASSERT_EQ(rails.size(), 2u);
  // Ranks 0-1 on node 0, 2-3 on node 1; interleaved placement must not matter.
  EXPECT_EQ(assign_rails({0, 0, 1, 1}, rails), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(assign_rails({1, 0, 1, 0}, rails), (std::vector<int>{1, 0, 1, 0}));
}

TEST(AssignRails, RoundRobinAmongLocalRails) {
  const std::vector<NetDevice> rails = {
      {"a:1", "openfabrics", 0}, {"b:1", "openfabrics", 1}, {"c:1", "openfabrics", 0}};
  // Node 0 ranks alternate between rails 0 and 2; the node 1 rank takes rail 1.
  EXPECT_EQ(assign_rails({0, 1, 0, 0}, rails), (std::vector<int>{0, 1, 2, 0}));
}

TEST(AssignRails, NumaNodeWithoutRailFallsBackToRankModulo) {
  const std::vector<NetDevice> rails = {{"a:1", "openfabrics", 0}, {"b:1", "openfabrics", 0}};
  // Ranks 1 and 3 are on node 1, which has no rail: rank i drives rail i mod 2. Rank 2 is the
  // second node 0 rank, so it takes the second node 0 rail.
  EXPECT_EQ(assign_rails({0, 1, 0, 1}, rails), (std::vector<int>{0, 1, 1, 1}));
  // Unknown NUMA mixes with known the same way.
  EXPECT_EQ(assign_rails({-1, 0, -1}, rails), (std::vector<int>{0, 0, 0}));
}

TEST(AssignRails, NoRankNoRail) {
  const std::vector<NetDevice> rails = {{"lo", "loopback", -1}};
  EXPECT_TRUE(assign_rails({}, rails).empty());
  error_message([] { assign_rails({0}, {}); }, Errc::internal);
}

}  // namespace
}  // namespace lanes::topo
