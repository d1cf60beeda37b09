// lanes-bench: lanes' collectives next to the MPI library's, measured the way the k-ported vs.
// k-lane papers measure them.
//
//   mpirun -np P lanes-bench [--collective bcast,scatter,alltoall,allgather] [--counts LIST]
//       [--impl native,lanes] [--algorithms LIST] [--lanes LIST] [--reps 100] [--warmup 5]
//       [--settle 0] [--root 0] [--check] [--csv FILE] [--times FILE] [--memory shared]
//
// Per collective and count c (MPI_INT elements per process, as MPI counts them): 5 warm-up and
// 100 measured repetitions. A repetition is MPI_Barrier, then MPI_Wtime around one collective
// call; its time is the slowest process's (MPI_MAX over ranks, reduced once after the last
// repetition so no reduction runs between measurements). Reported: average, minimum and median
// over the repetitions (on a shared, noisy host the average carries the rare slow repetitions).
//
// Interleaving: inside each repetition every variant runs once in turn, the MPI library's call
// and each lanes (algorithm, lanes) pair, so drift of the machine hits all alike. The order is
// shuffled anew for every repetition (the same seed on every rank, so all agree): whatever state
// one call leaves for the next (warm caches, a socket's window) falls on every variant alike,
// where a fixed or rotated order would give each variant the same predecessor every time. A
// shaped link's token bucket does not fall alike: it refills while the variants before leave its
// rail idle, which favours the variants that use other rails than their predecessors (--settle).
//
// --settle N runs N unmeasured calls of a variant, each after MPI_Barrier like a measured one,
// right before each of its measured calls. On links shaped by a token bucket (the emulated
// cluster's tc tbf), a rail that the variants before left idle has a full bucket, and a message
// up to the bucket's size would cross it at the host's memory speed rather than the rail's rate:
// the settling calls drain the buckets of the rails this variant uses, so its measured call
// meets what a stream of its own calls would meet. Without it, two variants that use different
// rails each look faster than alone (a 40 KB-block scatter on 2 x 2 with 256 KiB buckets: lanes
// linear 160 us side by side with Open MPI, 582 us alone).
//
// --check fills inputs before and verifies every output after every repetition (outside the
// timed region) against values computed from (rank, index, repetition); a mismatch is printed
// and the program exits with status 1.
//
// --memory shared allocates every buffer, both libraries', from lanes' shared heap
// (lanes::Runtime::allocate), which the node's processes read in place.
//
// Skipped with one line on stderr: algorithms that do not apply to the layout (full-lane on
// nodes of unequal size), variants every rank refuses with lanes::Error, and counts whose
// buffers would take more than half of a host's available memory. Buffers are allocated per
// collective and count and shared by all variants. nodes and ppn (processes on the largest
// node) are lanes' view of the layout, LANES_NODE_SIZE included.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <lanes/lanes.hpp>
#include <lanes/mpi.hpp>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_collectives.hpp"
#include "bench_options.hpp"
#include "bench_report.hpp"
#include "bench_variants.hpp"

namespace lanes_bench {
namespace {

// The processes of this host (not of an emulated node): they share its memory.
class HostComm {
 public:
  HostComm() { MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c_); }
  HostComm(const HostComm&) = delete;
  HostComm& operator=(const HostComm&) = delete;
  ~HostComm() { MPI_Comm_free(&c_); }
  MPI_Comm get() const { return c_; }

 private:
  MPI_Comm c_ = MPI_COMM_NULL;
};

std::size_t mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;  // unknown: no limit
}

// True on every rank when the processes of some host would need more than half its available
// memory for their buffers (lanes' scratch space and the MPI library need room too).
bool too_big(const std::string& coll, std::size_t count, int root, const HostComm& host) {
  int me = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const double mine = static_cast<double>(buffer_bytes(coll, count, me, p, root));
  double host_total = 0;
  MPI_Allreduce(&mine, &host_total, 1, MPI_DOUBLE, MPI_SUM, host.get());
  const std::size_t avail = mem_available_bytes();
  int big = avail > 0 && host_total > 0.5 * static_cast<double>(avail) ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &big, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return big != 0;
}

struct Stats {
  double avg_us = 0;
  double min_us = 0;
  double median_us = 0;  // the middle repetition (the mean of the two middle ones)
};

Stats stats(const double* slowest, int reps) {
  Stats s{0, slowest[0], 0};
  std::vector<double> sorted(slowest, slowest + reps);
  for (int r = 0; r < reps; ++r) {
    s.avg_us += slowest[r];
    s.min_us = std::min(s.min_us, slowest[r]);
  }
  std::sort(sorted.begin(), sorted.end());
  const auto half = static_cast<std::size_t>(reps / 2);
  s.median_us = (reps % 2 != 0 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2) * 1e6;
  s.avg_us = s.avg_us / reps * 1e6;
  s.min_us *= 1e6;
  return s;
}

