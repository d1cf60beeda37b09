// k-ported direct alltoall.
//
// Source: J. L. Traeff, "k-ported vs. k-lane Broadcast, Scatter, and Alltoall Algorithms", the
// straightforward k-ported alltoall: in each round every processor sends k blocks to its k
// "next" processors and receives k blocks from its k "previous" ones.
//
// Phases: the own block is copied from the send to the receive buffer. Then, in rounds
// t = 0..R-1 with R = ceil((p-1)/k), port i = 0..k-1 handles the shift d = t*k + i + 1 (while
// d <= p-1): rank r sends block (r+d) mod p to rank (r+d) mod p and receives block r of rank
// (r-d) mod p into block (r-d) mod p, over the lanes the sender drives. All 2k operations of a
// round are posted together, after every operation of the previous round completed. k =
// layout.num_lanes.
//
// Cost: ceil((p-1)/k) * (alpha + beta * m) for blocks of m bytes in the k-ported model (each
// round moves k blocks in and k out concurrently); every block travels exactly once.
//
// Applies: any p and any layout. A rank's k concurrent sends share the lanes it drives (all of
// them with one rank per node); on-node messages ignore the lanes.
#include <algorithm>
#include <vector>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"

namespace lanes::algos {

Schedule build_alltoall_kported(const Layout& layout, const CollArgs& args) {
  check_args(layout, args, "kported", false);
  const int p = layout.size;
  const int k = layout.num_lanes;
  Schedule s;
  const std::size_t b = args.bytes;
  if (b == 0) return s;
  const int r = args.rank;
  const auto block = [b](int j) { return static_cast<std::size_t>(j) * b; };
  s.ops.reserve(2 * static_cast<std::size_t>(p) - 1);
  s.copy({Buffer::send, block(r), b}, {Buffer::recv, block(r), b});
  const int rounds = (p - 1 + k - 1) / k;
  std::vector<OpId> prev;
  std::vector<OpId> current;
  for (int t = 0; t < rounds; ++t) {
    current.clear();
    for (int port = 0; port < k; ++port) {
      const int d = t * k + port + 1;
      if (d > p - 1) break;
      const int to = (r + d) % p;
      const int from = (r - d + p) % p;
      current.push_back(s.send(to, layout.lanes_of[r], {Buffer::send, block(to), b}, prev, t));
      current.push_back(
          s.recv(from, layout.lanes_of[from], {Buffer::recv, block(from), b}, prev, t));
    }
    prev.swap(current);
  }
  s.rounds = rounds;
  s.ports = k;
  s.finalize();
  return s;
}

// Cost: R = ceil((p - 1) / k) rounds, round t taking shifts tk + 1 .. tk + k at once. As for
// pairwise, shifts 1 .. n - 1 count as on the node and shifts n .. p - 1 as off it; a round with
// j shifts off the node has all n ranks of a node sending j blocks each (n j flows), and a round
// with both kinds lasts as long as the slower.
double cost_alltoall_kported(const CostInput& in, const MachineParams& m) {
  const long long ports = std::max(1, in.lanes);
  const long long p = in.p();
  const long long n = in.ppn;
  const long long rounds = (p - 1 + ports - 1) / ports;
  const auto b = static_cast<double>(in.bytes);
  if (in.nodes == 1) return static_cast<double>(rounds) * shm_time(b, m);
  const auto off = [&](long long shifts) {
    return rail_time(b, static_cast<double>(n * shifts), in, m);
  };
  const long long on_node = (n - 1) / ports;  // rounds of on-node shifts only
  const long long first = std::min(on_node * ports + ports, p - 1) - n + 1;
  double t = static_cast<double>(on_node) * shm_time(b, m) + std::max(shm_time(b, m), off(first));
  if (rounds - 1 > on_node) {
    t += static_cast<double>(rounds - on_node - 2) * off(ports) + off(p - 1 - (rounds - 1) * ports);
  }
  return t;
}

const Algorithm algorithm_alltoall_kported{
    "kported",
    Collective::alltoall,
    build_alltoall_kported,
    nullptr,
    "ceil((p-1)/k) rounds, each sending k blocks to r+d on lanes 0..k-1",
    cost_alltoall_kported};

}  // namespace lanes::algos
