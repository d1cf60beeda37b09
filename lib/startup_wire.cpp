#include "lib/startup_wire.hpp"

#include <lanes/error.hpp>
#include <string>

#include "lib/wire.hpp"

namespace lanes::detail {

std::vector<std::byte> encode_startup_record(const StartupRecord& rec,
                                             std::span<const std::byte> addresses) {
  WireWriter w;
  w.put(static_cast<std::int32_t>(rec.failure ? static_cast<int>(rec.failure->code) : -1));
  w.put_string(rec.failure ? rec.failure->message : std::string());
  w.put_string(rec.node_key);
  w.put_string(rec.host_id);
  w.put(static_cast<std::int32_t>(rec.launcher_local_rank));
  w.put(static_cast<std::int32_t>(rec.numa));
  w.put(static_cast<std::int32_t>(rec.cores));
  w.put_string(rec.cpus);
  w.put(static_cast<std::uint32_t>(rec.rails.size()));
  for (const auto& d : rec.rails) {
    w.put_string(d.name);
    w.put_string(d.kind);
    w.put(static_cast<std::int32_t>(d.numa_node));
  }
  w.put_string(rec.calibration);
  w.put_string(rec.rules);
  w.put(static_cast<std::uint32_t>(rec.rail_weights.size()));
  for (const double x : rec.rail_weights) w.put(x);
  w.put(static_cast<std::int32_t>(rec.hierarchy_groups));
  w.put_bytes(addresses);
  return w.take();
}

StartupRecord decode_startup_record(std::span<const std::byte> bytes,
                                    std::vector<std::byte>& addresses) {
  WireReader r(bytes);
  StartupRecord rec;
  const auto code = r.get<std::int32_t>();
  std::string message = r.get_string();
  if (code > static_cast<std::int32_t>(Errc::internal)) {
    throw Error(Errc::bootstrap, "malformed start-up record: error code " + std::to_string(code));
  }
  if (code >= 0) rec.failure = Failure{static_cast<Errc>(code), std::move(message)};
  rec.node_key = r.get_string();
  rec.host_id = r.get_string();
  rec.launcher_local_rank = r.get<std::int32_t>();
  rec.numa = r.get<std::int32_t>();
  rec.cores = r.get<std::int32_t>();
  rec.cpus = r.get_string();
  const auto n = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < n; ++i) {
    topo::NetDevice d;
    d.name = r.get_string();
    d.kind = r.get_string();
    d.numa_node = r.get<std::int32_t>();
    rec.rails.push_back(std::move(d));
  }
  rec.calibration = r.get_string();
  rec.rules = r.get_string();
  const auto weights = r.get<std::uint32_t>();
  for (std::uint32_t i = 0; i < weights; ++i) rec.rail_weights.push_back(r.get<double>());
  rec.hierarchy_groups = r.get<std::int32_t>();
  if (rec.hierarchy_groups < -1) {
    throw Error(Errc::bootstrap, "malformed start-up record: " +
                                     std::to_string(rec.hierarchy_groups) + " hierarchy groups");
  }
  auto a = r.get_bytes();
  addresses.assign(a.begin(), a.end());
  return rec;
}

}  // namespace lanes::detail
