#include "lib/runtime_impl.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <lanes/error.hpp>

#include "lib/agreement.hpp"
#include "lib/comm_impl.hpp"
#include "lib/executor.hpp"
#include "lib/host_cpus.hpp"
#include "lib/rules.hpp"
#include "lib/startup_wire.hpp"
#include "lib/wire.hpp"
#include "lib/world_layout.hpp"
#include "topo/topology.hpp"

namespace lanes::detail {

namespace {

// Large on-node messages: single-copy (CMA) moves each byte once, split between the two
// processes, but pins every page; a staged copy moves it twice, through the pair's chunk
// buffers, each side copying at once at memory speed. With a core per process and chunks of
// 64 KiB or more the staged copy is the faster; when processes share cores, the single copy.
bool prefer_cma(bool oversubscribed, const transport::ChannelGeometry& g) {
  return oversubscribed || g.chunk < 64 * 1024;
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

// This process's affinity as a bit string (empty when unknown).
std::string affinity_bits() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return {};
  std::string bits;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const auto byte = static_cast<std::size_t>(cpu / 8);
    if (bits.size() <= byte) bits.resize(byte + 1, '\0');
    bits[byte] = static_cast<char>(static_cast<unsigned char>(bits[byte]) | (1U << (cpu % 8)));
  }
  return bits;
}

std::string read_file(const char* variable, const std::string& path, const char* hint) {
  std::ifstream f(path);
  if (!f)
    throw Error(Errc::invalid_argument,
                std::string(variable) + "='" + path + "' cannot be read" + hint);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace

Runtime RuntimeImpl::start(std::unique_ptr<transport::Bootstrap> bootstrap) {
  std::shared_ptr<RuntimeImpl> impl(new RuntimeImpl());
  try {
    impl->init(std::move(bootstrap));
  } catch (...) {
    impl->finalize();
    throw;
  }
  return Runtime(impl);
}

void RuntimeImpl::open_heap() {
  if (config_.heap_mib == 0) {
    heap_note_ = "off (LANES_HEAP_SIZE=0)";
    return;
  }
  // auto: the host's memory, at most 64 GiB: every process of a node maps every heap of the
  // node, so 256 processes take 16 TiB of each one's address space (of 128 TiB).
  constexpr std::size_t kAutoMax = std::size_t{64} << 30;
  const std::size_t host = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES)) *
                           static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = config_.heap_mib > 0 ? static_cast<std::size_t>(config_.heap_mib) << 20
                                                 : std::min(kAutoMax, host);
  try {
    heap_ = std::make_shared<transport::SharedHeap>(bytes);
  } catch (const Error& e) {
    heap_note_ = std::string("off (") + e.what() + ")";  // allocate() returns ordinary memory
  }
}

RuntimeImpl::~RuntimeImpl() {
  finalize();
}

