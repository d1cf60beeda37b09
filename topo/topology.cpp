#include "topo/topology.hpp"

#include <hwloc.h>
#include <net/if.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "lanes/error.hpp"

namespace lanes::topo {

namespace {

struct TopologyDeleter {
  void operator()(hwloc_topology_t topology) const noexcept { hwloc_topology_destroy(topology); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

struct BitmapDeleter {
  void operator()(hwloc_bitmap_t bitmap) const noexcept { hwloc_bitmap_free(bitmap); }
};
using BitmapPtr = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

// An initialized topology that has not been loaded yet, or null when hwloc cannot even start.
TopologyPtr init_topology() {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) return nullptr;
  return TopologyPtr(raw);
}

// Initialized, keeping the I/O objects (PCI devices and their OS devices) that hwloc drops by
// default.
TopologyPtr init_topology_with_io(const std::string& what) {
  TopologyPtr topology = init_topology();
  if (!topology) throw Error(Errc::topology, "hwloc_topology_init failed for " + what);
  if (hwloc_topology_set_io_types_filter(topology.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
    throw Error(Errc::topology, "hwloc cannot keep I/O objects for " + what);
  }
  return topology;
}

// NUMA node (logical index) an I/O object is attached to, or -1 when its locality spans several
// nodes or is unknown.
int numa_of_io_object(hwloc_topology_t topology, hwloc_obj_t object) {
  hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology, object);
  if (ancestor == nullptr || ancestor->nodeset == nullptr) return -1;
  if (hwloc_bitmap_weight(ancestor->nodeset) != 1) return -1;
  const int os_index = hwloc_bitmap_first(ancestor->nodeset);
  if (os_index < 0) return -1;
  hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(topology, static_cast<unsigned>(os_index));
  if (node == nullptr) return -1;
  return static_cast<int>(node->logical_index);
}

// Active ports of an OpenFabrics device, from hwloc's "Port<N>State" info attributes
// (state 4 is IB_PORT_ACTIVE). Returns {1} when hwloc reports no port at all.
std::vector<unsigned> active_ports(hwloc_obj_t object) {
  constexpr std::string_view prefix = "Port";
  constexpr std::string_view suffix = "State";
  std::vector<unsigned> ports;
  bool any_port_info = false;
  for (unsigned i = 0; i < object->infos_count; ++i) {
    const hwloc_info_s& info = object->infos[i];
    if (info.name == nullptr || info.value == nullptr) continue;
    const std::string_view name = info.name;
    if (name.size() <= prefix.size() + suffix.size() || !name.starts_with(prefix) ||
        !name.ends_with(suffix)) {
      continue;
    }
    const std::string_view digits =
        name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    unsigned port = 0;
    const auto [end, status] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (status != std::errc() || end != digits.data() + digits.size()) continue;
    any_port_info = true;
    if (std::string_view(info.value) == "4") ports.push_back(port);
  }
  if (!any_port_info) return {1};
  std::sort(ports.begin(), ports.end());
  return ports;
}

HostTopology extract(hwloc_topology_t topology) {
  HostTopology host;
  const int numa = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
  const int cores = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_CORE);
  const int pus = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_PU);
  host.numa_nodes = std::max(numa, 1);
  host.pus = std::max(pus, 1);
  // Some platforms expose no Core objects: each PU then counts as a core.
  host.cores = cores > 0 ? cores : host.pus;

