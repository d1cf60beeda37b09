// Schedules built from schedules of smaller collectives (the hierarchical reductions, reduce then
// broadcast): the layout of a subset of the ranks, and the splice of one rank's schedule on that
// subset into its schedule of the whole call.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"

namespace lanes::algos {

// The layout of `ranks` (ranks of `whole`; sub-rank i is ranks[i]): the nodes of `whole` that hold
// some of them, numbered by first appearance, local ranks in the order given, lanes and rails as
// in `whole`. With `lone_drives_all` a rank that is the only one of its node among `ranks` drives
// all of the node's lanes: right when nobody else of the node sends in the same rounds (a stage
// among node leaders).
Layout sub_layout(const Layout& whole, std::span<const int> ranks, bool lone_drives_all);

// Where a part's buffers lie among the whole schedule's: its send and receive buffers start at
// these (buffer, offset); its scratch at `scratch` in the whole's scratch.
struct BufferMap {
  Buffer send = Buffer::send;
  std::size_t send_at = 0;
  Buffer recv = Buffer::recv;
  std::size_t recv_at = 0;
  std::size_t scratch = 0;
};

// How a part enters the whole: its ranks (empty: the same ranks), its layout (the whole's when
// the ranks are the same) and this rank's rank in it, where its buffers lie, the round its round 0
// becomes, and what its first ops wait for.
struct Splice {
  std::span<const int> ranks;
  const Layout* layout = nullptr;
  int self = 0;
  BufferMap buffers;
  int first_round = 0;
  std::vector<OpId> after;
  // Other parts run on the same nodes in the same rounds (groups that share a node): a transfer
  // over lanes its sender does not drive in the whole layout goes over the lanes it drives,
  // unless all of the sender's node is in this part.
  bool shared_nodes = false;
};

// Appends `part` (this rank's schedule of the part, not finalized or finalized: the whole is
// numbered again by its own finalize) to `whole`. Returns the ops of the part, numbered in
// `whole`, that no other op of the part waits for: once they completed, the part is done here.
std::vector<OpId> splice(Schedule& whole, const Schedule& part, const Layout& layout,
                         const Splice& how);

}  // namespace lanes::algos
