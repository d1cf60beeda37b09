// Receives fused with the combine that consumes them. A reduction receives a peer's vector into
// scratch and then combines it into its own; on the node, the receive can instead combine each
// piece straight out of the slot as it arrives, which saves copying the message out (and the
// scratch it passes through). A receive fuses with its combine where:
//  - it is a receive from this node into scratch, and that combine is its only dependent, whose
//    src (or acc) is exactly the received region, and whose result does not land there;
//  - nothing that follows reads the region before something overwrites all of it (prepare time:
//    fusable_receives);
//  - when it starts, the combine waits for nothing else, and the message's pieces hold whole
//    elements (run time: FusedReceives::sink_for).
// A fused receive completes its combine with it (the runner completes both, and never runs the
// combine).
// A single-copy message lands in the scratch as before and is combined from there at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"
#include "lib/combine.hpp"
#include "lib/local_ops.hpp"
#include "transport/shm/channels.hpp"

namespace lanes::detail {

inline constexpr algos::OpId kNoFusion = std::numeric_limits<algos::OpId>::max();

struct Fusion {
  algos::OpId combine = kNoFusion;  // the combine a receive may fuse with
  bool as_acc = false;              // the received region is its acc (else its src)
};

// Per op of `rank`'s schedule: the combine its receive may fuse with (kNoFusion for every other
// op). `dependents`: op -> the ops that wait for it.
std::vector<Fusion> fusable_receives(const algos::Schedule& schedule, const algos::Layout& layout,
                                     int rank,
                                     const std::vector<std::vector<algos::OpId>>& dependents);

// What the receives of one running schedule combine with: the sink's context. Its address is
// handed to the node channels, so it stays put while the schedule runs.
class FusedReceives {
 public:
  void start(const algos::Schedule& schedule, const std::vector<Fusion>& fusions,
             const ScheduleBuffers& buffers, const Combiner& combine, std::size_t elem);
  // The sink for receive `recv` of `bytes` over `channels`, where it fuses now: its combine
  // waits for `combine_waiting` ops (1: the receive alone). Empty otherwise.
  transport::PieceSink sink_for(algos::OpId recv, std::uint32_t combine_waiting,
                                const transport::NodeChannels& channels, std::size_t bytes);
  // Why a fused combine failed (a user operation that threw); empty when none did.
  const std::string& error() const { return error_; }

 private:
  static bool consume(void* context, std::uint32_t recv, std::size_t offset, const char* piece,
                      std::size_t bytes);

  const algos::Schedule* schedule_ = nullptr;
  const std::vector<Fusion>* fusions_ = nullptr;
  ScheduleBuffers buffers_;
  const Combiner* combine_ = nullptr;
  std::size_t elem_ = 1;
  std::string error_;
};

}  // namespace lanes::detail
