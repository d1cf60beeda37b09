// The cost model: prices a collective call with an alpha-beta model per link class, so that
// selection picks the cheapest algorithm and lanes-model predicts behaviour at scales no machine
// here has. Pure: the parameters come from a calibration file that lanes-calibrate measures.
//
// Link classes: on-node copies through shared memory (alpha_shm + bytes * beta_shm, one
// process copying), and off-node messages over the rails (alpha_rail + bytes / rate). A node's
// k lanes together move B bytes/s (each rail at its own rate, a rail shared by the lanes on it,
// all of them capped by `node_bytes_per_s`), shared by the flows that leave the node at the same
// time. One flow is also bounded by the lanes it may use: a sender stripes a message over the
// lanes it drives (k / n of them for n < k ranks per node, one otherwise), a leader that is
// alone off its node over all of them, and a message below the striping threshold goes on one
// lane. A transfer over r of k equal rails thus costs alpha + beta * m / r.
//
// Over TCP rails a send completes once its bytes are in the socket's buffer, so the sends a rank
// starts one after another in a tree leave together and share its lanes: the first child of a
// binomial tree gets its message only when the root has pushed all of them (sends_overlap). The
// tree costs below (binomial_tree_time, binomial_scatter_time) price that; over RDMA a send
// completes when its data has left, and the sends follow one another.
//
// A rail shaped by a token bucket (the emulated cluster's tbf) passes a burst of bytes at the
// speed of the link under the shaper before its rate applies (rail_burst_bytes, which
// lanes-calibrate measures; a NIC has none). A call whose bytes fit well inside the buckets of
// the rails it uses is priced with its rail bytes free: at the sizes that fit, what they cost
// there is small against a rail's start-up (2 x 2 emulated nodes, bcast: 10.2 us for 4000 bytes
// against 8.2 us for 4, where the rate alone takes 33 us for 4000; bench/results.sh at 9051b87).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "algos/schedule.hpp"

namespace lanes::algos {

struct MachineParams {
  double alpha_shm = 1.0e-6;       // s per on-node message
  double beta_shm = 1.0 / 4.0e9;   // s per byte copied on-node by one process
  double alpha_rail = 5.0e-6;      // s per off-node message
  double beta_rail = 1.0 / 1.2e9;  // s per byte on the fastest rail at full rate
  int rails = 1;                   // physical rails per node
  bool rails_measured = false;     // `rails` came from the calibration, else from the node
  double node_bytes_per_s = 0;     // per-node injection limit over all rails; 0: none
  std::vector<double> rail_rates;  // bytes/s of each rail; empty: all at 1 / beta_rail
  double stripe_min_bytes = 0;     // smallest message striped over several rails; 0: auto
  bool sends_overlap = true;       // a send completes once buffered (TCP), see above
  double gamma = 1.0 / 4.0e9;      // s per byte combined by a reduction (one process)
  // s until a process that waits for a message gets a core, where a node's processes outnumber
  // its cores (shared_cores.hpp)
  double handoff = 2.0e-6;
  // Bytes a rail passes at once before its rate applies (a shaper's token bucket); 0: none (a
  // NIC serializes every byte at its rate).
  double rail_burst_bytes = 0;

  // Bytes/s of physical rail r.
  double rail_rate(int rail) const;
  // How many of `copies` sends that a rank starts one after another share its lanes at once.
  double overlapping(double copies) const { return sends_overlap ? copies : 1.0; }
  // Below this size a message goes on one rail: striping pays once the time saved on the wire,
  // beta * m / 2 for two rails, exceeds a second message's start-up (at least 32 KiB).
  double stripe_threshold() const;
  // Relative bandwidths of `count` rails for the layout (Layout::rail_weights), the fastest at
  // 1000.
  std::vector<std::uint32_t> rail_weights(int count) const;

