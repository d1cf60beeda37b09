#include "transport/ucx/rails.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <lanes/error.hpp>
#include <sstream>

namespace lanes::transport {

namespace {

void check(ucs_status_t status, const std::string& what) {
  if (status != UCS_OK) {
    throw Error(Errc::transport, what + " failed: " + ucs_error_text(status));
  }
}

// A device with a port number (mlx5_0:1) is an RDMA port; any other is a network interface,
// which UCX drives with its TCP transport.
bool is_network_interface(const std::string& device) {
  return device.find(':') == std::string::npos;
}

// UCX 1.13's TCP transport completes a zero-copy send twice when the socket fails in the middle
// of it (uct_tcp_ep_sendv purges the operation on the error, then completes it again) and aborts
// the process on an assertion: active-message zero-copy (eager and the data of a rendezvous over
// active messages) and PUT zero-copy (a rendezvous over RMA) alike. TCP rails use neither: UCX
// copies each fragment into its socket buffer and reports a failure once. Copied sends of 64 KiB
// (the size of UCX's zero-copy sends and receive buffers) instead of 8 KiB keep them as fast as
// zero-copy: one system call per 64 KiB.
// Every message is sent eagerly (RNDV_THRESH=inf): a rendezvous over TCP sends its control
// messages on the same socket as the bulk data going the other way, so when two processes send
// to each other at once, each one's ready-to-receive waits behind its own data and the two
// directions run one after the other (an alltoall of 4 MB blocks between two emulated nodes took
// 1.4x its eager time). lanes posts its receives when a collective starts, so eager data rarely
// arrives unexpected; when it does, UCX holds it until the receive is posted.
// Each socket's send buffer is 64 KiB (the kernel doubles it), not the kernel's autotuned up to
// 4 MiB: a rail's queue then holds about that much of each flow, and the acknowledgements of the
// data going the other way do not wait behind megabytes of it. On the emulated cluster, whose
// shaping queue holds 20 ms, autotuned buffers filled it whenever two nodes sent to each other:
// the round trip grew to tens of milliseconds and each flow became window-bound: the 4 x 1
// alltoall of 4 MB blocks took 61.3-62.1 ms against 52.3-52.8 ms with 64 KiB (README, what
// the TCP settings cost).
// Settings the user made in the environment win.
void apply_tcp_rail_settings(ucp_config_t* config, const RailOptions& options,
                             const std::string& where) {
  struct Setting {
    const char* key;       // for ucp_config_modify (TCP settings without their prefix)
    const char* variable;  // the user's way to set it
    const char* value;
  };
  static constexpr Setting settings[] = {
      {"ZCOPY_THRESH", "UCX_ZCOPY_THRESH", "inf"},   {"PUT_ENABLE", "UCX_TCP_PUT_ENABLE", "n"},
      {"TX_SEG_SIZE", "UCX_TCP_TX_SEG_SIZE", "64k"}, {"RNDV_THRESH", "UCX_RNDV_THRESH", "inf"},
      {"SNDBUF", "UCX_TCP_SNDBUF", "64k"},
  };
  for (const Setting& s : settings) {
    if (std::ranges::find(options.user_ucx_variables, s.variable) !=
        options.user_ucx_variables.end()) {
      continue;
    }
    check(ucp_config_modify(config, s.key, s.value),
          std::string("setting ") + s.key + "=" + s.value + where);
  }
}

// Adds `fd` to the epoll set `epoll_fd`, readable events only.
void watch(int epoll_fd, int fd, const std::string& what) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    throw Error(Errc::resource, "epoll_ctl failed for " + what);
  }
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof v);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
RailRequest& RailRequest::operator=(RailRequest&& o) noexcept {
  if (this != &o) {
    release();
    req_ = o.req_;
    worker_ = o.worker_;
    rail_ = o.rail_;
    rails_ = o.rails_;
    peer_ = o.peer_;
    is_recv_ = o.is_recv_;
    expected_ = o.expected_;
    state_ = o.state_;
    status_ = o.status_;
    size_mismatch_ = o.size_mismatch_;
    counted_ = o.counted_;
    o.req_ = nullptr;
  }
  return *this;
}