void RuntimeImpl::init(std::unique_ptr<transport::Bootstrap> bootstrap) {
  bootstrap_ = std::move(bootstrap);
  bootstrap_name_ = bootstrap_->name();
  transport::Bootstrap& boot = *bootstrap_;
  const int rank = boot.rank();
  const int size = boot.size();
  const ExchangeFn over_world = [&boot](const void* m, void* a, std::size_t b) {
    boot.allgather(m, a, b);
  };

  // Each rank's own set-up, whose failure (a bad variable, a rail missing on this node, rank 0's
  // unreadable files, UCX) travels in the first exchange: every rank then fails alike.
  StartupRecord mine;
  mine.failure = attempt([&] {
    config_ = Config::from_environment();
    timeout_s_ = config_.timeout_s;
    open_heap();
    const topo::HostTopology host = topo::discover_host();
    mine.rails = topo::choose_rails(host, config_.rails);
    const transport::Placement placement = boot.placement();
    mine.node_key = placement.node_key;
    mine.host_id = read_host_id();
    mine.launcher_local_rank = placement.local_rank;
    mine.numa = topo::current_numa_node();
    mine.cores = usable_cores();
    mine.cpus = affinity_bits();
    if (rank == 0) {  // rank 0's files rule everywhere: every rank must choose alike
      if (!config_.calibration.empty()) {
        mine.calibration =
            read_file("LANES_CALIBRATION", config_.calibration, " (make one with lanes-calibrate)");
        // A bad file fails early.
        (void)algos::MachineParams::parse(mine.calibration,
                                          "LANES_CALIBRATION file '" + config_.calibration + "'");
      }
      if (!config_.rules.empty()) {
        mine.rules = read_file("LANES_RULES", config_.rules, "");
        (void)Rules::parse(mine.rules, "LANES_RULES file '" + config_.rules + "'");
      }
      mine.rail_weights = config_.rail_weights;
      mine.hierarchy_groups = config_.hierarchy_search ? -1 : config_.hierarchy_groups;
    }
    transport::RailOptions options;
    options.user_ucx_variables = config_.ucx_variables;
    for (const auto& d : mine.rails) options.devices.push_back(d.name);
    options.tls = config_.ucx_tls;
    options.wakeup = true;
    rails_ = std::make_unique<transport::Rails>(options, size);
  });

  const auto all = transport::allgatherv(
      boot, encode_startup_record(mine, rails_ && !mine.failure ? rails_->packed_addresses()
                                                                : std::span<const std::byte>{}));
  std::vector<StartupRecord> records;
  std::vector<std::vector<std::byte>> addresses(static_cast<std::size_t>(size));
  records.reserve(all.size());
  for (int r = 0; r < size; ++r) {
    records.push_back(decode_startup_record(all[static_cast<std::size_t>(r)],
                                            addresses[static_cast<std::size_t>(r)]));
  }
  std::vector<std::optional<Failure>> failures;
  for (const auto& rec : records) failures.push_back(rec.failure);
  throw_if_any_failed(failures, rank, "starting up");
  for (int r = 0; r < size; ++r)
    rails_->set_peer_addresses(r, addresses[static_cast<std::size_t>(r)]);
  machine_ = algos::MachineParams::parse(records.front().calibration);
  rules_ = Rules::parse(records.front().rules);
  // Every rank searches or fixes the groups of hierarchical reduces alike: rank 0's setting.
  config_.hierarchy_search = records.front().hierarchy_groups == -1;
  config_.hierarchy_groups = std::max(0, records.front().hierarchy_groups);
  const int num_rails = static_cast<int>(records.front().rails.size());
  if (!machine_.rails_measured) machine_.rails = num_rails;
  const std::vector<double>& weights = records.front().rail_weights;
  if (!weights.empty()) {  // LANES_RAIL_WEIGHTS: relative rates, the fastest at 1 / beta_rail
    if (weights.size() != static_cast<std::size_t>(num_rails)) {
      throw Error(Errc::invalid_argument,
                  "LANES_RAIL_WEIGHTS gives " + std::to_string(weights.size()) +
                      " weights but there are " + std::to_string(num_rails) +
                      " rails: give one weight per rail, in the order of LANES_RAILS");
    }
    const double fastest = *std::max_element(weights.begin(), weights.end());
    machine_.rail_rates.clear();
    for (const double w : weights) machine_.rail_rates.push_back(w / fastest / machine_.beta_rail);
  }
  // From the same records every rank builds the same layout, or throws the same error.
  algos::Layout layout = build_world_layout(records, config_.node_size, config_.lanes,
                                            machine_.rail_weights(num_rails));

  // Busy polling starves peers when a host runs more processes than it has cores (emulated
  // nodes on one host count together).
  const HostCpus cpus = host_cpus(records, mine);
  const bool oversubscribed = cpus.oversubscribed();
  host_cores_ = cpus.cores;
  progress_ = config_.progress;
  if (progress_ == ProgressMode::automatic) {
    progress_ = oversubscribed ? ProgressMode::wait : ProgressMode::spin;
  }
  for (const auto& rec : records)
    peers_.push_back(PeerRecord{rec.node_key, rec.launcher_local_rank, rec.numa, rec.cores, {}});
  for (std::size_t r = 0; r < records.size(); ++r) {
    for (const auto& d : records[r].rails) peers_[r].rails.push_back(d.name);
  }

  agree(over_world, size, rank, attempt([&] {
          connect_off_node_peers(layout, rank);
          std::vector<int> identity(static_cast<std::size_t>(size));
          for (int r = 0; r < size; ++r) identity[static_cast<std::size_t>(r)] = r;
          world_ = std::make_shared<CommImpl>(shared_from_this(), std::move(layout), rank,
                                              std::move(identity), 0);
        }),
        "connecting to its peers");
  const auto& lay = world_->layout();
  const int leader =
      lay.node_ranks[static_cast<std::size_t>(lay.node_of[static_cast<std::size_t>(rank)])].front();
  // Every process probes alike (the probe's exchange rounds must match); whether a node uses
  // single-copy transfers is its own choice.
  const bool probe_cma = config_.cma != CmaMode::off;
  const bool want_cma =
      config_.cma == CmaMode::on ||
      (config_.cma == CmaMode::automatic &&
       prefer_cma(oversubscribed, transport::default_geometry(lay.node_size_of(rank))));
  world_->open_node_channels(over_world, size, leader,
                             transport::CopyPolicy{probe_cma, want_cma, config_.cma_slowdown},
                             probe_cma);
  agree(over_world, size, rank, attempt([&] {
          if (config_.cma == CmaMode::on && lay.node_size_of(rank) > 1 && !world_->cma()) {
            throw Error(Errc::transport,
                        "LANES_CMA=1 but process_vm_readv between the processes of this node "
                        "fails: allow it (kernel.yama.ptrace_scope=0, or CAP_SYS_PTRACE in "
                        "containers) or set LANES_CMA=auto");
          }
          rails_->start_background_progress();
        }),
        "finishing its start-up");
  comms_.push_back(world_);
  started_ = true;
  if (config_.info > 0 && rank == 0) std::fprintf(stderr, "%s", describe().c_str());
}

