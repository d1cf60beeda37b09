// lanes-calibrate: measures the cost model's parameters on this machine and writes them in the
// format LANES_CALIBRATION reads. Run it like an application, on two nodes or more (emulated
// nodes count: LANES_NODE_SIZE=2), or on one node for its on-node parameters and gamma alone:
//   mpirun -np 4 -x LANES_NODE_SIZE=2 lanes-calibrate [--output FILE] [--bytes B]
//   mpirun -np 2 --bind-to core lanes-calibrate [--output FILE] [--bytes B]
// On-node (when node 0 holds two ranks): messages between the first two ranks of node 0 (a
// two-rank broadcast through the shared-memory channels). Off-node: messages between the first
// ranks of nodes 0 and 1, on each rail alone ({.lanes = 1, .first_rail = r}), which gives every
// rail's rate (rail_rates; beta_rail is the fastest's). alpha from 8-byte messages, beta from the
// slope up to B bytes (default 16 MiB); each time one way, half a round trip that one process
// times, the median of repeated runs. The start-ups are measured with every process busy as in a
// collective (every node's first two ranks at once; every rank paired with the same node rank of
// the neighbouring node at once), so that processes outnumbering the cores show in alpha; the
// slopes with the one pair alone. gamma: rank 0 combining float64 sums of 4 MiB vectors with the
// runtime's kernel. A rail's burst (rail_burst_bytes): what a shaper's token bucket lets through
// faster than the rail's rate after a pause, measured with the pair alone (measure_burst);
// nothing is written where a rail has none, as on a NIC.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <lanes/lanes.hpp>
#include <string>
#include <thread>
#include <vector>

#include "algos/cost_model.hpp"
#include "lib/combine.hpp"

namespace {

// Seconds per byte of one process combining two vectors (median of 9).
double measure_gamma() {
  constexpr std::size_t kBytes = 4u << 20;
  std::vector<std::byte> dst(kBytes, std::byte{1}), src(kBytes, std::byte{2});
  const auto fn = lanes::detail::combine_fn(lanes::Datatype::float64, lanes::Op::sum);
  std::vector<double> times;
  for (int i = 0; i < 9; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    fn(dst.data(), dst.data(), src.data(), kBytes / 8, false);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(times.begin(), times.begin() + 4, times.end());
  return times[4] / static_cast<double>(kBytes);
}

// Median one-way time of `bytes` between the two ranks of `comm`: half the round trip of a
// broadcast from rank 0 that rank 1 answers with one of its own, timed by rank 0 alone, so that
// no clocks of two processes are compared and no synchronization's latency is counted. Both
// ranks return rank 0's median. With a `pause`, both ranks sleep that long before every round
// trip, so that a rail's token bucket, if it has one, refills between them.
double median_one_way(lanes::Communicator& comm, std::size_t bytes, int reps,
                      const lanes::CallOptions& options, std::chrono::microseconds pause = {}) {
  std::vector<char> data(bytes, 1);
  std::vector<double> times;
  for (int r = -2; r < reps; ++r) {
    if (pause.count() > 0) std::this_thread::sleep_for(pause);
    const auto t0 = std::chrono::steady_clock::now();
    comm.bcast(data, 0, options);
    comm.bcast(data, 1, options);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (r >= 0) times.push_back(s / 2);
  }
  const auto mid = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), mid, times.end());
  std::vector<double> median{*mid};
  comm.bcast(median, 0);
  return median[0];
}

// A rail's burst (algos/cost_model.hpp, burst_bytes_from): messages of 16 KiB to 1 MiB, each
// sent after a pause twice as long as the rail's rate takes to move it; 0: none.
double measure_burst(lanes::Communicator& pair, double alpha, double beta,
                     const lanes::CallOptions& options) {
  if (beta <= 0) return 0;
  std::vector<std::pair<double, double>> timed;  // (bytes, seconds one way)
  for (std::size_t s = 16u << 10; s <= 1u << 20; s *= 2) {
    const auto pause = std::chrono::microseconds(
        1000 + static_cast<long long>(2e6 * beta * static_cast<double>(s)));
    timed.emplace_back(static_cast<double>(s), median_one_way(pair, s, 5, options, pause));
  }
  return lanes::algos::burst_bytes_from(timed, alpha, beta);
}

struct Link {
  double alpha = 0;
  double beta = 0;
};

// beta from the slope between `alpha` (8 bytes) and `big` bytes, on the pair alone.
double slope(lanes::Communicator& pair, double alpha, std::size_t big,
             const lanes::CallOptions& options) {
  const double large = median_one_way(pair, big, 7, options);
  return std::max(0.0, (large - alpha) / static_cast<double>(big - 8));
}

double startup(lanes::Communicator& pair, const lanes::CallOptions& options = {}) {
  return median_one_way(pair, 8, 50, options);
}