bool RailRequest::cancel() {
  if (req_ == nullptr) return false;
  std::unique_lock<std::mutex> lock;
  if (rails_ != nullptr) lock = rails_->use();
  if (ucp_request_check_status(req_) != UCS_INPROGRESS) return false;
  if (is_recv_) ucp_request_cancel(worker_, req_);
  return true;
}

void RailRequest::release() noexcept {
  if (req_ == nullptr) return;
  std::unique_lock<std::mutex> lock;
  if (rails_ != nullptr) lock = rails_->use();
  if (is_recv_ && ucp_request_check_status(req_) == UCS_INPROGRESS) {
    ucp_request_cancel(worker_, req_);
  }
  forget();  // UCX releases a still-running request when it completes
}

std::string RailRequest::truncated_text() const {
  return "received a larger message than the " + std::to_string(expected_) +
         " bytes expected (do all ranks pass the same sizes? LANES_CHECK=1 tells)";
}

bool RailRequest::peer_lost() const {
  return rails_ != nullptr && peer_ >= 0 && rails_->failed(peer_);
}

void RailRequest::forget() noexcept {
  ucp_request_free(req_);
  req_ = nullptr;
  if (rails_ != nullptr && counted_) {
    --rails_->rails_[rail_].in_flight;
    --rails_->in_flight_;
  }
}

XferState RailRequest::test(std::string& error) {
  std::unique_lock<std::mutex> lock;
  if (rails_ != nullptr) lock = rails_->use();
  if (state_ != XferState::pending) {
    if (state_ == XferState::failed) {
      error = peer_lost()                            ? rails_->failure_text(peer_)
              : status_ == UCS_ERR_MESSAGE_TRUNCATED ? truncated_text()
              : status_ == UCS_ERR_NO_DEVICE         ? rails_->missing_rail_text(peer_, rail_)
                                                     : ucs_error_text(status_);
    }
    return state_;
  }
  ucs_status_t st = UCS_OK;
  std::size_t received = expected_;
  if (req_ != nullptr) {
    if (is_recv_) {
      ucp_tag_recv_info_t info{};
      st = ucp_tag_recv_request_test(req_, &info);
      received = info.length;
    } else {
      st = ucp_request_check_status(req_);
    }
    if (st == UCS_INPROGRESS) {
      if (peer_lost()) {
        error = rails_->failure_text(peer_);
        state_ = XferState::failed;
        status_ = UCS_ERR_CONNECTION_RESET;
        lock.unlock();
        release();
        return state_;
      }
      return XferState::pending;
    }
    forget();
  }
  status_ = st;
  if (st != UCS_OK) {
    state_ = XferState::failed;
    size_mismatch_ = st == UCS_ERR_MESSAGE_TRUNCATED;
    error = st == UCS_ERR_MESSAGE_TRUNCATED ? truncated_text() : ucs_error_text(st);
    if (peer_lost()) error = rails_->failure_text(peer_);
    return state_;
  }
  if (is_recv_ && received != expected_) {
    state_ = XferState::failed;
    size_mismatch_ = true;
    error = "received " + std::to_string(received) + " bytes where " + std::to_string(expected_) +
            " were expected (do all ranks pass the same sizes? LANES_CHECK=1 tells)";
    return state_;
  }
  state_ = XferState::done;
  return state_;
}

