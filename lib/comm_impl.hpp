// CommImpl: one communicator as this process sees it: its layout, the mapping to world ranks
// (UCX endpoints are per world rank), the node's shared-memory channels, sequence numbers, and
// the cache of prepared schedules.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <lanes/communicator.hpp>
#include <lanes/error.hpp>
#include <span>

#include "algos/layout.hpp"
#include "algos/schedule.hpp"
#include "lib/agreement.hpp"
#include "lib/call.hpp"
#include "lib/call_cache.hpp"
#include "lib/combine.hpp"
#include "lib/group_search.hpp"
#include "lib/lru_map.hpp"
#include "lib/scratch_pool.hpp"
#include "lib/selection.hpp"
#include "lib/vcall.hpp"
#include "transport/shm/channels.hpp"
#include "transport/ucx/rails.hpp"

namespace lanes::detail {

class RuntimeImpl;
class Execution;
struct PreparedSchedule;

class CommImpl;
// The communicator behind a public lanes::Communicator: throws for a null one and after finalize.
CommImpl& usable(const std::shared_ptr<CommImpl>& impl);

class CommImpl : public std::enable_shared_from_this<CommImpl> {
 public:
  CommImpl(std::shared_ptr<RuntimeImpl> runtime, algos::Layout layout, int rank,
           std::vector<int> world_rank_of, std::uint32_t id);

  // Creates the node's shared-memory channels. `exchange` runs over a group of `exchange_size`
  // processes in which this node's leader has index `exchange_rank_of_leader`. Every member of
  // that group must call this with the same `probe_cma` (the exchange rounds must match).
  void open_node_channels(const ExchangeFn& exchange, int exchange_size,
                          int exchange_rank_of_leader, transport::CopyPolicy policy,
                          bool probe_cma);

  const algos::Layout& layout() const { return layout_; }
  int rank() const { return rank_; }
  int size() const { return layout_.size; }
  int world_rank(int rank) const { return world_rank_of_[static_cast<std::size_t>(rank)]; }
  int local_rank() const { return layout_.local_rank_of[static_cast<std::size_t>(rank_)]; }
  std::uint32_t id() const { return id_; }
  RuntimeImpl& runtime() const { return *runtime_; }
  transport::NodeChannels* channels() { return channels_.get(); }
  bool cma() const { return channels_ ? channels_->cma() : copy_policy_.prefer_single; }
  // Node peers read this process's shared heap in place (every member mapped every heap).
  bool heaps_mapped() const { return channels_ && channels_->heaps_mapped(); }
  double cma_slowdown() const {
    return channels_ ? channels_->cma_slowdown() : copy_policy_.cma_slowdown;
  }
  double cma_page_seconds() const {
    return channels_ ? channels_->cma_page_seconds() : copy_policy_.cma_page_seconds;
  }
  // What a communicator split from this one inherits (single copy as probed here).
  transport::CopyPolicy copy_policy() const {
    return {channels_ ? channels_->cma_possible() : copy_policy_.single_possible,
            copy_policy_.prefer_single, cma_slowdown(), cma_page_seconds()};
  }
  ScratchPool& scratch_pool() { return scratch_pool_; }
  // The transfers and scratch of a small node schedule's run (one at a time: a runtime has one
  // thread inside), kept from call to call.
  std::vector<transport::ShmTransfer>& small_transfers() { return small_transfers_; }
  std::byte* small_scratch(std::size_t bytes) {
    if (small_scratch_.size() < bytes) small_scratch_.resize(bytes);
    return small_scratch_.data();
  }

  // Claims the next collective sequence number and `count` message numbers to each local peer.
  std::uint32_t next_seq() { return seq_++; }
  std::uint64_t claim_node_sends(int local_peer, std::uint32_t count);
  std::uint64_t claim_node_recvs(int local_peer, std::uint32_t count);

  // Internal allgather of small records (splits, checks); not subject to LANES_CHECK.
  void exchange(const void* mine, void* all, std::size_t bytes);

  std::shared_ptr<CommImpl> split(int color, int key);
  // Collective over the listed ranks only; `exchange` allgathers over exactly them, in order.
  std::shared_ptr<CommImpl> group(std::span<const int> ranks, const ExchangeFn& exchange);

