#include "lib/host_cpus.hpp"

#include <algorithm>
#include <bit>
#include <fstream>

namespace lanes::detail {

namespace {

bool same_host(const StartupRecord& a, const StartupRecord& b) {
  if (!a.host_id.empty() && !b.host_id.empty()) return a.host_id == b.host_id;
  return a.node_key == b.node_key;
}

}  // namespace

HostCpus host_cpus(const std::vector<StartupRecord>& records, const StartupRecord& mine) {
  HostCpus out;
  int fallback_cores = 1;
  std::string cpus;
  bool known = true;
  for (const auto& rec : records) {
    if (!same_host(rec, mine)) continue;
    ++out.processes;
    fallback_cores = std::max(fallback_cores, rec.cores);
    if (rec.cpus.empty()) known = false;
    if (cpus.size() < rec.cpus.size()) cpus.resize(rec.cpus.size(), '\0');
    for (std::size_t i = 0; i < rec.cpus.size(); ++i) {
      cpus[i] = static_cast<char>(static_cast<unsigned char>(cpus[i]) |
                                  static_cast<unsigned char>(rec.cpus[i]));
    }
  }
  int usable = 0;
  for (const char c : cpus) usable += std::popcount(static_cast<unsigned char>(c));
  out.cores = std::max(1, known ? usable : fallback_cores);
  return out;
}

std::string read_host_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (!(f >> id)) return {};
  return id;
}

}  // namespace lanes::detail