// ---------------------------------------------------------------------------------------------
Rails::Rails(const RailOptions& options, int world_size)
    : world_size_(world_size),
      peer_addresses_(static_cast<std::size_t>(world_size)),
      failed_(static_cast<std::size_t>(world_size), 0),
      failure_text_(static_cast<std::size_t>(world_size)) {
  if (options.wakeup) {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0) throw Error(Errc::resource, "epoll_create1 failed");
    helper_done_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (helper_done_fd_ < 0) throw Error(Errc::resource, "eventfd failed");
    watch(epoll_fd_, helper_done_fd_, "the background progress's completion descriptor");
  }
  rails_.reserve(options.devices.size());
  for (const std::string& dev : options.devices) {
    Rail rail;
    rail.device = dev;
    ucp_config_t* raw = nullptr;
    check(ucp_config_read(nullptr, nullptr, &raw), "ucp_config_read");
    UcpConfig config(raw);
    const std::string where = " for rail " + dev;
    check(ucp_config_modify(config.get(), "NET_DEVICES", dev.c_str()),
          "setting NET_DEVICES" + where);
    check(ucp_config_modify(config.get(), "TLS", options.tls.c_str()),
          "setting TLS=" + options.tls + where + " (check LANES_UCX_TLS)");
    check(ucp_config_modify(config.get(), "MAX_RNDV_RAILS", "1"), "setting MAX_RNDV_RAILS");
    check(ucp_config_modify(config.get(), "MAX_EAGER_RAILS", "1"), "setting MAX_EAGER_RAILS");
    if (is_network_interface(dev)) apply_tcp_rail_settings(config.get(), options, where);

    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | (options.wakeup ? UCP_FEATURE_WAKEUP : 0);
    ucp_context_h ctx = nullptr;
    ucs_status_t st = ucp_init(&params, config.get(), &ctx);
    if (st != UCS_OK) {
      throw Error(Errc::transport, "UCX cannot open rail device '" + dev + "' with transports '" +
                                       options.tls + "': " + ucs_error_text(st) +
                                       ". Check LANES_RAILS (ucx_info -d lists UCX's devices).");
    }
    rail.context.reset(ctx);

    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    // Serialized: the application's thread and the background progress thread both use the
    // worker, never at once (every UCX call holds the rails' lock).
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    ucp_worker_h worker = nullptr;
    check(ucp_worker_create(rail.context.get(), &wp, &worker), "ucp_worker_create" + where);
    rail.worker.reset(worker);

    ucp_worker_attr_t attr{};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS | UCP_WORKER_ATTR_FIELD_ADDRESS_FLAGS;
    attr.address_flags = UCP_WORKER_ADDRESS_FLAG_NET_ONLY;
    check(ucp_worker_query(worker, &attr), "ucp_worker_query" + where);
    const auto* a = reinterpret_cast<const std::byte*>(attr.address);
    rail.address.assign(a, a + attr.address_length);
    ucp_worker_release_address(worker, attr.address);

    if (options.wakeup) {
      check(ucp_worker_get_efd(worker, &rail.event_fd), "ucp_worker_get_efd" + where);
      watch(epoll_fd_, rail.event_fd, "the worker's event descriptor" + where);
    }
    rails_.push_back(std::move(rail));
  }
  endpoints_.resize(rails_.size());
  for (auto& per_rail : endpoints_) per_rail.resize(static_cast<std::size_t>(world_size));
}

Rails::~Rails() {
  stop_background_progress();
  disconnect();
  rails_.clear();  // workers before contexts: member order inside Rail handles that
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
  if (helper_done_fd_ >= 0) ::close(helper_done_fd_);
}

void Rails::disconnect() {
  const auto lock = use();
  for (auto& per_rail : endpoints_) {
    for (auto& slot : per_rail) slot.ep.close();
  }
}

std::string Rails::transports(std::size_t rail) const {
  // ucp_context_print_info lists the resources the context kept; keep the transport lines.
  const auto lock = use();
  char* text = nullptr;
  std::size_t len = 0;
  FILE* f = open_memstream(&text, &len);
  if (f == nullptr) return "?";
  ucp_context_print_info(rails_[rail].context.get(), f);
  std::fclose(f);
  std::istringstream in(std::string(text, len));
  std::free(text);
  std::string line, out;
  while (std::getline(in, line)) {
    // lines look like "#     resource 1  :  md 0  dev 0  flags -- tcp/lo"
    const auto pos = line.find("flags -- ");
    if (line.find("resource") != std::string::npos && pos != std::string::npos) {
      if (!out.empty()) out += ",";
      out += line.substr(pos + 9);
    }
  }
  return out.empty() ? "?" : out;
}