  // "key value..." lines (the calibration file). Errors name `source` (the file), the line and
  // the key: unknown keys, values that are not finite numbers, negative times and rates, rails
  // and stripe_min_bytes that are not whole numbers in range, sends_overlap other than 0 or 1.
  static MachineParams parse(const std::string& text, const std::string& source = "calibration");
  std::string to_text() const;
};

// The shape of one call: N nodes of n processes (n: the largest node), k lanes, and `bytes` as
// in CollArgs (bcast, reductions: the data; other collectives: one block).
struct CostInput {
  long long nodes = 1;
  long long ppn = 1;
  int lanes = 1;
  std::size_t bytes = 0;
  bool regular = true;  // every node holds n processes
  long long p() const { return nodes * ppn; }
};

// Which lanes one flow may use (see the header comment).
enum class Spread : std::uint8_t {
  one_lane,  // placed on one lane explicitly
  driven,    // the lanes its sender drives
  node,      // all of the node's lanes (a leader alone off its node)
};

// Bytes/s that all k lanes of a node move together.
double node_rate(const CostInput& in, const MachineParams& m);
// Time of one message of `bytes` leaving a node while `flows` flows (this one included) leave it
// at the same time.
double rail_time(double bytes, double flows, const CostInput& in, const MachineParams& m,
                 Spread spread = Spread::driven);
// Time per message of a stream of messages of `bytes` that a rank sends one after another to
// one peer (the segments of a pipeline): below the striping threshold each goes whole on one
// rail and the next on the next rail (the executor's turns), so the stream moves at the rate of
// every lane the flow may use, as one message above the threshold does, striped.
double stream_time(double bytes, double flows, const CostInput& in, const MachineParams& m,
                   Spread spread = Spread::driven);
// Time of one on-node message of `bytes`.
double shm_time(double bytes, const MachineParams& m);
// Time to combine `bytes` of a reduction into a partial result.
double combine_time(double bytes, const MachineParams& m);
// A reduce's on-node message, which goes staged and which its receiver combines piece by piece
// straight out of the slot as the pieces arrive: the sender's copy and the receiver's combine
// overlap.
double node_combine_time(double bytes, const MachineParams& m);
// One message of `bytes` between ranks on the same node (shared memory) or not (one flow of the
// sender's lanes), as a one-ported algorithm whose ranks all send at once sees it.
double hop_time(double bytes, bool off_node, const CostInput& in, const MachineParams& m);

int ceil_log(long long x, long long base);  // smallest r with base^r >= x

// A binomial broadcast of `bytes` over p = nodes * ppn ranks (ranks of a node consecutive): the
// off-node rounds come first, each subtree root pushing its off-node copies at once, then the
// on-node rounds. `spread` says which lanes the off-node copies use.
double binomial_tree_time(double bytes, const CostInput& in, const MachineParams& m,
                          Spread spread = Spread::driven);
// A binomial scatter of p blocks of `block` bytes: at each level the subtree root sends the
// blocks of all its children at once, and the largest child continues once its blocks arrived.
double binomial_scatter_time(double block, const CostInput& in, const MachineParams& m,
                             Spread spread = Spread::driven);

struct Prediction {
  std::string algorithm;
  double seconds = 0;
};

// Bytes that the busiest node sends off the node in one call, at the least (0 on one node).
double node_volume(Collective coll, const CostInput& in);
// Whether a call of `volume` bytes per node rides inside its rails' bursts: at most an eighth of
// the buckets of the lanes it may use, so that calls repeated one after another (a benchmark's,
// an application's loop) find them refilled. On the recorded 2 x 1, 2 x 2 and 4 x 1 runs
// (bench/model_replay.py), a third let the 40 KB calls count as bursts, which they are not.
bool within_burst(double volume, const CostInput& in, const MachineParams& m);
// A rail's burst from the one-way times of messages sent after pauses that refill a token bucket,
// (bytes, seconds) each: of a message of s bytes that took t, s - (t - alpha) / beta bytes did not
// wait for the rate. The most such bytes over the messages where they are a quarter of it or
// more; 0 where none is (a NIC, give or take its noise). lanes-calibrate measures the times.
double burst_bytes_from(const std::vector<std::pair<double, double>>& timed, double alpha,
                        double beta);
// `m` with its rails' bytes free (a thousand times their rate; stripe threshold unchanged).
MachineParams within_burst_params(const MachineParams& m);

// Every algorithm of `coll` that has a cost formula and applies to the shape, cheapest first.
std::vector<Prediction> predict(Collective coll, const CostInput& in, const MachineParams& m);

}  // namespace lanes::algos
