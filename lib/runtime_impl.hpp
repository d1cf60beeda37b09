// RuntimeImpl: what one process owns for the life of a lanes::Runtime: the configuration, the
// bootstrap, the UCX rails, the world communicator and the progress loop.
#pragma once

#include <sched.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <lanes/error.hpp>
#include <lanes/runtime.hpp>

#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "lib/config.hpp"
#include "lib/rules.hpp"
#include "transport/bootstrap/bootstrap.hpp"
#include "transport/shm/heap.hpp"
#include "transport/ucx/rails.hpp"

namespace lanes::detail {

class CommImpl;
class Execution;

// What rank r told everyone at start-up.
struct PeerRecord {
  std::string node_key;
  int launcher_local_rank = -1;
  int numa = -1;
  int cores = 1;
  std::vector<std::string> rails;
};

class RuntimeImpl : public std::enable_shared_from_this<RuntimeImpl> {
 public:
  static Runtime start(std::unique_ptr<transport::Bootstrap> bootstrap);
  ~RuntimeImpl();

  const Config& config() const { return config_; }
  transport::Rails& rails() { return *rails_; }
  bool finalized() const { return finalized_; }
  const std::string& bootstrap_name() const { return bootstrap_name_; }
  ProgressMode progress_mode() const { return progress_; }
  const algos::MachineParams& machine() const { return machine_; }
  // The CPUs this host's processes of the job may run on together (the same on each of them).
  int host_cores() const { return host_cores_; }
  const Rules& rules() const { return rules_; }
  // This process's shared heap (nullptr: LANES_HEAP_SIZE=0, or it could not be made) and its
  // mappings of its node peers' heaps.
  const std::shared_ptr<transport::SharedHeap>& shared_heap() const { return heap_; }
  std::shared_ptr<transport::PeerHeaps> peer_heaps() const { return peer_heaps_; }
  std::shared_ptr<CommImpl> world() const { return world_; }
  std::string describe() const;       // lib/runtime_describe.cpp
  std::string describe_json() const;  // the same as a JSON document

  // Started executions are progressed together: waiting for one advances all.
  void activate(std::shared_ptr<Execution> ex);
  // One pass over the rails and every active execution; true when anything moved.
  bool progress();
  // Runs until `ex` finished, with the configured progress mode; throws lanes::Error if it failed.
  void wait(Execution& ex);
  // Progresses everything until `finished()` holds. Once idle for a while and every 100 ms
  // after: the active executions' stall checks, then `stalled(timed_out)` (timed_out: LANES_TIMEOUT
  // passed without progress), which may throw. `on_node`: what is awaited is a shared-memory
  // transfer, which an idle wait yields the core for instead of sleeping on the rails.
  template <class Finished, class Stalled>
  void wait_until(Finished&& finished, Stalled&& stalled, bool on_node);
  // Why a wait gave up after LANES_TIMEOUT.
  std::string timeout_message() const;
  // Sends a control message (a revocation: the error's code and the revoking rank) to a world
  // rank on the first rail without waiting; the runtime keeps the request and its payload until
  // finalize. Peers known to have failed are skipped.
  void send_control(int world_peer, std::uint64_t tag, std::uint32_t code, std::uint32_t rank);
  // One progress pass; true when `ex` finished; throws lanes::Error if it failed. Polls that
  // follow each other get wait()'s liveness checks and LANES_TIMEOUT.
  bool test(Execution& ex);

  // Communicator ids: every process keeps the next free id; a split takes the maximum over the
  // parent's members, so an id is never in use by any member.
  std::uint32_t next_comm_id() const { return next_comm_id_; }
  void claim_comm_id(std::uint32_t id) { next_comm_id_ = id + 1; }
  void track(const std::shared_ptr<CommImpl>& comm);

  void finalize() noexcept;
  // Throws lanes::Error(finalized) after finalize().
  void check_alive() const;

  // lanes is not thread-safe: every entry point that touches a runtime's state holds an Entry,
  // and a thread entering while another is inside gets lanes::Error(invalid_argument) before
  // anything happens. Entries nest on one thread.
  class Entry {
   public:
    explicit Entry(RuntimeImpl& rt);
    ~Entry() {
      if (--rt_.entry_depth_ == 0) rt_.inside_.store(std::thread::id(), std::memory_order_release);
    }
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;

   private:
    RuntimeImpl& rt_;
  };

