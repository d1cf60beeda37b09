// The UCX rails of one process: per rail (NIC) its own ucp_context restricted to that device
// (NET_DEVICES=<dev>, network transports only, MAX_RNDV_RAILS=1 so UCX never stripes under the
// lane algorithms) and its own worker. Endpoints per (peer, rail) are created on first use with
// peer error handling, so a dead peer fails operations instead of hanging them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "transport/ucx/handles.hpp"
#include "transport/xfer.hpp"

namespace lanes::transport {

struct RailOptions {
  std::vector<std::string> devices;  // one rail per entry, in lane order
  std::string tls = "^sm";           // UCX transports for rails: never shared memory
  bool wakeup = true;  // UCP_FEATURE_WAKEUP: the event-driven progress mode, background progress
  // UCX variables the user set in the environment (UCX_ZCOPY_THRESH, ...): the settings lanes
  // makes for TCP rails leave those alone.
  std::vector<std::string> user_ucx_variables;
};

class Rails;

// One posted UCX tag send or receive. Movable; releasing a pending one cancels it (receive) or
// lets UCX release it on completion (send).
class RailRequest {
 public:
  RailRequest() = default;
  RailRequest(RailRequest&& o) noexcept { *this = std::move(o); }
  RailRequest& operator=(RailRequest&& o) noexcept;
  RailRequest(const RailRequest&) = delete;
  RailRequest& operator=(const RailRequest&) = delete;
  ~RailRequest() { release(); }

  // Polls (does not progress the worker). On failure `error` says why.
  XferState test(std::string& error);
  // After a failure: the message's size was not the one expected.
  bool size_mismatch() const { return size_mismatch_; }
  // Posted at all (not default-constructed).
  bool armed() const { return rails_ != nullptr; }
  // Asks UCX to cancel a pending receive; true if it was pending. A receive whose message was
  // matched already goes on until it is complete, and a send cannot be cancelled (UCX packs
  // its buffer into the socket as the socket drains): for a send, true if it is still in
  // progress. Either way, test() it (progressing the worker) until it is not pending before
  // its buffer may go away.
  bool cancel();

 private:
  friend class Rails;
  void release() noexcept;
  void forget() noexcept;  // frees req_ (done or left to UCX) and counts it off its rail
  bool peer_lost() const;  // the peer (if a single one) failed; with the rails' lock held
  std::string truncated_text() const;
  void* req_ = nullptr;  // UCX request, nullptr once completed and freed
  ucp_worker_h worker_ = nullptr;
  std::size_t rail_ = 0;
  Rails* rails_ = nullptr;
  int peer_ = -1;
  bool is_recv_ = false;
  std::size_t expected_ = 0;
  XferState state_ = XferState::pending;
  ucs_status_t status_ = UCS_OK;
  bool size_mismatch_ = false;
  bool counted_ = true;  // in its rail's in_flight while req_ is set
};

class Rails {
 public:
  // Creates one context and worker per device. Throws lanes::Error(transport) naming the
  // device when UCX refuses it.
  Rails(const RailOptions& options, int world_size);
  ~Rails();
  Rails(const Rails&) = delete;
  Rails& operator=(const Rails&) = delete;

  std::size_t count() const { return rails_.size(); }
  const std::string& device(std::size_t rail) const { return rails_[rail].device; }
  // The transports UCX picked for a rail, e.g. "tcp/lo" (for lanes-info).
  std::string transports(std::size_t rail) const;

  // This process's worker addresses for every rail (network-only addresses), packed.
  std::vector<std::byte> packed_addresses() const;
  // Parses and remembers a peer's packed addresses (endpoints are created on first use). Throws
  // when they are malformed or name another number of rails than this process opened.
  void set_peer_addresses(int peer, std::span<const std::byte> packed);

  // Creates the endpoints to `peers` on every rail now instead of on first use, so that UCX
  // wires them up at the next progress, while every process is still alive (UCX 1.13's TCP
  // connection manager can abort a process whose peer dies while a connection to it is being
  // set up). Nonblocking: no message is exchanged here.
  void connect(std::span<const int> peers);

