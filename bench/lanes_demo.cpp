// lanes-demo: bcast, scatter and alltoall through lanes next to MPI_Bcast, MPI_Scatter and
// MPI_Alltoall, measured in the same run (interleaved), every result checked.
//
//   mpirun -np 4 lanes-demo [--sizes 1024,1048576,67108864] [--reps N] [--algorithms all]
//                           [--lanes 1,2]
// --algorithms all: a row per lanes algorithm (chosen per call) instead of the runtime's choice.
// --lanes 1,2: a lanes column per lane count (CallOptions::lanes), and the speed-up of the most
// lanes over the fewest; with one process per node, k lanes are k rails.
//
// Sizes are bytes per call: the bcast payload; for scatter the root's whole send buffer; for
// alltoall each rank's whole send buffer (blocks of size/p). Times are the slowest rank's per
// repetition (barrier, then MPI_Wtime around one call), reported as average and minimum.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <lanes/lanes.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Stats {
  double avg_us = 0;
  double min_us = 0;
};

// Slowest rank per repetition, then average and minimum over repetitions.
Stats summarize(const std::vector<double>& mine) {
  std::vector<double> slowest(mine.size());
  MPI_Allreduce(mine.data(), slowest.data(), static_cast<int>(mine.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  Stats s;
  s.min_us = *std::min_element(slowest.begin(), slowest.end()) * 1e6;
  for (double t : slowest) s.avg_us += t;
  s.avg_us = s.avg_us / static_cast<double>(slowest.size()) * 1e6;
  return s;
}

double timed(const std::function<void()>& op) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  op();
  return MPI_Wtime() - t0;
}

inline std::uint8_t value(std::size_t i, int from, int to) {
  return static_cast<std::uint8_t>(i * 13 + (i >> 11) + static_cast<std::size_t>(from) * 71 +
                                   static_cast<std::size_t>(to) * 37);
}

struct Case {
  std::string name;
  std::function<void()> prepare;  // fills inputs
  std::function<void(const lanes::CallOptions&)> lanes_op;
  std::function<void()> mpi_op;
  std::function<bool()> check;  // verifies outputs
};

// What a reader needs at the largest size: what more lanes bought, and where MPI stands.
struct Reading {
  std::string name;
  std::size_t bytes = 0;
  double speedup = 0;    // the fewest lanes' time over the most lanes' (0: one lanes column)
  double mpi_ratio = 0;  // MPI's time over lanes' (the last lanes column)
};

bool all_true(bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out == 1;
}

std::vector<std::size_t> parse_list(const char* text) {
  std::vector<std::size_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoull(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<std::size_t> sizes = {1024, 65536, 1u << 20, 16u << 20, 64u << 20};
  std::vector<std::size_t> lane_counts;  // empty: the runtime's number of lanes
  int reps_override = 0;
  bool every_algorithm = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--algorithms") == 0) {
      every_algorithm = std::strcmp(argv[i + 1], "all") == 0;
    } else if (std::strcmp(argv[i], "--sizes") == 0) {
      sizes = parse_list(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--lanes") == 0) {
      lane_counts = parse_list(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--reps") == 0) {
      reps_override = std::atoi(argv[i + 1]);
    }
  }
  std::vector<lanes::CallOptions> columns;  // one lanes column per lane count
  std::string lanes_header, lanes_rule;
  for (std::size_t k : lane_counts) {
    lanes::CallOptions o;
    o.lanes = static_cast<int>(k);
    columns.push_back(o);
    lanes_header += " lanes, " + std::to_string(k) + (k == 1 ? " lane" : " lanes") + " avg us |";
    lanes_rule += "---:|";
  }
  if (columns.empty()) {
    columns.emplace_back();
    lanes_header = " lanes avg us | lanes min us |";
    lanes_rule = "---:|---:|";
  }
  const bool several = columns.size() > 1;
  int status = 0;
  {
    lanes::Runtime rt = lanes::Runtime::init();
    lanes::Communicator world = rt.world();
    const int me = world.rank();
    const int p = world.size();
    const auto up = static_cast<std::size_t>(p);
    if (me == 0) {
      std::printf("lanes-demo: %d processes on %d nodes (bootstrap %s)\n\n", p, world.num_nodes(),
                  rt.bootstrap_name().c_str());
      std::printf("| collective | bytes |%s MPI avg us | MPI min us |%s MPI/lanes (avg) | data |\n",
                  lanes_header.c_str(),
                  several ? (" " + std::to_string(lane_counts.back()) + " lanes / " +
                             std::to_string(lane_counts.front()) + " |")
                                .c_str()
                          : "");
      std::printf("|---|---:|%s---:|---:|%s---:|---|\n", lanes_rule.c_str(),
                  several ? "---:|" : "");
    }
    std::vector<Reading> readings;
    for (std::size_t bytes : sizes) {
      const std::size_t block = std::max<std::size_t>(bytes / up, 1);
      std::vector<std::uint8_t> buf(bytes), send(block * up), recv(block * up), one(block);
      const int reps = reps_override > 0      ? reps_override
                       : bytes <= (64u << 10) ? 50
                       : bytes <= (1u << 20)  ? 20
                                              : 6;
      std::vector<Case> cases;
      // Labels and options: the runtime's choice, or (--algorithms all) each algorithm by name.
      auto variants = [&](const char* coll) {
        std::vector<std::pair<std::string, std::string>> out;
        if (!every_algorithm) return decltype(out){{coll, ""}};
        for (const auto& name : lanes::algorithms(coll))
          out.emplace_back(std::string(coll) + " " + name, name);
        return out;
      };
      const auto with = [](const lanes::CallOptions& column, const std::string& algorithm) {
        lanes::CallOptions o = column;
        o.algorithm = algorithm;
        return o;
      };
      for (const auto& [label, algo] : variants("bcast"))
        cases.push_back(
            {label,
             [&] {
               for (std::size_t i = 0; i < bytes; ++i) buf[i] = me == 0 ? value(i, 0, -1) : 0;
             },
             [&, algo = algo](const lanes::CallOptions& c) { world.bcast(buf, 0, with(c, algo)); },
             [&] { MPI_Bcast(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD); },
             [&] {
               for (std::size_t i = 0; i < bytes; ++i)
                 if (buf[i] != value(i, 0, -1)) return false;
               return true;
             }});
      for (const auto& [label, algo] : variants("scatter"))
        cases.push_back({label,
                         [&] {
                           for (std::size_t j = 0; j < up; ++j)
                             for (std::size_t i = 0; i < block; ++i)
                               send[j * block + i] = value(i, 0, static_cast<int>(j));
                           std::fill(one.begin(), one.end(), 0);
                         },
                         [&, algo = algo](const lanes::CallOptions& c) {
                           world.scatter(std::span(send).first(me == 0 ? block * up : 0), one, 0,
                                         with(c, algo));
                         },
                         [&] {
                           MPI_Scatter(send.data(), static_cast<int>(block), MPI_BYTE, one.data(),
                                       static_cast<int>(block), MPI_BYTE, 0, MPI_COMM_WORLD);
                         },
                         [&] {
                           for (std::size_t i = 0; i < block; ++i)
                             if (one[i] != value(i, 0, me)) return false;
                           return true;
                         }});
      for (const auto& [label, algo] : variants("alltoall"))
        cases.push_back({label,
                         [&] {
                           for (std::size_t j = 0; j < up; ++j)
                             for (std::size_t i = 0; i < block; ++i)
                               send[j * block + i] = value(i, me, static_cast<int>(j));
                           std::fill(recv.begin(), recv.end(), 0);
                         },
                         [&, algo = algo](const lanes::CallOptions& c) {
                           world.alltoall(send, recv, with(c, algo));
                         },
                         [&] {
                           MPI_Alltoall(send.data(), static_cast<int>(block), MPI_BYTE, recv.data(),
                                        static_cast<int>(block), MPI_BYTE, MPI_COMM_WORLD);
                         },
                         [&] {
                           for (std::size_t j = 0; j < up; ++j)
                             for (std::size_t i = 0; i < block; ++i)
                               if (recv[j * block + i] != value(i, static_cast<int>(j), me))
                                 return false;
                           return true;
                         }});
      for (Case& c : cases) {
        // Correctness first, for every lanes column and for MPI.
        bool lanes_ok = true;
        for (const auto& column : columns) {
          c.prepare();
          c.lanes_op(column);
          lanes_ok = all_true(c.check()) && lanes_ok;
        }
        c.prepare();
        c.mpi_op();
        const bool mpi_ok = all_true(c.check());
        // Interleaved timing, the order shuffled per repetition (the same seed on every rank):
        // machine drift hits every column alike, and none always follows the same one (on
        // shaped rails a token bucket that one call drained would slow down the next).
        const std::size_t nv = columns.size() + 1;  // the lanes columns, then MPI
        std::vector<std::vector<double>> tl(columns.size());
        std::vector<double> tm;
        std::vector<std::size_t> order(nv);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::mt19937 shuffler(static_cast<std::mt19937::result_type>(bytes));
        for (int r = -2; r < reps; ++r) {
          std::shuffle(order.begin(), order.end(), shuffler);
          for (const std::size_t v : order) {
            const double t =
                v < columns.size() ? timed([&] { c.lanes_op(columns[v]); }) : timed(c.mpi_op);
            if (r >= 0) (v < columns.size() ? tl[v] : tm).push_back(t);
          }
        }
        std::vector<Stats> sl;
        for (const auto& t : tl) sl.push_back(summarize(t));
        const Stats sm = summarize(tm);
        if (!lanes_ok || !mpi_ok) status = 1;
        const std::size_t shown = c.name.rfind("bcast", 0) == 0 ? bytes : block * up;
        Reading reading{c.name, shown, several ? sl.front().avg_us / sl.back().avg_us : 0,
                        sm.avg_us / sl.back().avg_us};
        if (bytes == sizes.back()) readings.push_back(reading);
        if (me == 0) {
          std::string cells;
          char cell[64];
          for (const Stats& s : sl) {
            std::snprintf(cell, sizeof cell, " %.1f |", s.avg_us);
            cells += cell;
          }
          if (!several) {
            std::snprintf(cell, sizeof cell, " %.1f |", sl.front().min_us);
            cells += cell;
          }
          std::printf("| %s | %zu |%s %.1f | %.1f |", c.name.c_str(), shown, cells.c_str(),
                      sm.avg_us, sm.min_us);
          if (several) std::printf(" %.2f |", reading.speedup);
          std::printf(" %.2f | %s |\n", reading.mpi_ratio,
                      lanes_ok && mpi_ok ? "ok" : (lanes_ok ? "MPI WRONG" : "lanes WRONG"));
          std::fflush(stdout);
        }
      }
    }
    if (me == 0 && !readings.empty()) {
      std::printf("\nAt %zu bytes:\n", sizes.back());
      for (const Reading& r : readings) {
        std::printf("  %s:", r.name.c_str());
        if (several)
          std::printf(
              " %zu lanes are %.2fx faster than %zu (at most %.0fx);", lane_counts.back(),
              r.speedup, lane_counts.front(),
              static_cast<double>(lane_counts.back()) / static_cast<double>(lane_counts.front()));
        std::printf(" MPI takes %.2fx lanes' time (%s).\n", r.mpi_ratio,
                    r.mpi_ratio >= 1.05  ? "lanes is faster"
                    : r.mpi_ratio > 0.95 ? "about even"
                                         : "MPI is faster");
      }
    }
  }
  MPI_Finalize();
  return status;
}