// Writes the parameters to `output`, or to stdout where it is empty.
void emit(const char* text, const std::string& output) {
  if (output.empty()) {
    std::fputs(text, stdout);
  } else {
    std::ofstream(output) << text;
    std::printf("lanes-calibrate: wrote %s\n%s", output.c_str(), text);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string output;
  std::size_t big = 16u << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--output") == 0)
      output = argv[i + 1];
    else if (std::strcmp(argv[i], "--bytes") == 0)
      big = std::stoull(argv[i + 1]);
  }
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    lanes::Communicator world = rt.world();
    if (world.num_nodes() < 2) {
      // One node: its shared-memory link and the reduction kernel; the rails keep their defaults.
      if (world.size() < 2) {
        if (world.rank() == 0) {
          std::fprintf(stderr,
                       "lanes-calibrate needs two processes on a node, or two nodes "
                       "(e.g. mpirun -np 2; mpirun -np 4 -x LANES_NODE_SIZE=2)\n");
        }
        return 2;
      }
      lanes::Communicator pair = world.split(world.rank() < 2 ? 0 : -1, world.rank());
      if (!pair.valid()) return 0;
      Link shm;
      shm.alpha = startup(pair);
      shm.beta = slope(pair, shm.alpha, big, {});
      if (world.rank() == 0) {
        char text[512];
        std::snprintf(text, sizeof text,
                      "# lanes-calibrate: %d ranks on 1 node, messages up to %zu bytes\n"
                      "# off-node: not measured (one node), defaults apply\n"
                      "alpha_shm %.4g\nbeta_shm %.4g\ngamma %.4g\n",
                      world.size(), big, shm.alpha, shm.beta, measure_gamma());
        emit(text, output);
      }
      return 0;
    }
    // Node ids in rank order: node 0 holds rank 0; node 1 is the node of the first rank that is
    // not on node 0 (LANES_NODE_SIZE blocks or the launcher's placement).
    std::vector<int> node_rank_of(static_cast<std::size_t>(world.size()));
    std::vector<int> mine{world.node_rank()};
    world.allgather(mine, node_rank_of);
    std::vector<int> first_rank_of_node;  // ranks with node_rank 0, in order
    for (int r = 0; r < world.size(); ++r) {
      if (node_rank_of[static_cast<std::size_t>(r)] == 0) first_rank_of_node.push_back(r);
    }
    const int me = world.rank();
    const int node1 = first_rank_of_node.at(1);
    const int nodes = world.num_nodes();
    // Pair on node 0: ranks 0 and 1, when rank 1 shares node 0 (ranks of a node are consecutive
    // in these layouts). Pair across: rank 0 and node1.
    const bool shared = node_rank_of.at(1) == 1;
    Link shm;
    {
      // Start-up: the first two ranks of every node at once.
      const bool busy = world.node_size() >= 2 && world.node_rank() < 2;
      lanes::Communicator pairs = world.split(busy ? world.node() : -1, world.node_rank());
      if (busy) shm.alpha = startup(pairs);
      lanes::Communicator alone = world.split(shared && me < 2 ? 0 : -1, me);
      if (alone.valid()) shm.beta = slope(alone, shm.alpha, big, {});
    }
    // Each rail alone; the first rail's start-up is alpha_rail.
    std::vector<Link> rails(static_cast<std::size_t>(rt.num_rails()));
    std::vector<double> bursts(rails.size());  // rail_burst_bytes of each rail
    {
      // Node 2i's rank j with node 2i+1's rank j, all such pairs at once (one node left over
      // when there are an odd number of nodes).
      const int buddy_node = world.node() ^ 1;
      const bool busy = buddy_node < nodes;
      const int color = world.node_rank() * nodes + world.node() / 2;
      lanes::Communicator pairs = world.split(busy ? color : -1, world.node());
      const bool rail_member = me == 0 || me == node1;
      lanes::Communicator alone = world.split(rail_member ? 0 : -1, me);
      // Every phase ends in a barrier, so that the pairs that are done with one phase do not
      // send beside the next (the pair alone timing a slope, or another rail's start-ups).
      for (int r = 0; r < rt.num_rails(); ++r) {
        const lanes::CallOptions one{.algorithm = "binomial", .lanes = 1, .first_rail = r};
        Link& l = rails[static_cast<std::size_t>(r)];
        if (busy && pairs.size() == 2) l.alpha = startup(pairs, one);
        world.barrier();
        if (alone.valid()) {
          l.beta = slope(alone, l.alpha, big, one);
          bursts[static_cast<std::size_t>(r)] = measure_burst(alone, l.alpha, l.beta, one);
        }
        world.barrier();
      }
    }
    // Rank 0 was in both pairs and has both results.
    if (me == 0) {
      double fastest = 0;
      std::string rates;
      for (const Link& l : rails) {
        const double rate = l.beta > 0 ? 1.0 / l.beta : 0;
        fastest = std::max(fastest, rate);
        char one[32];
        std::snprintf(one, sizeof one, " %.4g", rate);
        rates += one;
      }
      // The burst every rail has (the least of them): none where one rail has none.
      const double burst = *std::min_element(bursts.begin(), bursts.end());
      std::string burst_text;
      if (burst > 0) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "rail_burst_bytes %.0f\n", burst);
        burst_text = buf;
      }
      char text[1024];
      std::string shm_text = "# on-node: not measured (node 0 holds one rank), defaults apply\n";
      if (shared) {
        char buf[128];
        std::snprintf(buf, sizeof buf, "alpha_shm %.4g\nbeta_shm %.4g\n", shm.alpha, shm.beta);
        shm_text = buf;
      }
      std::snprintf(text, sizeof text,
                    "# lanes-calibrate: %d ranks on %d nodes, messages up to %zu bytes\n"
                    "%salpha_rail %.4g\nbeta_rail %.4g\nrails %zu\nrail_rates%s\n%sgamma %.4g\n",
                    world.size(), world.num_nodes(), big, shm_text.c_str(), rails.front().alpha,
                    fastest > 0 ? 1.0 / fastest : 0.0, rails.size(), rates.c_str(),
                    burst_text.c_str(), measure_gamma());
      emit(text, output);
    }
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "lanes-calibrate: %s\n", e.what());
    return 1;
  }
  return 0;
}