  // Nonblocking tagged transfers on rail `rail` with world rank `peer`. Receives also make sure
  // an endpoint to the sender exists, so the sender's death is noticed.
  RailRequest send(std::size_t rail, int peer, std::uint64_t tag, const void* data,
                   std::size_t bytes);
  RailRequest recv(std::size_t rail, int peer, std::uint64_t tag, void* data, std::size_t bytes);
  // A receive of a message from any peer whose tag matches `tag` outside the `ignore` bits.
  RailRequest recv_any(std::size_t rail, std::uint64_t tag, std::uint64_t ignore, void* data,
                       std::size_t bytes);

  // Progresses the workers of the rails with requests in flight, and every 32nd call all of
  // them (for messages that arrive before their receive, and UCX's own housekeeping); returns
  // the number of events handled.
  unsigned progress();
  // Sleeps until a worker has an event or `timeout_ms` passes. Needs wakeup.
  void wait_for_events(int timeout_ms);

  bool peer_failed(int peer) const;
  std::string peer_failure(int peer) const;

  // Closes every endpoint (call after a final synchronisation).
  void disconnect();

  // Progress while the application is outside lanes. UCX completes a copied send once its
  // bytes are in UCX's own send buffer, and TCP writes them to the socket only as the worker is
  // progressed; a process that has finished its part of a collective and then waits elsewhere
  // (in MPI, in a computation) would hold the tail of a message its peer waits for. A helper
  // thread progresses the workers whenever no lanes call has used the rails for a millisecond,
  // and sleeps on the workers' event descriptors in between. Needs wakeup. Every other member
  // function takes the same lock, so UCX is never entered by two threads at once.
  void start_background_progress();

 private:
  friend class RailRequest;
  struct Rail {
    std::string device;
    UcpContext context;
    UcpWorker worker;
    std::vector<std::byte> address;
    int event_fd = -1;
    std::size_t in_flight = 0;  // UCX requests of this rail not yet completed and freed
  };
  struct ErrorArg {
    Rails* self;
    int peer;
    std::size_t rail;
  };
  static void on_endpoint_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  // The lock every UCX call holds; taken by the application's calls, it also records the use.
  std::unique_lock<std::mutex> use() const;
  bool failed(int peer) const { return failed_[static_cast<std::size_t>(peer)] != 0; }
  std::string missing_rail_text(int peer, std::size_t rail) const;
  std::string failure_text(int peer) const { return failure_text_[static_cast<std::size_t>(peer)]; }
  unsigned progress_locked();
  void background_progress();
  void stop_background_progress() noexcept;
  RailRequest post(bool is_recv, std::size_t rail, int peer, std::uint64_t tag, void* data,
                   std::size_t bytes);
  ucp_ep_h endpoint(std::size_t rail, int peer);

  std::vector<Rail> rails_;
  int world_size_ = 0;
  // Both only change in the application's calls (under the lock) and are read there: the
  // helper thread of background progress never touches them.
  unsigned progress_calls_ = 0;
  std::size_t in_flight_ = 0;  // over all rails
  struct EndpointSlot {
    std::unique_ptr<ErrorArg> arg;  // stable address handed to UCX's error callback
    UcpEndpoint ep;                 // declared last: closed before `arg` is released
  };
  std::vector<std::vector<std::vector<std::byte>>> peer_addresses_;  // [peer][rail]
  std::vector<std::vector<EndpointSlot>> endpoints_;                 // [rail][peer]
  std::vector<char> failed_;                                         // per peer
  // Background progress: the lock every UCX call holds, when the application last used the
  // rails, the helper thread and the descriptor that wakes it to stop.
  mutable std::mutex mutex_;
  mutable std::atomic<std::int64_t> last_use_ns_{0};
  std::atomic<bool> stop_{false};
  int wake_fd_ = -1;
  int helper_epoll_fd_ = -1;  // the helper's own set: the workers' descriptors and wake_fd_
  // Written by the helper when its progress handled events, read by wait_for_events: an
  // application asleep there wakes for requests the helper completed.
  int helper_done_fd_ = -1;
  std::thread helper_;
  std::vector<std::string> failure_text_;  // per peer
  int epoll_fd_ = -1;
};

}  // namespace lanes::transport
