#include "lib/fused_receive.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

namespace lanes::detail {

using algos::Op;
using algos::OpId;
using algos::OpKind;
using algos::overlaps;
using algos::Region;

namespace {

// Whether `op` reads any of `r`.
bool reads(const Op& op, const Region& r) {
  switch (op.kind) {
    case OpKind::send:
    case OpKind::copy:
      return overlaps(op.src, r);
    case OpKind::combine:
      return overlaps(op.src, r) || overlaps(op.acc.bytes > 0 ? op.acc : op.dst, r);
    case OpKind::recv:
      return false;
  }
  return true;
}

// Whether `op` writes all of `r` (and so ends what a reader of `r` after it could see of the
// receive), without reading it.
bool overwrites(const Op& op, const Region& r) {
  return op.kind != OpKind::send && op.dst == r && !reads(op, r);
}

// Marks (in `mark`, one entry per op, left as it found it) the ops that run after `from`: their
// dependents, theirs, ... Returns them, or nullopt past a bound.
std::optional<std::vector<OpId>> after(const std::vector<std::vector<OpId>>& dependents,
                                       const std::vector<OpId>& from,
                                       std::vector<std::uint8_t>& mark) {
  constexpr std::size_t kMaxVisits = 512;
  std::vector<OpId> todo, seen;
  for (const OpId f : from) todo.insert(todo.end(), dependents[f].begin(), dependents[f].end());
  bool bounded = true;
  while (!todo.empty() && bounded) {
    const OpId id = todo.back();
    todo.pop_back();
    if (mark[id] != 0) continue;
    if (seen.size() == kMaxVisits) bounded = false;
    mark[id] = 1;
    seen.push_back(id);
    todo.insert(todo.end(), dependents[id].begin(), dependents[id].end());
  }
  for (const OpId id : seen) mark[id] = 0;
  if (!bounded) return std::nullopt;
  return seen;
}

// Whether some op after `combine` may read `r` while it still holds the received message: one
// that reads it and runs after no op that overwrote all of it after the combine. Gives up (true)
// past a bound on the ops it looks at.
bool read_later(const algos::Schedule& schedule, const std::vector<std::vector<OpId>>& dependents,
                OpId combine, const Region& r, std::vector<std::uint8_t>& mark) {
  const auto later = after(dependents, {combine}, mark);
  if (!later) return true;
  std::vector<OpId> overwriters;
  for (const OpId id : *later) {
    if (overwrites(schedule.ops[id], r)) overwriters.push_back(id);
  }
  const auto replaced = after(dependents, overwriters, mark);  // they read the new contents
  if (!replaced) return true;
  for (const OpId id : *replaced) mark[id] = 1;
  const bool early = std::any_of(later->begin(), later->end(), [&](OpId id) {
    return mark[id] == 0 && reads(schedule.ops[id], r);
  });
  for (const OpId id : *replaced) mark[id] = 0;
  return early;
}

}  // namespace

std::vector<Fusion> fusable_receives(const algos::Schedule& schedule, const algos::Layout& layout,
                                     int rank, const std::vector<std::vector<OpId>>& dependents) {
  std::vector<Fusion> out(schedule.ops.size());
  std::vector<std::uint8_t> mark(schedule.ops.size(), 0);
  for (std::size_t i = 0; i < schedule.ops.size(); ++i) {
    const Op& recv = schedule.ops[i];
    if (recv.kind != OpKind::recv || recv.dst.buffer != algos::Buffer::scratch ||
        recv.dst.bytes == 0 || !layout.same_node(recv.peer, rank) || dependents[i].size() != 1) {
      continue;
    }
    const OpId c = dependents[i].front();
    const Op& combine = schedule.ops[c];
    if (combine.kind != OpKind::combine || overlaps(combine.dst, recv.dst)) continue;
    const bool as_src = combine.src == recv.dst && !overlaps(combine.acc, recv.dst);
    const bool as_acc =
        combine.acc.bytes > 0 && combine.acc == recv.dst && !overlaps(combine.src, recv.dst);
    if (!as_src && !as_acc) continue;
    if (read_later(schedule, dependents, c, recv.dst, mark)) continue;
    out[i] = {c, as_acc};
  }
  return out;
}

void FusedReceives::start(const algos::Schedule& schedule, const std::vector<Fusion>& fusions,
                          const ScheduleBuffers& buffers, const Combiner& combine,
                          std::size_t elem) {
  schedule_ = &schedule;
  fusions_ = &fusions;
  buffers_ = buffers;
  combine_ = &combine;
  elem_ = elem;
  error_.clear();
}

transport::PieceSink FusedReceives::sink_for(OpId recv, std::uint32_t combine_waiting,
                                             const transport::NodeChannels& channels,
                                             std::size_t bytes) {
  if (fusions_ == nullptr || recv >= fusions_->size() || !*combine_) return {};
  const Fusion f = (*fusions_)[recv];
  if (f.combine == kNoFusion || combine_waiting != 1 || elem_ == 0 ||
      channels.piece_bytes(bytes) % elem_ != 0) {
    return {};
  }
  return {&FusedReceives::consume, this, recv};
}

bool FusedReceives::consume(void* context, std::uint32_t recv, std::size_t offset,
                            const char* piece, std::size_t bytes) {
  auto* self = static_cast<FusedReceives*>(context);
  const Fusion f = (*self->fusions_)[recv];
  const Op& op = self->schedule_->ops[f.combine];
  const ScheduleBuffers& b = self->buffers_;
  const auto* in = reinterpret_cast<const std::byte*>(piece);
  std::byte* dst = b.at(op.dst) + offset;
  const std::size_t count = bytes / self->elem_;
  const Combiner& combine = *self->combine_;
  const std::byte* acc = (op.acc.bytes > 0 ? b.at(op.acc) : b.at(op.dst)) + offset;
  std::string why = f.as_acc
                        ? run_combine(combine, dst, in, b.at(op.src) + offset, count, op.src_first)
                        : run_combine(combine, dst, acc, in, count, op.src_first);
  if (why.empty()) return true;
  self->error_ = std::move(why);
  return false;
}

}  // namespace lanes::detail
