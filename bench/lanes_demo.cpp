// lanes-demo: bcast, scatter and alltoall through lanes next to MPI_Bcast, MPI_Scatter and
// MPI_Alltoall, measured in the same run (interleaved), every result checked.
//
//   mpirun -np 4 lanes-demo [--sizes 1024,1048576,67108864] [--reps N] [--algorithms all]
// --algorithms all: a row per lanes algorithm (chosen per call) instead of the runtime's choice.
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
  std::function<void()> lanes_op;
  std::function<void()> mpi_op;
  std::function<bool()> check;  // verifies outputs
};

bool all_true(bool mine) {
  int in = mine ? 1 : 0, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return out == 1;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  std::vector<std::size_t> sizes = {1024, 65536, 1u << 20, 16u << 20, 64u << 20};
  int reps_override = 0;
  bool every_algorithm = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--algorithms") == 0)
      every_algorithm = std::strcmp(argv[i + 1], "all") == 0;
    if (std::strcmp(argv[i], "--sizes") == 0) {
      sizes.clear();
      std::stringstream in(argv[i + 1]);
      std::string item;
      while (std::getline(in, item, ',')) sizes.push_back(std::stoull(item));
    } else if (std::strcmp(argv[i], "--reps") == 0) {
      reps_override = std::atoi(argv[i + 1]);
    }
  }
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
      std::printf(
          "| collective | bytes | lanes avg us | lanes min us | MPI avg us | MPI min us |"
          " MPI/lanes (avg) | data |\n");
      std::printf("|---|---:|---:|---:|---:|---:|---:|---|\n");
    }
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
        std::vector<std::pair<std::string, lanes::CallOptions>> out;
        if (!every_algorithm) return decltype(out){{coll, {}}};
        for (const auto& name : lanes::algorithms(coll)) {
          lanes::CallOptions o;
          o.algorithm = name;
          out.emplace_back(std::string(coll) + " " + name, o);
        }
        return out;
      };
      for (const auto& [label, o] : variants("bcast"))
        cases.push_back(
            {label,
             [&] {
               for (std::size_t i = 0; i < bytes; ++i) buf[i] = me == 0 ? value(i, 0, -1) : 0;
             },
             [&, o = o] { world.bcast(buf, 0, o); },
             [&] { MPI_Bcast(buf.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD); },
             [&] {
               for (std::size_t i = 0; i < bytes; ++i)
                 if (buf[i] != value(i, 0, -1)) return false;
               return true;
             }});
      for (const auto& [label, o] : variants("scatter"))
        cases.push_back({label,
                         [&] {
                           for (std::size_t j = 0; j < up; ++j)
                             for (std::size_t i = 0; i < block; ++i)
                               send[j * block + i] = value(i, 0, static_cast<int>(j));
                           std::fill(one.begin(), one.end(), 0);
                         },
                         [&, o = o] {
                           world.scatter(std::span(send).first(me == 0 ? block * up : 0), one, 0,
                                         o);
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
      for (const auto& [label, o] : variants("alltoall"))
        cases.push_back({label,
                         [&] {
                           for (std::size_t j = 0; j < up; ++j)
                             for (std::size_t i = 0; i < block; ++i)
                               send[j * block + i] = value(i, me, static_cast<int>(j));
                           std::fill(recv.begin(), recv.end(), 0);
                         },
                         [&, o = o] { world.alltoall(send, recv, o); },
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
        // Correctness first, for both implementations.
        c.prepare();
        c.lanes_op();
        const bool lanes_ok = all_true(c.check());
        c.prepare();
        c.mpi_op();
        const bool mpi_ok = all_true(c.check());
        // Interleaved timing: machine drift hits both alike.
        std::vector<double> tl, tm;
        for (int r = -2; r < reps; ++r) {
          const double a = timed(c.lanes_op);
          const double b = timed(c.mpi_op);
          if (r >= 0) tl.push_back(a), tm.push_back(b);
        }
        const Stats sl = summarize(tl), sm = summarize(tm);
        if (!lanes_ok || !mpi_ok) status = 1;
        if (me == 0) {
          std::printf("| %s | %zu | %.1f | %.1f | %.1f | %.1f | %.2f | %s |\n", c.name.c_str(),
                      c.name.rfind("bcast", 0) == 0 ? bytes : block * up, sl.avg_us, sl.min_us,
                      sm.avg_us, sm.min_us, sm.avg_us / sl.avg_us,
                      lanes_ok && mpi_ok ? "ok" : (lanes_ok ? "MPI WRONG" : "lanes WRONG"));
          std::fflush(stdout);
        }
      }
    }
  }
  MPI_Finalize();
  return status;
}
