#include "mpi/settings.hpp"

#include <cstdlib>
#include <sstream>

namespace lanes::mpi_interpose {

bool Settings::serves_any() const {
  for (bool e : enabled) {
    if (e) return true;
  }
  return false;
}

Settings read_settings() {
  Settings s;
  const char* colls = std::getenv("LANES_MPI_COLLS");
  const std::string list = colls != nullptr ? colls : "all";
  if (list == "all") {
    s.enabled.fill(true);
  } else if (list != "none") {
    std::stringstream in(list);
    std::string name;
    while (std::getline(in, name, ',')) {
      bool known = false;
      for (std::size_t i = 0; i < kCollNames.size(); ++i) {
        if (name == kCollNames[i]) s.enabled[i] = known = true;
      }
      if (!known) {
        std::string names;
        for (const char* n : kCollNames) names += std::string(names.empty() ? "" : ", ") + n;
        s.error = "LANES_MPI_COLLS='" + list + "': unknown collective '" + name +
                  "' (expected all, none or a list of " + names + ")";
        s.enabled.fill(false);
        return s;
      }
    }
  }
  const char* stats = std::getenv("LANES_MPI_STATS");
  const std::string st = stats != nullptr ? stats : "0";
  if (st == "1") {
    s.stats = true;
  } else if (st != "0" && !st.empty()) {
    s.error = "LANES_MPI_STATS='" + st + "': expected 0 or 1";
    s.enabled.fill(false);
  }
  return s;
}

}  // namespace lanes::mpi_interpose