  // After a failure the message numbering may be out of step with peers: refuse further use,
  // and revoke the communicator: the members on this node see it in the node's channels, those
  // on other nodes get a control message; each of them fails what it waits for (in its stall
  // checks) and refuses further use too. Only the first failure is told.
  void revoke(Errc code, const std::string& why);
  // Whether another member revoked this communicator (this one is then unusable too); `code`
  // and `why` describe it. Cheap enough for every stall check.
  bool revoked_by_peer(Errc& code, std::string& why);
  // Posts the standing receive of other nodes' revocations (communicators spanning nodes).
  void arm_revocation();
  void check_usable() const;
  void release() noexcept;  // drops shared memory (at finalize)

  using Call = detail::Call;
  // A validated call, ready to start any number of times (persistent plans keep one).
  struct Prepared {
    std::shared_ptr<const PreparedSchedule> schedule;  // null: nothing to move
    const std::byte* send = nullptr;
    std::byte* recv = nullptr;
    Call call;  // for LANES_CHECK at every start
    std::size_t block = 0;
    Combiner combine;     // reductions: the call's operation (a user one owned here)
    std::string error;    // with LANES_CHECK, an argument error reported to every rank at start
    int groups = 0;       // a hierarchical reduce's G when the configuration names it; 0: model's
    bool reroot = false;  // a reduce through rank 0 (a non-commutative operation)
    // LANES_HIERARCHY_GROUPS=search has yet to settle this call's G: a blocking call runs a
    // trial (run_group_trial), any other the model's G.
    bool searching = false;
  };
  // Checks the arguments (throws lanes::Error naming the problem), chooses the algorithm and
  // builds (or finds) its schedule. Local: no communication.
  Prepared prepare_call(const Call& call);
  // Starts a prepared call (with LANES_CHECK, first agrees with the other ranks). Collective in
  // call order. Returns null when there is nothing to move.
  std::shared_ptr<Execution> start(const Prepared& prepared);
  // Takes back an execution that has finished (a plan's previous start), for the next start to
  // reuse: a persistent call allocates nothing per start. Kept only where nobody else holds it
  // and it did not fail.
  void reclaim(std::shared_ptr<Execution> ex) noexcept;
  // prepare_call + start + wait.
  void run(const Call& call);

  // The v-variants (lib/comm_vcollectives.cpp): checked, agreed where needed, built from their
  // blocks and started at once (no cache: their schedules depend on every block).
  std::shared_ptr<Execution> start_v(const VSpec& spec, const CallOptions& options);
  void run_v(const VSpec& spec, const CallOptions& options);

 private:
  // What an execution of `call` works on: the buffers this rank uses and the operation.
  struct Operands {
    const std::byte* send = nullptr;
    std::byte* recv = nullptr;
    Combiner combine;
    std::size_t elem = 1;
  };
  Operands operands(const Call& call) const;
  // Completes a valid call's Prepared from its schedule.
  void fill(Prepared& prepared, std::shared_ptr<const PreparedSchedule> schedule) const;
  // Starts an execution (the spare one when it is free); finish() waits for it and keeps it as
  // the spare.
  std::shared_ptr<Execution> launch(std::shared_ptr<const PreparedSchedule> schedule,
                                    const std::byte* send, std::byte* recv, Combiner combine,
                                    std::size_t elem);
  void finish(std::shared_ptr<Execution> ex);
  // A communicator of `members` (ranks of this one, in their new order) without its channels;
  // sets the new rank of this process's node leader.
  std::shared_ptr<CommImpl> member_comm(const std::vector<int>& members, int new_rank,
                                        std::uint32_t id, int& leader_new_rank);