  for (hwloc_obj_t object = hwloc_get_next_osdev(topology, nullptr); object != nullptr;
       object = hwloc_get_next_osdev(topology, object)) {
    if (object->name == nullptr) continue;
    const hwloc_obj_osdev_type_t type = object->attr->osdev.type;
    if (type == HWLOC_OBJ_OSDEV_OPENFABRICS) {
      const int node = numa_of_io_object(topology, object);
      for (unsigned port : active_ports(object)) {
        host.devices.push_back(
            {std::string(object->name) + ":" + std::to_string(port), "openfabrics", node});
      }
    } else if (type == HWLOC_OBJ_OSDEV_NETWORK) {
      host.devices.push_back({object->name, "network", numa_of_io_object(topology, object)});
    }
  }
  return host;
}

// First line of a small sysfs file, or nullopt when it cannot be read.
std::optional<std::string> read_sysfs(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<unsigned long> read_sysfs_number(const std::filesystem::path& path) {
  const std::optional<std::string> text = read_sysfs(path);
  if (!text) return std::nullopt;
  try {
    // Base 0: "flags" is written as hexadecimal ("0x1003"), "ifindex" as decimal.
    return std::stoul(*text, nullptr, 0);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool is_listed(const HostTopology& host, const std::string& name) {
  return std::any_of(host.devices.begin(), host.devices.end(),
                     [&](const NetDevice& device) { return device.name == name; });
}

// Virtual interfaces hwloc does not report (no PCI device behind them): an interface whose iflink
// is another interface's index is one end of a veth pair (as in a container), and it is only
// usable when administratively up.
void add_sysfs_veth(HostTopology& host) {
  const std::filesystem::path root = "/sys/class/net";
  std::error_code error;
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(root, error)) {
    names.push_back(entry.path().filename().string());
  }
  // Directory order is arbitrary; sorting keeps discovery reproducible.
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (name == "lo" || is_listed(host, name)) continue;
    const auto ifindex = read_sysfs_number(root / name / "ifindex");
    const auto iflink = read_sysfs_number(root / name / "iflink");
    const auto flags = read_sysfs_number(root / name / "flags");
    if (!ifindex || !iflink || !flags || *ifindex == *iflink) continue;
    if ((*flags & static_cast<unsigned long>(IFF_UP)) == 0) continue;
    host.devices.push_back({name, "veth", -1});
  }
}

bool is_excluded_bridge(const std::string& name) {
  for (std::string_view prefix : {"docker", "virbr", "br-", "ifb"}) {
    if (name.starts_with(prefix)) return true;
  }
  return false;
}

std::vector<NetDevice> devices_of_kind(const HostTopology& host, std::string_view kind) {
  std::vector<NetDevice> out;
  for (const NetDevice& device : host.devices) {
    if (device.kind == kind) out.push_back(device);
  }
  return out;
}

const NetDevice kLoopback{"lo", "loopback", -1};

// The device an explicit LANES_RAILS entry names, or nullptr.
const NetDevice* find_rail(const HostTopology& host, const std::string& name) {
  for (const NetDevice& device : host.devices) {
    if (device.name == name) return &device;
  }
  // A bare OpenFabrics device name ("mlx5_0") means its first active port.
  if (name.find(':') == std::string::npos) {
    for (const NetDevice& device : host.devices) {
      if (device.kind == "openfabrics" && device.name.size() > name.size() &&
          device.name.starts_with(name) && device.name[name.size()] == ':') {
        return &device;
      }
    }
  }
  if (name == kLoopback.name) return &kLoopback;
  return nullptr;
}

std::string available_names(const HostTopology& host) {
  std::string out;
  for (const NetDevice& device : host.devices) {
    out += device.name + ", ";
  }
  return out + kLoopback.name;
}

}  // namespace

HostTopology discover_host() {
  // Loading this host's topology reads devices through libudev, whose state is process-wide and
  // unguarded: two runtimes starting on threads of one process would race in it.
  static std::mutex discovery;
  const std::lock_guard<std::mutex> hold(discovery);
  TopologyPtr topology = init_topology_with_io("this host");
  // On Linux hwloc reads PCI devices and their locality from sysfs itself; its libpciaccess-based
  // "pci" component adds nothing there, is slower, and leaks memory on every load.
  (void)hwloc_topology_set_components(topology.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST,
                                      "pci");
  if (hwloc_topology_load(topology.get()) != 0) {
    throw Error(Errc::topology,
                std::string("hwloc cannot discover this host: ") + std::strerror(errno));
  }
  HostTopology host = extract(topology.get());
  add_sysfs_veth(host);
  return host;
}

HostTopology discover_from_xml(const std::string& xml_path) {
  const std::string what = "XML topology file '" + xml_path + "'";
  TopologyPtr topology = init_topology_with_io(what);
  // hwloc reports a missing file only as a generic load failure: check first for a clear message.
  std::error_code error;
  if (!std::filesystem::is_regular_file(xml_path, error)) {
    throw Error(Errc::topology, "cannot read " + what + ": no such file (or not a regular file)");
  }
  if (hwloc_topology_set_xml(topology.get(), xml_path.c_str()) != 0 ||
      hwloc_topology_load(topology.get()) != 0) {
    throw Error(Errc::topology, "hwloc cannot load " + what + " (not a valid hwloc XML export?)");
  }
  return extract(topology.get());
}

HostTopology discover_from_synthetic(const std::string& description) {
  const std::string what = "synthetic topology '" + description + "'";
  TopologyPtr topology = init_topology_with_io(what);
  if (hwloc_topology_set_synthetic(topology.get(), description.c_str()) != 0 ||
      hwloc_topology_load(topology.get()) != 0) {
    throw Error(Errc::topology, "hwloc rejects the " + what);
  }
  return extract(topology.get());
}

std::vector<NetDevice> choose_rails(const HostTopology& available,
                                    const std::optional<std::vector<std::string>>& explicit_list) {
  if (explicit_list) {
    if (explicit_list->empty()) {
      throw Error(Errc::topology,
                  "LANES_RAILS names no device; available: " + available_names(available) +
                      ". Fix LANES_RAILS (comma-separated names) or unset it.");
    }
    std::vector<NetDevice> rails;
    for (const std::string& name : *explicit_list) {
      if (name.empty()) {
        throw Error(Errc::topology,
                    "LANES_RAILS has an empty entry; available: " + available_names(available) +
                        ". Fix LANES_RAILS (comma-separated names, no empty one).");
      }
      const NetDevice* device = find_rail(available, name);
      if (device == nullptr) {
        throw Error(Errc::topology, "unknown rail '" + name + "' in LANES_RAILS; available: " +
                                        available_names(available) +
                                        ". Fix LANES_RAILS to list some of these names.");
      }
      rails.push_back(*device);
    }
    return rails;
  }

  if (auto rails = devices_of_kind(available, "openfabrics"); !rails.empty()) return rails;
  std::vector<NetDevice> physical;
  for (const NetDevice& device : available.devices) {
    if (device.kind == "network" && !is_excluded_bridge(device.name)) physical.push_back(device);
  }
  if (!physical.empty()) return physical;
  if (auto rails = devices_of_kind(available, "veth"); !rails.empty()) return rails;
  return {kLoopback};
}

std::vector<int> assign_rails(const std::vector<int>& numa_of_local_rank,
                              const std::vector<NetDevice>& rails) {
  if (rails.empty()) throw Error(Errc::internal, "assign_rails called with no rail");
  // Rail indices on each NUMA node, in rail order.
  std::map<int, std::vector<int>> rails_on_node;
  for (std::size_t r = 0; r < rails.size(); ++r) {
    if (rails[r].numa_node >= 0) rails_on_node[rails[r].numa_node].push_back(static_cast<int>(r));
  }
  // How many ranks of each NUMA node already got a NUMA-local rail.
  std::map<int, std::size_t> ranks_seen;
  std::vector<int> assignment;
  assignment.reserve(numa_of_local_rank.size());
  for (std::size_t i = 0; i < numa_of_local_rank.size(); ++i) {
    const int node = numa_of_local_rank[i];
    const auto local = node >= 0 ? rails_on_node.find(node) : rails_on_node.end();
    if (local != rails_on_node.end()) {
      const std::vector<int>& candidates = local->second;
      assignment.push_back(candidates[ranks_seen[node]++ % candidates.size()]);
    } else {
      assignment.push_back(static_cast<int>(i % rails.size()));
    }
  }
  return assignment;
}

int current_numa_node() {
  TopologyPtr topology = init_topology();
  if (!topology || hwloc_topology_load(topology.get()) != 0) return -1;
  BitmapPtr cpuset(hwloc_bitmap_alloc());
  if (!cpuset || hwloc_get_cpubind(topology.get(), cpuset.get(), HWLOC_CPUBIND_PROCESS) != 0 ||
      hwloc_bitmap_iszero(cpuset.get())) {
    return -1;
  }
  int found = -1;
  int matches = 0;
  for (hwloc_obj_t node = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, nullptr);
       node != nullptr;
       node = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, node)) {
    if (node->cpuset != nullptr && hwloc_bitmap_isincluded(cpuset.get(), node->cpuset)) {
      found = static_cast<int>(node->logical_index);
      ++matches;
    }
  }
  return matches == 1 ? found : -1;
}

}  // namespace lanes::topo
