#include "algos/schedule.hpp"

#include "algos/layout.hpp"

#include <string>
#include <utility>
#include <vector>

namespace lanes::algos {

const char* to_string(Collective c) {
  switch (c) {
    case Collective::bcast:
      return "bcast";
    case Collective::scatter:
      return "scatter";
    case Collective::alltoall:
      return "alltoall";
    case Collective::allgather:
      return "allgather";
    case Collective::gather:
      return "gather";
    case Collective::reduce:
      return "reduce";
    case Collective::allreduce:
      return "allreduce";
    case Collective::barrier:
      return "barrier";
    case Collective::reduce_scatter_block:
      return "reduce_scatter_block";
  }
  return "unknown";
}

bool overlaps(const Region& a, const Region& b) {
  return a.buffer == b.buffer && a.bytes > 0 && b.bytes > 0 && a.offset < b.offset + b.bytes &&
         b.offset < a.offset + a.bytes;
}

const char* to_string(Buffer b) {
  switch (b) {
    case Buffer::send:
      return "send";
    case Buffer::recv:
      return "recv";
    case Buffer::scratch:
      return "scratch";
  }
  return "unknown";
}

namespace {

OpId append(std::vector<Op>& ops, Op op) {
  ops.push_back(std::move(op));
  return static_cast<OpId>(ops.size() - 1);
}

std::string region_text(const Region& r) {
  return std::string(to_string(r.buffer)) + "[" + std::to_string(r.offset) + ",+" +
         std::to_string(r.bytes) + ")";
}

}  // namespace

OpId Schedule::send(int peer, LaneSet lanes, Region src, std::vector<OpId> deps, int round) {
  Op op;
  op.kind = OpKind::send;
  op.peer = peer;
  op.lanes = lanes;
  op.src = src;
  op.round = round;
  op.deps = std::move(deps);
  return append(ops, std::move(op));
}

OpId Schedule::recv(int peer, LaneSet lanes, Region dst, std::vector<OpId> deps, int round) {
  Op op;
  op.kind = OpKind::recv;
  op.peer = peer;
  op.lanes = lanes;
  op.dst = dst;
  op.round = round;
  op.deps = std::move(deps);
  return append(ops, std::move(op));
}

OpId Schedule::copy(Region src, Region dst, std::vector<OpId> deps) {
  Op op;
  op.kind = OpKind::copy;
  op.src = src;
  op.dst = dst;
  op.deps = std::move(deps);
  return append(ops, std::move(op));
}

OpId Schedule::combine(Region src, Region dst, std::vector<OpId> deps, bool src_first) {
  Op op;
  op.kind = OpKind::combine;
  op.src_first = src_first;
  op.src = src;
  op.dst = dst;
  op.deps = std::move(deps);
  return append(ops, std::move(op));
}

OpId Schedule::combine_into(Region acc, Region src, Region dst, std::vector<OpId> deps,
                            bool src_first) {
  const OpId id = combine(src, dst, std::move(deps), src_first);
  if (!(acc == dst)) ops[id].acc = acc;
  return id;
}

void Schedule::finalize() {
  // Counters indexed by peer; a negative peer is left unnumbered (the simulator reports it).
  std::vector<std::uint32_t> sent;
  std::vector<std::uint32_t> received;
  for (Op& op : ops) {
    if (op.kind == OpKind::copy || op.kind == OpKind::combine || op.peer < 0) continue;
    auto& counters = op.kind == OpKind::send ? sent : received;
    const auto peer = static_cast<std::size_t>(op.peer);
    if (counters.size() <= peer) counters.resize(peer + 1, 0);
    op.msg = counters[peer]++;
  }
}

std::uint32_t Schedule::sends_to(int peer) const {
  std::uint32_t n = 0;
  for (const Op& op : ops) n += op.kind == OpKind::send && op.peer == peer ? 1 : 0;
  return n;
}

std::uint32_t Schedule::recvs_from(int peer) const {
  std::uint32_t n = 0;
  for (const Op& op : ops) n += op.kind == OpKind::recv && op.peer == peer ? 1 : 0;
  return n;
}

std::string Schedule::dump() const {
  std::string out = std::to_string(ops.size()) + " ops, " + std::to_string(rounds) +
                    " rounds, scratch " + std::to_string(scratch_bytes) + " bytes\n";
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    out += "  #" + std::to_string(i) + " ";
    switch (op.kind) {
      case OpKind::send:
        out += "send -> " + std::to_string(op.peer) + " " + region_text(op.src);
        break;
      case OpKind::recv:
        out += "recv <- " + std::to_string(op.peer) + " " + region_text(op.dst);
        break;
      case OpKind::copy:
        out += "copy " + region_text(op.src) + " -> " + region_text(op.dst);
        break;
      case OpKind::combine:
        out += "combine " + region_text(op.src) + (op.src_first ? " before " : " into ") +
               (op.acc.bytes > 0 ? region_text(op.acc) + " -> " : "") + region_text(op.dst);
        break;
    }
    if (op.kind == OpKind::send || op.kind == OpKind::recv) {
      out += std::string(op.lanes.count() == 1 ? " lane " : " lanes ") + op.lanes.text() + " msg " +
             std::to_string(op.msg) + " round " + std::to_string(op.round);
    }
    if (!op.deps.empty()) {
      out += " after ";
      for (std::size_t d = 0; d < op.deps.size(); ++d) {
        if (d > 0) out += ",";
        out += "#" + std::to_string(op.deps[d]);
      }
    }
    out += "\n";
  }
  return out;
}

NodeSendOrder node_send_order(const Schedule& s, const Layout& layout, int rank) {
  NodeSendOrder order;
  std::vector<char> after_recv(s.ops.size(), 0);  // waits (transitively) for an on-node receive
  for (std::size_t i = 0; i < s.ops.size(); ++i) {
    const Op& op = s.ops[i];
    for (const OpId d : op.deps) after_recv[i] |= after_recv[d];
    const bool on_node = (op.kind == OpKind::send || op.kind == OpKind::recv) && op.peer >= 0 &&
                         op.peer < layout.size && layout.same_node(op.peer, rank);
    if (!on_node) continue;
    if (op.kind == OpKind::recv) {
      order.receives = true;
      after_recv[i] = 1;
    } else {
      (after_recv[i] != 0 ? order.gated_send : order.free_send) = true;
    }
  }
  return order;
}

}  // namespace lanes::algos