std::vector<std::byte> Rails::packed_addresses() const {
  std::vector<std::byte> out;
  put_u32(out, static_cast<std::uint32_t>(rails_.size()));
  for (const Rail& r : rails_) {
    put_u32(out, static_cast<std::uint32_t>(r.address.size()));
    out.insert(out.end(), r.address.begin(), r.address.end());
  }
  return out;
}

void Rails::set_peer_addresses(int peer, std::span<const std::byte> packed) {
  // Parsed here, when they arrive, so that nothing on the progress path can find them malformed.
  std::vector<std::vector<std::byte>> addresses;
  std::size_t off = 0;
  const auto get_u32 = [&] {
    std::uint32_t v = 0;
    if (off + sizeof v > packed.size()) {
      throw Error(Errc::internal, "malformed worker address of rank " + std::to_string(peer));
    }
    std::memcpy(&v, packed.data() + off, sizeof v);
    off += sizeof v;
    return v;
  };
  const std::uint32_t n = get_u32();
  for (std::uint32_t r = 0; r < n; ++r) {
    const std::uint32_t len = get_u32();
    if (len > packed.size() - off) {
      throw Error(Errc::internal, "malformed worker address of rank " + std::to_string(peer));
    }
    addresses.emplace_back(packed.begin() + static_cast<std::ptrdiff_t>(off),
                           packed.begin() + static_cast<std::ptrdiff_t>(off + len));
    off += len;
  }
  // Every process sees every other's count, so when they differ all of them throw here.
  if (n != rails_.size()) {
    throw Error(Errc::topology, "rank " + std::to_string(peer) + " opened " + std::to_string(n) +
                                    " rails and this process " + std::to_string(rails_.size()) +
                                    ": every process must open the same rails (LANES_RAILS)");
  }
  const auto lock = use();
  peer_addresses_.at(static_cast<std::size_t>(peer)) = std::move(addresses);
}

std::string Rails::missing_rail_text(int peer, std::size_t rail) const {
  return "no address of rank " + std::to_string(peer) + " for rail " + std::to_string(rail);
}

ucp_ep_h Rails::endpoint(std::size_t rail, int peer) {
  EndpointSlot& slot = endpoints_[rail][static_cast<std::size_t>(peer)];
  if (slot.ep) return slot.ep.get();
  const auto& theirs = peer_addresses_[static_cast<std::size_t>(peer)];
  if (rail >= theirs.size()) return nullptr;  // post() fails the transfer (missing_rail_text)
  slot.arg = std::make_unique<ErrorArg>(ErrorArg{this, peer, rail});
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                  UCP_EP_PARAM_FIELD_ERR_HANDLER;
  ep.address = reinterpret_cast<const ucp_address_t*>(theirs[rail].data());
  ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  ep.err_handler.cb = &Rails::on_endpoint_error;
  ep.err_handler.arg = slot.arg.get();
  ucp_ep_h handle = nullptr;
  const ucs_status_t st = ucp_ep_create(rails_[rail].worker.get(), &ep, &handle);
  if (st != UCS_OK) {
    failed_[static_cast<std::size_t>(peer)] = 1;
    failure_text_[static_cast<std::size_t>(peer)] =
        "cannot connect to rank " + std::to_string(peer) + " on rail " + rails_[rail].device +
        " (" + ucs_error_text(st) + "): the peer process died or is unreachable";
    return nullptr;
  }
  slot.ep = UcpEndpoint(rails_[rail].worker.get(), handle);
  return handle;
}

void Rails::on_endpoint_error(void* arg, ucp_ep_h /*ep*/, ucs_status_t status) {
  auto* a = static_cast<ErrorArg*>(arg);
  const auto peer = static_cast<std::size_t>(a->peer);
  if (a->self->failed_[peer] == 0) {
    a->self->failed_[peer] = 1;
    a->self->failure_text_[peer] = "connection to rank " + std::to_string(a->peer) + " on rail " +
                                   a->self->rails_[a->rail].device + " failed (" +
                                   ucs_error_text(status) + "): the peer process died or hangs";
  }
}

