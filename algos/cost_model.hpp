// The cost model: prices a collective call with an alpha-beta model per link class, so that
// selection picks the cheapest algorithm and lanes-model predicts behaviour at scales no machine
// here has. Pure: the parameters come from a calibration file that lanes-calibrate measures.
//
// Link classes: on-node copies through shared memory (alpha_shm + bytes * beta_shm, one
// process copying), and off-node messages on a rail (alpha_rail + bytes * beta_rail at the
// rail's full rate). A rail's bandwidth is shared by the flows that use it at the same time, and
// a node never injects faster than `node_bytes_per_s` over all its rails.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "algos/schedule.hpp"

namespace lanes::algos {

struct MachineParams {
  double alpha_shm = 1.0e-6;       // s per on-node message
  double beta_shm = 1.0 / 4.0e9;   // s per byte copied on-node by one process
  double alpha_rail = 5.0e-6;      // s per off-node message
  double beta_rail = 1.0 / 1.2e9;  // s per byte on one rail at full rate
  int rails = 1;                   // physical rails per node
  double node_bytes_per_s = 0;     // per-node injection limit over all rails; 0: rails * rate

  // "key value" lines (the calibration file); unknown keys are an error naming them.
  static MachineParams parse(const std::string& text);
  std::string to_text() const;
};

// The shape of one call: N nodes of n processes (n: the largest node), k lanes, and `bytes` as
// in CollArgs (bcast: the data; other collectives: one block).
struct CostInput {
  long long nodes = 1;
  long long ppn = 1;
  int lanes = 1;
  std::size_t bytes = 0;
  bool regular = true;  // every node holds n processes
  long long p() const { return nodes * ppn; }
};

// Time of one message of `bytes` on a rail used by `flows` concurrent flows of one node spread
// over `lanes` lanes.
double rail_time(double bytes, double flows, const CostInput& in, const MachineParams& m);
// Time of one on-node message of `bytes`.
double shm_time(double bytes, const MachineParams& m);

int ceil_log(long long x, long long base);  // smallest r with base^r >= x

struct Prediction {
  std::string algorithm;
  double seconds = 0;
};

// Every algorithm of `coll` that has a cost formula and applies to the shape, cheapest first.
std::vector<Prediction> predict(Collective coll, const CostInput& in, const MachineParams& m);

}  // namespace lanes::algos