  // `reroot`: a reduce through rank 0 (algos::reroot_reduce), for a non-commutative operation.
  // `internal`: a call of lanes' own (run_internal), which LANES_INFO does not report.
  // `groups`: a hierarchical reduce's G (algos::CollArgs::groups).
  std::shared_ptr<const PreparedSchedule> schedule_for(algos::Collective coll, int root,
                                                       std::size_t bytes,
                                                       const std::string& algorithm, int lanes,
                                                       int first_rail, std::size_t elem = 1,
                                                       bool reroot = false, bool internal = false,
                                                       int groups = 0);
  // The G of a call of `algorithm` (LANES_HIERARCHY_GROUPS: fixed, or as the search settled it);
  // 0 for the model's or for an algorithm without groups. `searching`: the search has yet to
  // settle it.
  int groups_for(algos::Collective coll, const std::string& algorithm, std::size_t bytes,
                 const CallOptions& options, bool& searching) const;
  // A blocking call whose G is being searched: runs it with the next G to try and times it;
  // the call that ends the trials agrees on G with the other ranks (lib/group_search.hpp).
  void run_group_trial(Prepared& prepared);
  // `rank_order`: a non-commutative operation, served only by algorithms in rank order
  // (select_algorithm, remembered per shape).
  std::string choose_algorithm(algos::Collective coll, std::size_t bytes,
                               const CallOptions& options, const algos::Layout& layout,
                               bool rank_order) const;
  // LANES_INFO's lines for a selection: the model's ranking, a fallback.
  void report(algos::Collective coll, std::size_t bytes, const algos::Layout& layout,
              const Selection& chosen) const;
  // The layout with k lanes (per-call option): primaries mod k, driven lanes spread anew.
  const algos::Layout& layout_with_lanes(int lanes, int first_rail);
  // LANES_CHECK: all ranks compare what they were called with. `local_error` is this rank's
  // argument error (empty if none); every rank throws if any rank has one.
  // `call.options.algorithm` is the chosen algorithm.
  // `groups`: the G the call's schedule takes where the configuration names it (else 0).
  void agree(const Call& call, std::size_t bytes, const std::string& local_error, int groups = 0);
  // The exchange before a v-collective: with LANES_CHECK, or when the algorithm needs block
  // sizes only the root knows (which it then fills into `args`). Every rank compares every
  // rank's call and block sizes and throws alike: invalid_argument when a rank's arguments were
  // wrong (`local_error`), mismatch when calls or the two ends of a block differ.
  void agree_v(algos::VArgs& args, const std::string& algorithm, const CallOptions& options,
               const std::string& local_error);
  void run_internal(algos::Collective coll, std::size_t bytes, const std::byte* send,
                    std::byte* recv, const std::string& algorithm);

  std::shared_ptr<RuntimeImpl> runtime_;
  algos::Layout layout_;
  int rank_;
  std::vector<int> world_rank_of_;
  std::uint32_t id_;
  std::uint32_t seq_ = 0;
  std::unique_ptr<transport::NodeChannels> channels_;
  ScratchPool scratch_pool_;
  std::vector<transport::ShmTransfer> small_transfers_;
  std::vector<std::byte> small_scratch_;
  transport::CopyPolicy copy_policy_;
  std::vector<std::uint64_t> node_sent_;  // per local peer: messages claimed so far
  std::vector<std::uint64_t> node_recvd_;
  std::map<std::pair<int, int>, algos::Layout> layouts_by_lanes_;
  // Schedules only, whatever the operation (each prepared call carries its own): coll, root,
  // bytes, algorithm, lanes, first rail, element size, through rank 0.
  // (collective, root, bytes, algorithm, lanes, first_rail, elem, reroot, internal, groups)
  using CacheKey =
      std::tuple<int, int, std::size_t, std::string, int, int, std::size_t, bool, bool, int>;
  LruMap<CacheKey, std::shared_ptr<const PreparedSchedule>> cache_{256};
  CallCache call_cache_;              // in front of the selection and cache_
  GroupSearch group_search_;          // LANES_HIERARCHY_GROUPS=search
  std::shared_ptr<Execution> spare_;  // a finished, recycled execution for the next start
  std::string broken_;
  Errc broken_code_ = Errc::peer_failure;
  transport::RailRequest revocation_in_;           // another node's revocation, when armed
  std::array<std::uint32_t, 2> revocation_msg_{};  // its code and the revoking rank
  // (collective, bytes, lanes, first_rail, rank_order, CallOptions::algorithm) -> algorithm
  using SelectionKey = std::tuple<int, std::size_t, int, int, bool, std::string>;
  mutable LruMap<SelectionKey, std::string> selections_{1024};
};

}  // namespace lanes::detail