void Rails::connect(std::span<const int> peers) {
  const auto lock = use();
  for (std::size_t rail = 0; rail < rails_.size(); ++rail) {
    for (const int peer : peers) {
      if (!failed(peer)) (void)endpoint(rail, peer);
    }
  }
}

bool Rails::peer_failed(int peer) const {
  const auto lock = use();
  return failed(peer);
}

std::string Rails::peer_failure(int peer) const {
  const auto lock = use();
  return failure_text(peer);
}

RailRequest Rails::post(bool is_recv, std::size_t rail, int peer, std::uint64_t tag, void* data,
                        std::size_t bytes) {
  RailRequest r;
  r.rails_ = this;
  r.peer_ = peer;
  r.is_recv_ = is_recv;
  r.worker_ = rails_[rail].worker.get();
  r.rail_ = rail;
  r.expected_ = bytes;
  const auto lock = use();
  // Receives need an endpoint too: the sender's death reaches us through its error callback.
  ucp_ep_h ep = failed(peer) ? nullptr : endpoint(rail, peer);
  if (ep == nullptr) {
    r.state_ = XferState::failed;
    r.status_ = failed(peer) ? UCS_ERR_UNREACHABLE : UCS_ERR_NO_DEVICE;
    return r;
  }
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(1);
  // A receive always returns a request, even when its message was there already, so that
  // test() learns the message's length from it (a smaller message is a mismatch too).
  if (is_recv) param.op_attr_mask |= UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
  void* req = is_recv ? ucp_tag_recv_nbx(r.worker_, data, bytes, tag, ~std::uint64_t{0}, &param)
                      : ucp_tag_send_nbx(ep, data, bytes, tag, &param);
  if (UCS_PTR_IS_ERR(req)) {
    r.state_ = XferState::failed;
    r.status_ = UCS_PTR_STATUS(req);
    r.size_mismatch_ = r.status_ == UCS_ERR_MESSAGE_TRUNCATED;
  } else if (req == nullptr) {
    r.state_ = XferState::done;  // completed in place
  } else {
    r.req_ = req;
    ++rails_[rail].in_flight;
    ++in_flight_;
  }
  return r;
}

RailRequest Rails::recv_any(std::size_t rail, std::uint64_t tag, std::uint64_t ignore, void* data,
                            std::size_t bytes) {
  RailRequest r;
  r.rails_ = this;
  r.is_recv_ = true;
  r.worker_ = rails_[rail].worker.get();
  r.rail_ = rail;
  r.expected_ = bytes;
  const auto lock = use();
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  param.datatype = ucp_dt_make_contig(1);
  void* req = ucp_tag_recv_nbx(r.worker_, data, bytes, tag, ~ignore, &param);
  if (UCS_PTR_IS_ERR(req)) {
    r.state_ = XferState::failed;
    r.status_ = UCS_PTR_STATUS(req);
    r.size_mismatch_ = r.status_ == UCS_ERR_MESSAGE_TRUNCATED;
  } else if (req == nullptr) {
    r.state_ = XferState::done;
  } else {
    r.req_ = req;  // not counted in flight: a standing receive, found by the sweeps
    r.counted_ = false;
  }
  return r;
}

RailRequest Rails::send(std::size_t rail, int peer, std::uint64_t tag, const void* data,
                        std::size_t bytes) {
  return post(false, rail, peer, tag, const_cast<void*>(data), bytes);
}

RailRequest Rails::recv(std::size_t rail, int peer, std::uint64_t tag, void* data,
                        std::size_t bytes) {
  return post(true, rail, peer, tag, data, bytes);
}

unsigned Rails::progress() {
  const bool sweep = (++progress_calls_ & 31U) == 0;
  if (!sweep && in_flight_ == 0) return 0;  // no lock, no clock: on-node calls poll this often
  const auto lock = use();
  unsigned n = 0;
  for (Rail& r : rails_) {
    if (sweep || r.in_flight > 0) n += ucp_worker_progress(r.worker.get());
  }
  return n;
}