void RuntimeImpl::connect_off_node_peers(const algos::Layout& layout, int rank) {
  // Endpoints to every off-node peer on every rail, up to a budget that keeps a process well
  // within the default limit of 1024 open files (a TCP endpoint may hold two sockets); larger
  // jobs connect on first use.
  constexpr std::size_t kEagerEndpoints = 256;
  std::vector<int> peers;
  for (int r = 0; r < static_cast<int>(layout.node_of.size()); ++r) {
    if (!layout.same_node(r, rank)) peers.push_back(r);
  }
  if (peers.size() * rails_->count() <= kEagerEndpoints) rails_->connect(peers);
}

void RuntimeImpl::track(const std::shared_ptr<CommImpl>& comm) {
  std::erase_if(comms_, [](const std::weak_ptr<CommImpl>& w) { return w.expired(); });
  comms_.push_back(comm);
}

void RuntimeImpl::check_alive() const {
  if (finalized_) {
    throw Error(Errc::finalized,
                "the lanes runtime was finalized: communicators cannot be used after the Runtime "
                "is destroyed or finalize() was called");
  }
}

void RuntimeImpl::activate(std::shared_ptr<Execution> ex) {
  if (!ex->finished()) active_.push_back(std::move(ex));
}

bool RuntimeImpl::progress() {
  bool progressed = rails_->progress() > 0;
  for (std::size_t i = 0; i < active_.size();) {
    Execution& ex = *active_[i];
    bool advanced = false;
    if (!ex.advance(advanced)) {
      progressed |= advanced;
      ++i;
      continue;
    }
    progressed = true;
    if (ex.failed()) ex.comm().revoke(ex.error_code(), ex.error());
    active_[i] = std::move(active_.back());
    active_.pop_back();
  }
  return progressed;
}

bool RuntimeImpl::check_stalled(std::chrono::steady_clock::time_point last_progress) {
  const auto now = std::chrono::steady_clock::now();
  const bool timed_out =
      timeout_s_ > 0 && std::chrono::duration<double>(now - last_progress).count() > timeout_s_;
  for (const auto& ex : active_) {
    ex->check_peers();
    if (timed_out) ex->abort(Errc::timeout, timeout_message());
  }
  return timed_out;
}

void RuntimeImpl::send_control(int world_peer, std::uint64_t tag, std::uint32_t code,
                               std::uint32_t rank) {
  if (!rails_ || rails_->peer_failed(world_peer)) return;
  control_payloads_.push_back({code, rank});
  transport::RailRequest r =
      rails_->send(0, world_peer, tag, control_payloads_.back().data(), sizeof(std::uint32_t) * 2);
  std::string ignored;
  if (r.test(ignored) == transport::XferState::pending) control_sends_.push_back(std::move(r));
}

