#include "algos/cost_model.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <lanes/error.hpp>
#include <limits>
#include <sstream>

#include "algos/registry.hpp"

namespace lanes::algos {

double MachineParams::rail_rate(int rail) const {
  if (rail >= 0 && static_cast<std::size_t>(rail) < rail_rates.size()) {
    return rail_rates[static_cast<std::size_t>(rail)];
  }
  return 1.0 / beta_rail;
}

double MachineParams::stripe_threshold() const {
  if (stripe_min_bytes > 0) return stripe_min_bytes;
  // A second part costs more than the one-way start-up alpha (the receiver serves two workers):
  // over TCP on 2 x 1 Gbit/s rails a striped 4 KB message took 28 us against 15 us on one rail,
  // a 32 KiB alltoall block 86 us against 61 us (fastest calls), and a 64 KiB message on two
  // rails took half of its one-rail time.
  return std::clamp(2.0 * alpha_rail / beta_rail, 65536.0, 1048576.0);
}

std::vector<std::uint32_t> MachineParams::rail_weights(int count) const {
  double fastest = 0;
  for (int r = 0; r < count; ++r) fastest = std::max(fastest, rail_rate(r));
  std::vector<std::uint32_t> out;
  for (int r = 0; r < count; ++r) {
    out.push_back(static_cast<std::uint32_t>(
        std::clamp(std::lround(1000.0 * rail_rate(r) / fastest), 1L, 1000L)));
  }
  return out;
}

MachineParams MachineParams::parse(const std::string& text, const std::string& source) {
  MachineParams m;
  std::istringstream in(text);
  std::string line;
  int line_number = 0;
  std::string key;
  const auto bad = [&](const std::string& why) {
    return Error(Errc::invalid_argument,
                 source + ": line " + std::to_string(line_number) + ": " + key + ": " + why);
  };
  // A whole token in decimal or exponent form ("2e-6", "1200000000"), finite: no blanks, sign
  // '+', hexadecimal, inf or nan, and nothing after the number.
  const auto number = [&](const std::string& token) {
    double x = 0;
    const char* end = token.data() + token.size();
    const auto [stop, ec] = std::from_chars(token.data(), end, x);
    if (ec != std::errc() || stop != end || !std::isfinite(x)) {
      throw bad("'" + token + "' is not a finite number");
    }
    return x;
  };
  // A whole number from lo to hi (2 or 2e0, not 2.5), checked before it is converted.
  const auto whole = [&](const std::string& token, double lo, double hi, const char* expected) {
    const double x = number(token);
    if (x != std::floor(x) || x < lo || x > hi) {
      throw bad("'" + token + "' is not " + expected);
    }
    return x;
  };
  while (std::getline(in, line)) {
    ++line_number;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    if (!(fields >> key)) continue;
    std::vector<std::string> values;
    for (std::string v; fields >> v;) values.push_back(v);
    if (values.empty()) throw bad("no value");
    if (key == "rail_rates") {  // one rate per rail, in bytes/s
      m.rail_rates.clear();
      for (const std::string& v : values) {
        const double rate = number(v);
        if (rate <= 0) throw bad("'" + v + "' is not a positive rate");
        m.rail_rates.push_back(rate);
      }
      continue;
    }
    if (values.size() != 1) {
      throw bad("expected one value, found " + std::to_string(values.size()) + " ('" + values[0] +
                "', '" + values[1] + "'...)");
    }
    const std::string& v = values.front();
    if (key == "rails") {
      m.rails = static_cast<int>(whole(v, 1, static_cast<double>(std::numeric_limits<int>::max()),
                                       "a whole number from 1 to 2147483647"));
      m.rails_measured = true;
    } else if (key == "stripe_min_bytes") {
      // A byte count a size_t holds: the largest double below 2^64 at most.
      m.stripe_min_bytes =
          whole(v, 0, 18446744073709549568.0, "a whole number of bytes below 2^64");
    } else if (key == "sends_overlap") {
      if (v != "0" && v != "1") throw bad("expected 0 or 1, not '" + v + "'");
      m.sends_overlap = v == "1";
    } else {
      double* field = key == "alpha_shm"          ? &m.alpha_shm
                      : key == "beta_shm"         ? &m.beta_shm
                      : key == "alpha_rail"       ? &m.alpha_rail
                      : key == "beta_rail"        ? &m.beta_rail
                      : key == "node_bytes_per_s" ? &m.node_bytes_per_s
                      : key == "gamma"            ? &m.gamma
                      : key == "handoff"          ? &m.handoff
                      : key == "rail_burst_bytes" ? &m.rail_burst_bytes
                                                  : nullptr;
      if (field == nullptr) {
        throw bad(
            "unknown key (known: alpha_shm beta_shm alpha_rail beta_rail rails node_bytes_per_s "
            "rail_rates stripe_min_bytes sends_overlap gamma handoff rail_burst_bytes)");
      }
      const double x = number(v);
      if (x < 0) throw bad("'" + v + "' is negative");
      *field = x;
    }
  }
  return m;
}

std::string MachineParams::to_text() const {
  std::ostringstream o;
  o.precision(6);
  o << "alpha_shm " << alpha_shm << "        # s per on-node message\n"
    << "beta_shm " << beta_shm << "         # s per byte copied on-node by one process\n"
    << "alpha_rail " << alpha_rail << "       # s per off-node message\n"
    << "beta_rail " << beta_rail << "        # s per byte on one rail at full rate\n"
    << "rails " << rails << "                # physical rails per node\n"
    << "node_bytes_per_s " << node_bytes_per_s << "  # per-node injection limit, 0: none\n";
  if (!rail_rates.empty()) {
    o << "rail_rates";
    for (const double r : rail_rates) o << " " << r;
    o << "  # bytes/s of each rail\n";
  }
  if (stripe_min_bytes > 0) {
    o << "stripe_min_bytes " << stripe_min_bytes << "  # smallest striped message\n";
  }
  o << "sends_overlap " << (sends_overlap ? 1 : 0) << "  # a send completes once buffered (TCP)\n";
  o << "gamma " << gamma << "            # s per byte combined by a reduction\n";
  o << "handoff " << handoff << "          # s until a waiting process gets a shared core\n";
  if (rail_burst_bytes > 0) {
    o << "rail_burst_bytes " << rail_burst_bytes << "  # bytes a rail passes before its rate\n";
  }
  return o.str();
}

double node_rate(const CostInput& in, const MachineParams& m) {
  // Lanes 0..k-1 run over rails 0..min(k, R)-1; lanes on one rail share its rate.
  const int used = std::max(1, std::min(in.lanes, m.rails));
  double rate = 0;
  for (int r = 0; r < used; ++r) rate += m.rail_rate(r);
  if (m.node_bytes_per_s > 0) rate = std::min(rate, m.node_bytes_per_s);
  return rate;
}

namespace {

// rail_time(), where `spread_out` says whether the bytes may use all the lanes the flow may use
// (a message striped over them, or a stream of messages taking them by turns) or one lane.
double rail_time_spread(double bytes, double flows, const CostInput& in, const MachineParams& m,
                        Spread spread, bool spread_out) {
  const double all = node_rate(in, m);
  const double lanes = std::max(1.0, static_cast<double>(std::min(in.lanes, m.rails)));
  double share = 1.0 / lanes;  // one lane's part of the node's rate
  if (spread_out) {
    if (spread == Spread::node) share = 1.0;
    if (spread == Spread::driven && in.ppn < in.lanes) {
      share = std::min(1.0, 1.0 / static_cast<double>(std::min<long long>(in.ppn, m.rails)));
    }
  }
  const double rate = std::min(all / std::max(1.0, flows), all * share);
  return m.alpha_rail + bytes / rate;
}

}  // namespace

double rail_time(double bytes, double flows, const CostInput& in, const MachineParams& m,
                 Spread spread) {
  return rail_time_spread(bytes, flows, in, m, spread, bytes >= m.stripe_threshold());
}

double stream_time(double bytes, double flows, const CostInput& in, const MachineParams& m,
                   Spread spread) {
  return rail_time_spread(bytes, flows, in, m, spread, true);
}

double shm_time(double bytes, const MachineParams& m) {
  return m.alpha_shm + bytes * m.beta_shm;
}

double combine_time(double bytes, const MachineParams& m) {
  return bytes * m.gamma;
}

double node_combine_time(double bytes, const MachineParams& m) {
  return m.alpha_shm + bytes * std::max(m.beta_shm, m.gamma);
}

double hop_time(double bytes, bool off_node, const CostInput& in, const MachineParams& m) {
  // Every rank of a node sends off the node at once: n flows share the node's lanes.
  return off_node ? rail_time(bytes, static_cast<double>(in.ppn), in, m) : shm_time(bytes, m);
}

double binomial_tree_time(double bytes, const CostInput& in, const MachineParams& m,
                          Spread spread) {
  const int rounds = ceil_log(in.p(), 2);
  const int on_node = in.nodes > 1 ? std::min(rounds, ceil_log(in.ppn, 2)) : rounds;
  double t = on_node * shm_time(bytes, m);
  // A subtree root with j off-node children pushes j copies at once; its first child, which has
  // j - 1 of its own, waits for all j.
  for (int j = rounds - on_node; j > 0; --j) {
    t += rail_time(m.overlapping(j) * bytes, 1.0, in, m, spread);
  }
  return t;
}

double binomial_scatter_time(double block, const CostInput& in, const MachineParams& m,
                             Spread spread) {
  const long long p = in.p();
  double t = 0;
  if (p <= 1) return t;
  for (long long top = 1LL << (ceil_log(p, 2) - 1); top >= 1; top /= 2) {
    // The subtree root at this level sends to distances top, top / 2, ..., 1 at once.
    const auto largest = static_cast<double>(std::min(top, p - top));
    double off = 0;
    for (long long d = top; d >= 1; d /= 2) {
      const auto blocks = static_cast<double>(std::min(d, p - d));
      if (in.nodes > 1 && d >= in.ppn) off += blocks * block;
    }
    if (!m.sends_overlap) off = largest * block;
    t += in.nodes > 1 && top >= in.ppn ? rail_time(off, 1.0, in, m, spread)
                                       : shm_time(largest * block, m);
  }
  return t;
}

double node_volume(Collective coll, const CostInput& in) {
  if (in.nodes <= 1) return 0;
  const auto b = static_cast<double>(in.bytes);
  const auto off_node = static_cast<double>(in.p() - in.ppn);  // ranks on other nodes
  const auto n = static_cast<double>(in.ppn);
  switch (coll) {
    case Collective::bcast:
    case Collective::reduce:
    case Collective::allreduce:
      return b;
    case Collective::scatter:
    case Collective::gather:
    case Collective::reduce_scatter_block:
      return b * off_node;
    case Collective::alltoall:
      return b * n * off_node;
    case Collective::allgather:
      return b * n;
    case Collective::barrier:
      return 0;
  }
  return b;
}

bool within_burst(double volume, const CostInput& in, const MachineParams& m) {
  if (m.rail_burst_bytes <= 0 || in.nodes <= 1) return false;
  const double lanes = std::max(1, std::min(in.lanes, m.rails));
  return volume <= m.rail_burst_bytes * lanes / 8;
}

double burst_bytes_from(const std::vector<std::pair<double, double>>& timed, double alpha,
                        double beta) {
  double burst = 0;
  if (beta <= 0) return burst;
  for (const auto& [s, t] : timed) {
    const double free_bytes = s - std::max(0.0, t - alpha) / beta;
    if (free_bytes >= s / 4) burst = std::max(burst, std::min(free_bytes, s));
  }
  return burst;
}

MachineParams within_burst_params(const MachineParams& m) {
  MachineParams fast = m;
  fast.stripe_min_bytes = m.stripe_threshold();
  constexpr double scale = 1000;
  fast.beta_rail = m.beta_rail / scale;
  for (double& r : fast.rail_rates) r *= scale;
  fast.node_bytes_per_s *= scale;
  fast.rail_burst_bytes = 0;
  return fast;
}

int ceil_log(long long x, long long base) {
  int r = 0;
  for (long long v = 1; v < x; v *= base) ++r;
  return r;
}

std::vector<Prediction> predict(Collective coll, const CostInput& in, const MachineParams& m) {
  // Applicability judged on a small layout of the same kind (regular or not, same lanes).
  const int n = static_cast<int>(std::clamp<long long>(in.ppn, 1, 8));
  const int nodes = static_cast<int>(std::clamp<long long>(in.nodes, 1, 4));
  std::vector<int> sizes(static_cast<std::size_t>(nodes), n);
  if (!in.regular && nodes > 1) sizes.back() = std::max(1, n - 1);
  if (!in.regular && nodes == 1) sizes = {n, std::max(1, n - 1)};
  const Layout sample = Layout::from_node_sizes(sizes, std::max(1, in.lanes));
  const bool burst = within_burst(node_volume(coll, in), in, m);
  const MachineParams priced = burst ? within_burst_params(m) : m;
  std::vector<Prediction> out;
  for (const Algorithm* algo : algorithms_for(coll)) {
    if (algo->cost == nullptr) continue;
    if (algo->applicable != nullptr && !algo->applicable(sample)) continue;
    out.push_back({std::string(algo->name), algo->cost(in, priced)});
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Prediction& a, const Prediction& b) { return a.seconds < b.seconds; });
  return out;
}

}  // namespace lanes::algos