std::string describe(const std::string& coll, const Variant& v) {
  if (v.native) return coll + " native";
  return coll + " " + v.algorithm + " (" + std::to_string(v.lanes_column) +
         (v.lanes_column == 1 ? " lane)" : " lanes)");
}

// Runs each lanes variant once; drops (with one stderr line) those that every rank refuses
// with lanes::Error. A variant refused by some ranks only is an error (the ranks are out of step).
std::vector<std::size_t> usable_variants(const std::string& coll, std::size_t count,
                                         const std::vector<Variant>& variants,
                                         const std::vector<lanes::CallOptions>& opts,
                                         CollectiveBench& bench, int me, int p) {
  std::vector<std::size_t> out;
  for (std::size_t v = 0; v < variants.size(); ++v) {
    if (variants[v].native) {
      out.push_back(v);
      continue;
    }
    std::string why;
    try {
      bench.run_lanes(opts[v]);
    } catch (const lanes::Error& e) {
      why = e.what();
    }
    int first = why.empty() ? p : me;
    int threw = why.empty() ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &threw, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (threw == 0) {
      out.push_back(v);
      continue;
    }
    // Every rank refused the call: nothing ran, the next variant starts clean. Only some did:
    // the others took part in a collective that cannot complete consistently.
    if (threw < p) {
      throw std::runtime_error(describe(coll, variants[v]) + " at count " + std::to_string(count) +
                               " failed on " + std::to_string(threw) + " of " + std::to_string(p) +
                               " ranks (first: rank " + std::to_string(first) + ")" +
                               (why.empty() ? "" : ": " + why));
    }
    if (first == me) {
      std::fprintf(stderr, "lanes-bench: skipping %s at count %zu: %s\n",
                   describe(coll, variants[v]).c_str(), count, why.c_str());
    }
  }
  return out;
}

struct Context {
  const Options& o;
  lanes::Communicator& world;
  const Shape& shape;
  const HostComm& host;
  Report* report;  // rank 0 only
  int me;
  int p;
};

