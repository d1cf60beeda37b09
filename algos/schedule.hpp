// The schedule IR: for one rank and one collective call, a small DAG of operations over symbolic
// buffer regions. Three readers: the executor (lib/) runs it over the transport, the simulator
// (algos/simulator) runs all ranks symbolically, and the cost model prices it.
//
// Message matching: the j-th Send from rank a to rank b matches the j-th Recv at b from a
// (counted in schedule order). `finalize()` numbers them into Op::msg.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "algos/lane_set.hpp"

namespace lanes::algos {

enum class Collective : std::uint8_t {
  bcast,
  scatter,
  alltoall,
  allgather,
  gather,
  reduce,
  allreduce,
  barrier,
  reduce_scatter_block
};
inline constexpr Collective kCollectives[] = {
    Collective::bcast,     Collective::scatter,   Collective::gather,
    Collective::alltoall,  Collective::allgather, Collective::reduce,
    Collective::allreduce, Collective::barrier,   Collective::reduce_scatter_block};
// Reductions combine element by element: their schedules cut vectors only at element boundaries.
constexpr bool is_reduction(Collective c) {
  return c == Collective::reduce || c == Collective::allreduce ||
         c == Collective::reduce_scatter_block;
}
// Collectives with a root.
constexpr bool is_rooted(Collective c) {
  return c == Collective::bcast || c == Collective::scatter || c == Collective::gather ||
         c == Collective::reduce;
}
const char* to_string(Collective c);

// Buffers a schedule refers to. For bcast the data lives in `recv` at every rank (the root's
// input too); scatter: the root's `send` holds size blocks, `recv` one block; alltoall: `send`
// and `recv` hold size blocks each. reduce: every rank's `send` holds the vector, the root's
// `recv` receives the combination; allreduce: `send` and `recv` hold the vector at every rank.
// barrier: no buffers (its tokens live in scratch). reduce_scatter_block: every rank's `send`
// holds size blocks, rank r's `recv` receives the combination of everyone's block r.
enum class Buffer : std::uint8_t { send, recv, scratch };
const char* to_string(Buffer b);

struct Region {
  Buffer buffer = Buffer::recv;
  std::size_t offset = 0;
  std::size_t bytes = 0;
  bool operator==(const Region&) const = default;
};
// Whether two regions share a byte (empty ones share none).
bool overlaps(const Region& a, const Region& b);

// combine: dst = acc (+) src element by element (or src (+) acc with Op::src_first), over regions
// of equal size on element boundaries, where acc is Op::acc, or dst itself when Op::acc is empty;
// acc is dst exactly or does not overlap it. The element type and the operation are the call's,
// supplied at execution. An algorithm fixes the order of its operands (lower ranks' contributions
// on the left), so that ranks combining the same contributions get the same bits, floats too.
enum class OpKind : std::uint8_t { send, recv, copy, combine };

using OpId = std::uint32_t;

struct Op {
  OpKind kind = OpKind::copy;
  int peer = -1;           // send/recv: communicator rank of the other side
  LaneSet lanes;           // send/recv off-node: the lanes it goes over (striped when several)
  Region src;              // send, copy, combine
  Region dst;              // recv, copy, combine
  Region acc;              // combine: the left operand when not dst itself (bytes 0: dst)
  std::uint32_t msg = 0;   // send/recv: index among messages between this pair (see finalize)
  int round = 0;           // the algorithm's communication round (for the simulator's checks)
  bool src_first = false;  // combine: src is the left operand
  std::vector<OpId> deps;  // ops of this schedule that must complete before this one starts
};

struct Schedule {
  std::vector<Op> ops;
  std::size_t scratch_bytes = 0;
  int rounds = 0;  // number of communication rounds the algorithm claims for this rank
  // When > 0, the algorithm promises at most `ports` sends and at most `ports` receives of this
  // rank in any one round (k-ported algorithms); the simulator checks it.
  int ports = 0;

  // A send and its receive name the same lanes: usually the lanes the sender drives
  // (Layout::lanes_of[sender]), or one lane placed explicitly (LaneSet::one).
  OpId send(int peer, LaneSet lanes, Region src, std::vector<OpId> deps = {}, int round = 0);
  OpId recv(int peer, LaneSet lanes, Region dst, std::vector<OpId> deps = {}, int round = 0);
  OpId copy(Region src, Region dst, std::vector<OpId> deps = {});
  OpId combine(Region src, Region dst, std::vector<OpId> deps = {}, bool src_first = false);
  // dst = acc (+) src (src (+) acc with src_first): saves the copy of acc into dst first.
  OpId combine_into(Region acc, Region src, Region dst, std::vector<OpId> deps = {},
                    bool src_first = false);
  // Numbers messages per peer and direction; call once when the schedule is complete.
  void finalize();
  // Messages this rank sends to / receives from `peer` (after finalize).
  std::uint32_t sends_to(int peer) const;
  std::uint32_t recvs_from(int peer) const;
  std::string dump() const;  // human-readable, for tests and LANES_INFO=2
};

// What an algorithm is asked to build. `bytes`: bcast, reduce, allreduce: the data (vector);
// scatter/alltoall/allgather/gather/reduce_scatter_block: one block. `elem`: the element size
// of a reduction (bytes is a multiple of it); 1 otherwise. `groups`: the number of groups G of
// a hierarchical-<base> reduce (one of hierarchical_group_choices); 0: the cost model's.
struct CollArgs {
  Collective coll = Collective::bcast;
  int rank = 0;
  int root = 0;
  std::size_t bytes = 0;
  std::size_t elem = 1;
  int groups = 0;
};

struct Layout;

// How `rank`'s messages on its node follow one another: whether some send there waits for no
// on-node receive (free), whether some waits for one through its dependencies (gated), and
// whether it receives there at all. The executor picks its single-copy hint by it, and the
// shared-core model (shared_cores.hpp) follows the same rule.
struct NodeSendOrder {
  bool free_send = false;
  bool gated_send = false;
  bool receives = false;
  // Every node send leaves before any node receive (an alltoall's ranks).
  bool sends_before_receiving() const { return free_send && !gated_send && receives; }
};
NodeSendOrder node_send_order(const Schedule& s, const Layout& layout, int rank);

}  // namespace lanes::algos
