// Host discovery: NUMA nodes, cores and network devices (with their NUMA locality) from hwloc,
// virtual NICs (veth) from sysfs, and the choice of rails. No UCX, no PMIx here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lanes::topo {

// One network device as UCX names it in NET_DEVICES: "mlx5_0:1" (OpenFabrics device and port)
// or an interface name ("eth0", "rail0", "lo").
struct NetDevice {
  std::string name;
  std::string kind;    // "openfabrics", "network", "veth", "loopback"
  int numa_node = -1;  // -1 when unknown
  bool operator==(const NetDevice&) const = default;
};

struct HostTopology {
  int numa_nodes = 1;
  int cores = 1;
  int pus = 1;
  std::vector<NetDevice> devices;  // every candidate, in discovery order
};

// The running host: hwloc for NUMA/cores/PCI network devices, sysfs for veth interfaces.
HostTopology discover_host();

// The same from an hwloc XML topology (tests); sysfs is not consulted.
HostTopology discover_from_xml(const std::string& xml_path);

// hwloc synthetic description such as "pack:2 numa:1 core:4 pu:1" (tests; no devices).
HostTopology discover_from_synthetic(const std::string& description);

// Rails to drive. With an explicit list (LANES_RAILS) every name must be one of
// `available.devices` or "lo", else lanes::Error(topology) listing the available names;
// repeating a name is allowed (two contexts on one device). Without a list: OpenFabrics
// ports if any, else physical network devices, else veth interfaces, else "lo".
std::vector<NetDevice> choose_rails(const HostTopology& available,
                                    const std::optional<std::vector<std::string>>& explicit_list);

// Default rail of each local rank: rank i drives rail i mod k, except that a rank whose NUMA node
// is known (numa_of_local_rank[i] >= 0) and has rails on that node drives one of those, taken
// round-robin among the ranks of that NUMA node. Returns one rail index per local rank.
std::vector<int> assign_rails(const std::vector<int>& numa_of_local_rank,
                              const std::vector<NetDevice>& rails);

// NUMA node this process is bound to, or -1 when unbound or spanning several.
int current_numa_node();

}  // namespace lanes::topo