std::string RuntimeImpl::timeout_message() const {
  if (finalizing_) {
    return "the closing synchronisation waited " +
           std::to_string(static_cast<long long>(timeout_s_)) +
           " s for peers (LANES_FINALIZE_TIMEOUT): a peer failed, stopped or skipped it";
  }
  return "no progress for " + std::to_string(static_cast<long long>(timeout_s_)) +
         " s (LANES_TIMEOUT): a peer may be stuck or not calling the same collective";
}

bool RuntimeImpl::yields_when_idle(bool on_node) const {
  switch (progress_) {
    case ProgressMode::spin:
    case ProgressMode::automatic:
      return false;
    case ProgressMode::yield:
      return true;
    case ProgressMode::wait:  // shared-memory flags cannot wake an fd
      return on_node || std::any_of(active_.begin(), active_.end(),
                                    [](const auto& ex) { return ex->waits_on_node(); });
  }
  return false;
}

void RuntimeImpl::idle(bool on_node, std::chrono::steady_clock::duration idle_for) {
  // Processes that share cores answer each other within a few turns of the scheduler: a waiter
  // that slept on the rails' descriptors at once paid a wake-up on every message of a short
  // call (2 x 2 emulated nodes on 2 cores, allreduce, alltoall and reduce of 4-400 bytes:
  // 0.48-0.97x Open MPI, 1.14-1.65x with this; README, Architecture, Progress). It yields while
  // the wait is young and sleeps only on waits longer than that, those of long messages.
  constexpr auto kYieldBeforeSleep = std::chrono::microseconds(500);
  if (yields_when_idle(on_node)) {
    sched_yield();
  } else if (progress_ == ProgressMode::wait) {
    if (idle_for < kYieldBeforeSleep) {
      sched_yield();
    } else {
      rails_->wait_for_events(10);
    }
  }
}

void RuntimeImpl::wait(Execution& ex) {
  const Entry entry(*this);
  wait_until([&] { return ex.finished(); }, [](bool) {}, false);
  if (ex.failed()) throw Error(ex.error_code(), ex.error());
}

bool RuntimeImpl::test(Execution& ex) {
  const Entry entry(*this);
  if (!ex.finished()) {
    // A program that polls with test() gets the liveness checks and LANES_TIMEOUT as wait()
    // does, counted over polls that follow each other: a poll after a long pause (the program
    // computing) starts the count anew, since nothing progresses lanes between its calls.
    using clock = std::chrono::steady_clock;
    const auto now = clock::now();
    const bool moved = progress();
    if (moved || now - test_.last_call > std::chrono::milliseconds(100)) {
      test_.last_progress = now;
    }
    test_.last_call = now;
    if (now >= test_.next_check) {
      test_.next_check = now + std::chrono::milliseconds(100);
      check_stalled(test_.last_progress);
      progress();  // collects what the checks failed
    }
  }
  if (ex.failed()) throw Error(ex.error_code(), ex.error());
  return ex.finished();
}

void RuntimeImpl::finalize() noexcept {
  if (finalized_) return;
  // A last barrier so no peer still waits for data from us when the endpoints close.
  if (started_ && world_ && rails_) {
    // Bounded: a peer that failed, or skipped the barrier after a failure of its own, must not
    // keep this process from closing.
    finalizing_ = true;
    const double bound = config_.finalize_timeout_s;
    if (bound > 0 && (timeout_s_ == 0 || bound < timeout_s_)) timeout_s_ = bound;
    try {
      world_->check_usable();
      const char mine = 0;
      std::vector<char> all(static_cast<std::size_t>(world_->size()));
      world_->exchange(&mine, all.data(), 1);
    } catch (const std::exception& e) {
      if (config_.info > 0) std::fprintf(stderr, "lanes: finalize without barrier: %s\n", e.what());
    }
  }
  for (auto& ex : active_) ex->abort(Errc::finalized, "the runtime was finalized first");
  active_.clear();
  for (auto& w : comms_) {
    if (auto c = w.lock()) c->release();
  }
  comms_.clear();
  control_sends_.clear();  // UCX finishes or drops them with the endpoints
  control_payloads_.clear();
  world_.reset();
  rails_.reset();
  bootstrap_.reset();
  finalized_ = true;
}

}  // namespace lanes::detail