// Measures one collective at one count; returns the number of variants that failed --check.
int measure(Context& cx, const std::string& coll, std::size_t count,
            const std::vector<Variant>& variants) {
  const Options& o = cx.o;
  if (too_big(coll, count, o.root, cx.host)) {
    if (cx.me == 0) {
      std::fprintf(stderr,
                   "lanes-bench: skipping %s at count %zu: buffers need more than half "
                   "of the host's available memory\n",
                   coll.c_str(), count);
    }
    return 0;
  }
  std::vector<lanes::CallOptions> opts;
  for (const Variant& v : variants) opts.push_back({v.algorithm, v.lanes_option});
  std::unique_ptr<CollectiveBench> bench =
      make_bench(coll, count, o.root, cx.world, MPI_COMM_WORLD);
  bench->fill(0);
  const std::vector<std::size_t> active =
      usable_variants(coll, count, variants, opts, *bench, cx.me, cx.p);
  const std::size_t na = active.size();
  const auto reps = static_cast<std::size_t>(o.reps);
  std::vector<double> times(na * reps);
  std::vector<int> bad(na, 0);
  std::vector<std::size_t> order(na);
  std::vector<std::size_t> positions(na * reps);  // each variant's place in each repetition
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffler(static_cast<std::mt19937::result_type>(count));  // the same on every rank
  for (int r = -o.warmup; r < o.reps; ++r) {
    std::shuffle(order.begin(), order.end(), shuffler);
    for (std::size_t place = 0; place < na; ++place) {
      const std::size_t a = order[place];
      const std::size_t v = active[a];
      if (r >= 0) positions[a * reps + static_cast<std::size_t>(r)] = place;
      const int salt = static_cast<int>(static_cast<std::size_t>(r + o.warmup) * na + a + 1);
      const auto call = [&] {
        if (variants[v].native)
          bench->run_native();
        else
          bench->run_lanes(opts[v]);
      };
      for (int k = 0; k < o.settle; ++k) {
        MPI_Barrier(MPI_COMM_WORLD);
        call();
      }
      if (o.check) bench->fill(salt);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      call();
      const double dt = MPI_Wtime() - t0;
      if (o.check && bad[a] == 0) {
        const std::string e = bench->verify(salt);
        if (!e.empty()) {
          bad[a] = 1;
          std::fprintf(stderr, "lanes-bench: CHECK FAILED on rank %d: %s, count %zu, %s %d: %s\n",
                       cx.me, describe(coll, variants[v]).c_str(), count,
                       r < 0 ? "warm-up repetition" : "repetition",
                       r < 0 ? r + o.warmup + 1 : r + 1, e.c_str());
        }
      }
      if (r >= 0) times[a * reps + static_cast<std::size_t>(r)] = dt;
    }
  }
  bench.reset();  // free the buffers before the next count
  MPI_Allreduce(MPI_IN_PLACE, times.data(), static_cast<int>(times.size()), MPI_DOUBLE, MPI_MAX,
                MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, bad.data(), static_cast<int>(na), MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  double native_avg = 0;
  for (std::size_t a = 0; a < na; ++a) {
    if (variants[active[a]].native) native_avg = stats(&times[a * reps], o.reps).avg_us;
  }
  int failed = 0;
  for (std::size_t a = 0; a < na; ++a) {
    failed += bad[a];
    if (cx.report == nullptr) continue;
    const Variant& v = variants[active[a]];
    const Stats s = stats(&times[a * reps], o.reps);
    const Row row{coll,
                  v.native ? "native" : "lanes",
                  v.algorithm,
                  v.lanes_column,
                  cx.shape.nodes,
                  cx.shape.ppn,
                  count,
                  count * sizeof(int),
                  s.avg_us,
                  s.min_us,
                  s.median_us,
                  native_avg,
                  o.check ? (bad[a] != 0 ? "FAILED" : "ok") : "-"};
    cx.report->add(row);
    cx.report->add_times(row, &times[a * reps], &positions[a * reps], o.reps);
  }
  return failed;
}

int run(const Options& o, lanes::Runtime& rt) {
  lanes::Communicator world = rt.world();
  const int me = world.rank(), p = world.size();
  if (o.root >= p) {
    if (me == 0)
      std::fprintf(stderr, "lanes-bench: --root %d: there are %d processes\n", o.root, p);
    return 2;
  }
  const Shape shape = layout_shape(rt, world, MPI_COMM_WORLD);
  const HostComm host;
  std::unique_ptr<Report> report;
  int opened = 1;
  if (me == 0) {
    try {
      report = std::make_unique<Report>(o.csv, o.times);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lanes-bench: %s\n", e.what());
      opened = 0;
    }
  }
  MPI_Bcast(&opened, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (opened == 0) return 2;
  if (me == 0) {
    std::fprintf(stderr,
                 "lanes-bench: %d processes on %d nodes (up to %d per node), lanes k=%d, bootstrap "
                 "%s; %d warm-up + %d measured repetitions%s%s\n",
                 p, shape.nodes, shape.ppn, shape.default_lanes, rt.bootstrap_name().c_str(),
                 o.warmup, o.reps, o.check ? ", every result checked" : "",
                 o.shared_memory ? "; buffers from lanes' shared heap" : "");
  }
  use_shared_memory(o.shared_memory ? &rt : nullptr);
  Context cx{o, world, shape, host, report.get(), me, p};
  int failed = 0;
  const std::size_t steps = o.collectives.size() * o.counts.size();
  std::size_t step = 0;
  for (const std::string& coll : o.collectives) {
    const std::vector<Variant> variants = variants_for(coll, o, shape, me == 0);
    for (std::size_t count : o.counts) {
      ++step;
      if (variants.empty()) continue;
      if (me == 0) {
        std::fprintf(stderr, "lanes-bench: [%zu/%zu] %s count %zu (%zu bytes): %zu variants\n",
                     step, steps, coll.c_str(), count, count * sizeof(int), variants.size());
      }
      failed += measure(cx, coll, count, variants);
    }
  }
  if (failed > 0 && me == 0)
    std::fprintf(stderr, "lanes-bench: %d results FAILED --check\n", failed);
  return failed > 0 ? 1 : 0;
}

}  // namespace
}  // namespace lanes_bench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  lanes_bench::Options o;
  int rc = 0;
  try {
    o = lanes_bench::parse_options(argc, argv);
    lanes_bench::validate_algorithms(o);
  } catch (const std::invalid_argument& e) {
    if (me == 0) std::fprintf(stderr, "lanes-bench: %s\n%s", e.what(), lanes_bench::usage());
    rc = 2;
  }
  if (rc == 0 && o.help) {
    if (me == 0) std::printf("%s", lanes_bench::usage());
  } else if (rc == 0) {
    // Declared outside the try blocks: a failure must end every process (MPI_Abort) while the
    // runtime still exists, since destroying it is collective and the others wait inside a call.
    std::optional<lanes::Runtime> rt;
    try {
      if (o.bootstrap == "mpi")
        rt.emplace(lanes::mpi::init(MPI_COMM_WORLD));
      else
        rt.emplace(lanes::Runtime::init());
      rc = lanes_bench::run(o, *rt);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "lanes-bench: rank %d: %s\n", me, e.what());
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    rt.reset();  // before MPI_Finalize
  }
  MPI_Finalize();
  return rc;
}