 private:
  RuntimeImpl() = default;
  void init(std::unique_ptr<transport::Bootstrap> bootstrap);
  // Makes this process's shared heap as LANES_HEAP_SIZE says; without one (0, or the kernel
  // refuses) lanes runs on and allocate() returns ordinary memory.
  void open_heap();
  void connect_off_node_peers(const algos::Layout& layout, int rank);
  // Local peers alive? LANES_TIMEOUT passed (returned)? Fails the executions concerned.
  bool check_stalled(std::chrono::steady_clock::time_point last_progress);
  // What a waiting process does when nothing moved (LANES_PROGRESS), idle for that long.
  void idle(bool on_node, std::chrono::steady_clock::duration idle_for);
  // Whether idle() gives the core away with sched_yield (rather than spinning or sleeping on
  // the rails' events).
  bool yields_when_idle(bool on_node) const;
  // "cma", "staged" or "none (alone on node)".
  std::string on_node_copies() const;
  // "N MiB", with a note where node peers do not read it in place, or "off (why)".
  std::string heap_description() const;

  Config config_;
  std::string bootstrap_name_;
  std::unique_ptr<transport::Bootstrap> bootstrap_;
  std::unique_ptr<transport::Rails> rails_;
  std::shared_ptr<CommImpl> world_;
  std::vector<std::weak_ptr<CommImpl>> comms_;
  std::vector<std::shared_ptr<Execution>> active_;
  std::deque<std::array<std::uint32_t, 2>> control_payloads_;  // stable while their sends run
  std::vector<transport::RailRequest> control_sends_;
  std::vector<PeerRecord> peers_;
  ProgressMode progress_ = ProgressMode::spin;
  algos::MachineParams machine_;
  int host_cores_ = 1;
  Rules rules_;
  std::shared_ptr<transport::SharedHeap> heap_;
  std::shared_ptr<transport::PeerHeaps> peer_heaps_ = std::make_shared<transport::PeerHeaps>();
  std::string heap_note_;  // why there is no heap, for describe()
  std::uint32_t next_comm_id_ = 1;
  bool started_ = false;  // init completed: finalize synchronises with the peers
  bool finalizing_ = false;
  double timeout_s_ = 0;  // LANES_TIMEOUT, or the finalize bound while finalizing
  struct TestClock {      // what test() knows of the polls so far
    std::chrono::steady_clock::time_point last_call, last_progress, next_check;
  } test_;
  std::atomic<std::thread::id> inside_{};  // the thread inside lanes, if any (Entry)
  int entry_depth_ = 0;
  bool finalized_ = false;
};

inline RuntimeImpl::Entry::Entry(RuntimeImpl& rt) : rt_(rt) {
  const std::thread::id me = std::this_thread::get_id();
  if (rt.inside_.load(std::memory_order_relaxed) != me) {
    std::thread::id nobody;
    if (!rt.inside_.compare_exchange_strong(nobody, me, std::memory_order_acquire)) {
      throw Error(Errc::invalid_argument,
                  "another thread is inside a lanes call on this runtime: lanes is not "
                  "thread-safe; call it from one thread at a time (MPI_THREAD_SERIALIZED)");
    }
  }
  ++rt.entry_depth_;
}

template <class Finished, class Stalled>
void RuntimeImpl::wait_until(Finished&& finished, Stalled&& stalled, bool on_node) {
  // The clock is read only once the call has been idle for a while: a short call never reads it.
  using clock = std::chrono::steady_clock;
  clock::time_point last_progress, next_check;
  bool clock_started = false;
  unsigned idle_rounds = 0;
  bool progressed = false;  // since the clock was last read
  while (!finished()) {
    if (progress()) {
      idle_rounds = 0;
      progressed = true;
      continue;
    }
    if (++idle_rounds < 64) {
      // Where processes share cores (LANES_PROGRESS=wait, the default where they outnumber
      // them), a waiter gives its core away at once, whatever it waits for: its peer that must
      // send runs sooner (4 processes on 2 cores: alltoall of 4 bytes 5.5 us against 8.3 us
      // after 64 empty passes). Otherwise the first passes spin (LANES_PROGRESS=yield with a
      // core each: yielding at once made lanes-micro's exec/p2-one-node overhead 228-244 ns per
      // call against 35-100).
      if (progress_ == ProgressMode::wait) sched_yield();
      continue;
    }
    const auto now = clock::now();
    if (!clock_started) {
      clock_started = true;
      last_progress = now;
      next_check = now + std::chrono::milliseconds(100);
    } else if (progressed) {
      last_progress = now;
      progressed = false;
    }
    if (now >= next_check) {
      next_check = now + std::chrono::milliseconds(100);
      stalled(check_stalled(last_progress));
      progress();  // collects what the checks failed
      continue;
    }
    idle(on_node, now - last_progress);
  }
}

}  // namespace lanes::detail