unsigned Rails::progress_locked() {
  unsigned n = 0;
  for (Rail& r : rails_) n += ucp_worker_progress(r.worker.get());
  return n;
}

void Rails::wait_for_events(int timeout_ms) {
  if (epoll_fd_ < 0 || rails_.empty()) return;
  {
    const auto lock = use();
    for (Rail& r : rails_) {
      if (ucp_worker_arm(r.worker.get()) == UCS_ERR_BUSY) return;  // events pending: progress
    }
    // The application's own wait counts as use: the helper thread stays off the workers until
    // it ends, so it neither takes the wake-up nor completes requests behind the sleeper's back.
    last_use_ns_.store(now_ns() + std::int64_t{timeout_ms} * 1'000'000, std::memory_order_relaxed);
  }
  epoll_event ev[8];
  (void)epoll_wait(epoll_fd_, ev, 8, timeout_ms);
  last_use_ns_.store(now_ns(), std::memory_order_relaxed);
  std::uint64_t drained = 0;
  (void)!::read(helper_done_fd_, &drained, sizeof drained);
}

std::unique_lock<std::mutex> Rails::use() const {
  std::unique_lock lock(mutex_);
  last_use_ns_.store(now_ns(), std::memory_order_relaxed);
  return lock;
}

void Rails::start_background_progress() {
  if (epoll_fd_ < 0 || helper_.joinable()) return;
  // The helper sleeps on an epoll set of its own. Waiters on one epoll set are woken one at a
  // time (the kernel queues them exclusively): sharing the application's set, the helper took
  // wake-ups meant for the application, which slept out its timeout while a peer's TCP flow
  // waited for it to read (stalls of 10 ms, ended by the peer's tail-loss probe). 2 x 2
  // emulated nodes, allreduce and alltoall of 4 MB blocks, six algorithms on 1 and 2 lanes:
  // repetitions over 1.15x their variant's median, 24, 9 and 19 of 240 with the shared set,
  // 8, 8 and 6 with this, runs alternating.
  helper_epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (helper_epoll_fd_ < 0) throw Error(Errc::resource, "epoll_create1 failed");
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) throw Error(Errc::resource, "eventfd failed");
  watch(helper_epoll_fd_, wake_fd_, "the progress thread's wake-up descriptor");
  for (const Rail& r : rails_) {
    watch(helper_epoll_fd_, r.event_fd, "the worker's event descriptor for rail " + r.device);
  }
  helper_ = std::thread([this] { background_progress(); });
}

void Rails::background_progress() {
  constexpr std::int64_t kIdleNs = 1'000'000;  // the application is outside lanes after 1 ms
  while (!stop_.load()) {
    const std::int64_t idle = now_ns() - last_use_ns_.load(std::memory_order_relaxed);
    if (idle < kIdleNs) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(kIdleNs - idle));
      continue;
    }
    {
      // Not use(): this is no use by the application. A bounded burst, so that an application
      // that comes back finds the lock free soon even while messages keep arriving.
      const std::lock_guard lock(mutex_);
      unsigned events = 0;
      for (int i = 0; i < 64; ++i) {
        const unsigned n = progress_locked();
        if (n == 0) break;
        events += n;
      }
      if (events > 0) {  // requests may have completed: wake an application asleep on them
        const std::uint64_t one = 1;
        (void)!::write(helper_done_fd_, &one, sizeof one);
      }
      bool armed = true;
      for (Rail& r : rails_) {
        if (ucp_worker_arm(r.worker.get()) == UCS_ERR_BUSY) armed = false;
      }
      if (!armed) continue;  // events arrived meanwhile: progress them first
    }
    epoll_event ev[8];
    (void)epoll_wait(helper_epoll_fd_, ev, 8, -1);  // a UCX event, or the wake-up to stop
  }
}

void Rails::stop_background_progress() noexcept {
  if (!helper_.joinable()) return;
  stop_.store(true);
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  helper_.join();
  ::close(wake_fd_);
  wake_fd_ = -1;
  ::close(helper_epoll_fd_);
  helper_epoll_fd_ = -1;
}

}  // namespace lanes::transport
