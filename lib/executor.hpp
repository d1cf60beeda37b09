// The executor: runs one rank's schedule over the transport as a nonblocking state machine.
// Ops start when their dependencies completed; sends and receives to peers on this node go
// through the node's shared-memory channels, all others over the rails behind the op's lanes with
// UCX, striped over several rails in proportion to their bandwidths.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <lanes/error.hpp>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"
#include "lib/combine.hpp"
#include "lib/fused_receive.hpp"
#include "lib/local_ops.hpp"
#include "lib/scratch_pool.hpp"
#include "transport/shm/channels.hpp"
#include "transport/ucx/rails.hpp"

namespace lanes::detail {

class CommImpl;

// A finalized schedule plus what the executor derives from it once (cached per call shape).
struct PreparedSchedule {
  algos::Schedule schedule;
  std::string algorithm;
  int first_rail = 0;  // the call's lane l runs over rail (first_rail + l) mod R
  std::vector<std::vector<algos::OpId>> dependents;       // op -> ops that wait for it
  std::vector<std::uint32_t> dep_counts;                  // op -> number of deps
  std::vector<std::pair<int, std::uint32_t>> node_sends;  // (local peer, messages) on this node
  std::vector<std::pair<int, std::uint32_t>> node_recvs;
  // is_small_node_schedule: the call runs it itself (run_small_node_schedule).
  bool small_node = false;
  // Which node messages go single-copy where the node allows it (lib/node_copy.hpp).
  transport::SingleCopy node_copy = transport::SingleCopy::no;
  // This rank copies on its own while it receives on its node (lib/node_copy.hpp).
  bool node_receiver_busy = false;
  // op -> the combine its node receive may do as the pieces arrive (lib/fused_receive.hpp).
  std::vector<Fusion> fusions;
};

// A schedule of at most kMaxSmallOps ops whose messages all go to ranks of this node, with at
// most 256 KiB of scratch.
inline constexpr std::size_t kMaxSmallOps = 8;
bool is_small_node_schedule(const algos::Schedule& schedule, const algos::Layout& layout, int rank);

// Checks and indexes a schedule built for `comm` (`reduce`: a reduce's). Throws
// lanes::Error(internal) if the schedule refers to invalid peers or needs more messages per pair
// than a tag can number.
std::shared_ptr<const PreparedSchedule> prepare(const CommImpl& comm, algos::Schedule schedule,
                                                std::string algorithm, int first_rail,
                                                bool reduce = false);

// Runs a small node schedule without an Execution: copies, combines, writes its peers' slots and
// polls its own directly, claiming sequence and message numbers as an Execution would. Throws
// lanes::Error, and revokes `comm`, as a failed Execution does.
void run_small_node_schedule(CommImpl& comm, const PreparedSchedule& prepared,
                             const std::byte* send, std::byte* recv, const Combiner& combine,
                             std::size_t elem);

class Execution {
 public:
  // Starting claims the communicator's next sequence number and message numbers, so executions
  // of one communicator must be created in the same order on every rank.
  // `combine`: a reduction's operation (its schedule's combine ops, on elements of `elem`
  // bytes), empty for other collectives.
  Execution(std::shared_ptr<CommImpl> comm, std::shared_ptr<const PreparedSchedule> prepared,
            const std::byte* send, std::byte* recv, Combiner combine = {}, std::size_t elem = 1);
  Execution(const Execution&) = delete;
  Execution& operator=(const Execution&) = delete;

  // Starts anew in this object, reusing its storage (a finished execution nobody else holds):
  // the same as constructing one, without the allocations.
  void restart(std::shared_ptr<CommImpl> comm, std::shared_ptr<const PreparedSchedule> prepared,
               const std::byte* send, std::byte* recv, Combiner combine, std::size_t elem);
  // Lets go of the communicator, schedule and operation of a finished execution and keeps the
  // storage for restart(), its scratch too (the spare execution of the communicator whose pool
  // the scratch belongs to: CommImpl drops it before the pool).
  void recycle() noexcept;

  // Starts what is ready and polls what runs. Returns true when finished (done or failed).
  // `progressed` is set when any op completed.
  bool advance(bool& progressed);
  bool finished() const { return remaining_ == 0 || failed_; }
  bool failed() const { return failed_; }
  Errc error_code() const { return error_code_; }
  const std::string& error() const { return error_; }
  // True when some running op is a shared-memory transfer (cannot be waited for on an fd).
  bool waits_on_node() const;
  // Fails the execution if another member revoked its communicator or a local peer it waits
  // for has exited.
  void check_peers();
  // Fails the execution (timeout, shutdown).
  void abort(Errc code, std::string why);
  CommImpl& comm() const { return *comm_; }

 private:
  // An off-node message striped over several rails is one RailRequest per part.
  using Striped = std::vector<transport::RailRequest>;
  using Transfer =
      std::variant<std::monostate, transport::RailRequest, Striped, transport::ShmTransfer>;
  ScheduleBuffers buffers() const { return {send_, recv_, scratch_.data()}; }
  // Starts an op; whatever goes wrong (even an exception from below) fails the execution
  // instead of leaving the progress loop, so every rank's call ends with the error.
  void start(algos::OpId id);
  void start_op(algos::OpId id);
  // Tests a running transfer (parts of a striped one together).
  static transport::XferState test(Transfer& t, std::string& why);
  // Posts an off-node send or receive of `op` over the rails behind its lanes.
  Transfer start_off_node(const algos::Op& op, std::byte* data, std::size_t bytes);
  void complete(algos::OpId id);
  // A transfer ended well: completes its op, and the combine a fused receive did.
  void complete_transfer(algos::OpId id);
  // How many ops the combine that receive `recv` may fuse with still waits for (0: none).
  std::uint32_t waiting_for_fusion(algos::OpId recv) const;
  void fail(algos::OpId id, Errc code, const std::string& why);
  void drain_transfers();  // before a failure returns: no rail reads or writes the buffers after

  std::shared_ptr<CommImpl> comm_;
  std::shared_ptr<const PreparedSchedule> prepared_;
  std::byte* send_;
  std::byte* recv_;
  Combiner combine_;
  std::size_t elem_;
  ScratchPool::Lease scratch_;  // after comm_, whose pool it returns to
  std::uint32_t seq_ = 0;
  std::vector<std::uint64_t> node_send_base_;  // per local peer
  std::vector<std::uint64_t> node_recv_base_;
  std::vector<std::uint32_t> waiting_;  // op -> deps not yet complete
  std::vector<Transfer> transfers_;     // op -> running transfer
  std::vector<algos::OpId> ready_;
  std::vector<algos::OpId> running_;
  FusedReceives fused_;  // handed to the node channels: the execution does not move
  std::size_t remaining_ = 0;
  bool failed_ = false;
  Errc error_code_ = Errc::internal;
  std::string error_;
};

}  // namespace lanes::detail
