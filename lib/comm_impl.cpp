#include "lib/comm_impl.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <lanes/error.hpp>

#include "algos/common.hpp"
#include "algos/cost_model.hpp"
#include "algos/registry.hpp"
#include "lib/agreement.hpp"
#include "lib/executor.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes::detail {

using algos::Collective;

CommImpl::CommImpl(std::shared_ptr<RuntimeImpl> runtime, algos::Layout layout, int rank,
                   std::vector<int> world_rank_of, std::uint32_t id)
    : runtime_(std::move(runtime)),
      layout_(std::move(layout)),
      rank_(rank),
      world_rank_of_(std::move(world_rank_of)),
      id_(id) {
  const auto n = static_cast<std::size_t>(layout_.node_size_of(rank_));
  node_sent_.assign(n, 0);
  node_recvd_.assign(n, 0);
}

// ---------------------------------------------------------------------------------------------
// Node shared memory: the node's first rank creates the segment and lays out the channels; the
// name travels through `exchange`; everyone maps it and says so; then every local rank removes
// the name (or removes it when the set-up fails), so nothing stays in /dev/shm whatever happens
// later, even when the first rank dies in between.
void CommImpl::open_node_channels(const ExchangeFn& exchange, int exchange_size,
                                  int exchange_rank_of_leader, transport::CopyPolicy policy,
                                  bool probe_cma) {
  const int n = layout_.node_size_of(rank_);
  const bool shared = n > 1;
  const bool leader = shared && local_rank() == 0;
  const transport::ChannelGeometry geometry = transport::default_geometry(n);
  const std::size_t bytes = transport::channel_segment_bytes(geometry);
  copy_policy_ = policy;
  const auto size = static_cast<std::size_t>(exchange_size);

  // Every round carries each member's outcome: a leader that cannot create its segment (a full
  // /dev/shm) or a member that cannot attach makes every member throw, none waits.
  char mine[kOutcomeBytes];
  std::optional<Failure> failure = attempt([&] {
    if (!leader) return;
    channels_ = std::make_unique<transport::NodeChannels>(transport::ShmSegment::create(bytes), 0,
                                                          geometry, true, policy);
  });
  put_outcome(mine, failure, channels_ ? channels_->name() : std::string());
  std::vector<char> names(kOutcomeBytes * size);
  exchange(mine, names.data(), kOutcomeBytes);
  throw_if_any_failed(names.data(), exchange_size, -1, "creating its node's shared-memory segment");
  failure = attempt([&] {
    if (shared && !leader) {
      const std::string name =
          payload_of(&names[kOutcomeBytes * static_cast<std::size_t>(exchange_rank_of_leader)]);
      channels_ = std::make_unique<transport::NodeChannels>(
          transport::ShmSegment::attach(name, bytes), local_rank(), geometry, false, policy);
    }
    if (channels_) channels_->publish_self();
  });
  put_outcome(mine, failure);
  try {
    exchange(mine, names.data(), kOutcomeBytes);
    throw_if_any_failed(names.data(), exchange_size, -1,
                        "attaching its node's shared-memory segment");
  } catch (...) {
    if (channels_) channels_->unlink();  // a peer failed in the set-up: leave /dev/shm clean
    throw;
  }
  // Every local rank removes the name (the first one does it): one that dies here does not
  // leave the segment behind.
  if (channels_) {
    channels_->unlink();
    channels_->fix_peers();
  }
  if (probe_cma) {
    char dummy = 0;
    std::vector<char> sink(size);
    if (channels_) channels_->probe_cma();
    exchange(&dummy, sink.data(), 1);
  }
  arm_revocation();
}

std::uint64_t CommImpl::claim_node_sends(int local_peer, std::uint32_t count) {
  auto& c = node_sent_[static_cast<std::size_t>(local_peer)];
  const std::uint64_t base = c;
  c += count;
  return base;
}

std::uint64_t CommImpl::claim_node_recvs(int local_peer, std::uint32_t count) {
  auto& c = node_recvd_[static_cast<std::size_t>(local_peer)];
  const std::uint64_t base = c;
  c += count;
  return base;
}

void CommImpl::revoke(Errc code, const std::string& why) {
  if (!broken_.empty()) return;  // told already, or learnt from the member that failed first
  broken_ = why;
  broken_code_ = code;
  if (channels_)
    channels_->revoke(static_cast<std::uint32_t>(code), static_cast<std::uint32_t>(rank_));
  if (layout_.num_nodes() == 1) return;
  const std::uint64_t tag = transport::make_control_tag(id_, static_cast<std::uint32_t>(rank_));
  for (int r = 0; r < size(); ++r) {
    if (!layout_.same_node(r, rank_)) {
      runtime_->send_control(world_rank(r), tag, static_cast<std::uint32_t>(code),
                             static_cast<std::uint32_t>(rank_));
    }
  }
}

bool CommImpl::revoked_by_peer(Errc& code, std::string& why) {
  std::uint32_t c = 0, by = 0;
  bool seen = channels_ && channels_->revoked(c, by) && static_cast<int>(by) != rank_;
  if (!seen && revocation_in_.armed()) {
    std::string ignored;
    if (revocation_in_.test(ignored) == transport::XferState::done) {
      c = revocation_msg_[0];
      by = revocation_msg_[1];
      seen = true;
      if (channels_) channels_->revoke(c, by);  // this node's members learn it from here
    }
  }
  if (!seen) return false;
  code = static_cast<Errc>(c);
  why = "rank " + std::to_string(by) + " failed a call on this communicator (" + to_string(code) +
        "), which revokes it";
  if (broken_.empty()) {
    broken_ = why;
    broken_code_ = code;
  }
  return true;
}

void CommImpl::arm_revocation() {
  if (layout_.num_nodes() == 1 || revocation_in_.armed()) return;
  revocation_in_ = runtime_->rails().recv_any(0, transport::make_control_tag(id_, 0),
                                              transport::kControlAnySource, revocation_msg_.data(),
                                              sizeof revocation_msg_);
}

void CommImpl::check_usable() const {
  runtime_->check_alive();
  if (!broken_.empty()) {
    throw Error(broken_code_,
                "this communicator is unusable after an earlier failure (" + broken_ + ")");
  }
}

void CommImpl::release() noexcept {
  revocation_in_ = transport::RailRequest();
  spare_.reset();
  channels_.reset();
  call_cache_.clear();
  cache_.clear();
}

// ---------------------------------------------------------------------------------------------
namespace {

// Whether `algo` serves a non-commutative operation on `layout`: it combines in rank order (a
// reduce at least toward root 0: other roots then go through rank 0, reroot_reduce).
bool serves_rank_order(const algos::Algorithm& algo, const algos::Layout& layout) {
  return algo.rank_order != nullptr && algo.rank_order(layout, 0);
}

// The algorithms of `coll` that apply to `layout` and serve a non-commutative operation on it.
std::string rank_order_names(Collective coll, const algos::Layout& layout) {
  std::string names;
  for (const algos::Algorithm* a : algos::algorithms_for(coll)) {
    if ((a->applicable == nullptr || a->applicable(layout)) && serves_rank_order(*a, layout)) {
      names += (names.empty() ? "" : ", ") + std::string(a->name);
    }
  }
  return names.empty() ? "none" : names;
}

}  // namespace

// The cost model's cheapest algorithm that applies to this layout (with `rank_order`, among those
// that combine in rank order). Pure and identical on every rank: same layout, same parameters
// (rank 0's calibration, shared at start-up).
std::string CommImpl::model_choice(Collective coll, std::size_t bytes, const algos::Layout& layout,
                                   const char* fallback, bool rank_order) const {
  // Calls repeat with the same shape: ask the model once per shape.
  const auto key = std::make_tuple(static_cast<int>(coll), bytes, layout.num_lanes, rank_order);
  if (const std::string* known = model_choices_.find(key)) return *known;
  algos::CostInput in;
  in.nodes = layout.num_nodes();
  for (const auto& ranks : layout.node_ranks) {
    in.ppn = std::max<long long>(in.ppn, static_cast<long long>(ranks.size()));
  }
  in.lanes = layout.num_lanes;
  in.bytes = bytes;
  in.regular = layout.regular();
  const auto ranking = algos::predict(coll, in, runtime_->machine());
  std::string chosen = rank_order ? "" : fallback;
  for (const auto& candidate : ranking) {
    const algos::Algorithm* algo = algos::find_algorithm(coll, candidate.algorithm);
    if ((algo->applicable == nullptr || algo->applicable(layout)) &&
        (!rank_order || serves_rank_order(*algo, layout))) {
      chosen = candidate.algorithm;
      break;
    }
  }
  if (chosen.empty()) {
    // Algorithms without a cost formula come last.
    for (const algos::Algorithm* algo : algos::algorithms_for(coll)) {
      if ((algo->applicable == nullptr || algo->applicable(layout)) &&
          serves_rank_order(*algo, layout)) {
        chosen = algo->name;
        break;
      }
    }
  }
  if (chosen.empty()) {
    throw Error(Errc::invalid_argument,
                std::string("no ") + algos::to_string(coll) +
                    " algorithm combines in rank order on " + layout.describe() +
                    ", which a non-commutative user operation needs (algorithms: " +
                    algos::algorithm_names(coll) + ")");
  }
  if (runtime_->config().info > 0 && rank_ == 0) {
    std::string text;
    for (const auto& c : ranking) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s %.3g us", c.algorithm.c_str(), c.seconds * 1e6);
      text += buf;
    }
    std::fprintf(stderr, "lanes: model for %s of %zu bytes on %s:%s; chosen: %s\n",
                 algos::to_string(coll), bytes, layout.describe().c_str(), text.c_str(),
                 chosen.c_str());
  }
  model_choices_.put(key, chosen);
  return chosen;
}

std::string CommImpl::choose_algorithm(Collective coll, std::size_t bytes,
                                       const CallOptions& options, const algos::Layout& layout,
                                       bool rank_order) const {
  const Config& cfg = runtime_->config();
  std::string name = options.algorithm;
  const char* source = "CallOptions::algorithm";
  if (name.empty() || name == "auto") {
    switch (coll) {
      case Collective::bcast:
        name = cfg.bcast_algorithm, source = "LANES_BCAST_ALGORITHM";
        break;
      case Collective::scatter:
        name = cfg.scatter_algorithm, source = "LANES_SCATTER_ALGORITHM";
        break;
      case Collective::alltoall:
        name = cfg.alltoall_algorithm, source = "LANES_ALLTOALL_ALGORITHM";
        break;
      case Collective::allgather:
        name = cfg.allgather_algorithm, source = "LANES_ALLGATHER_ALGORITHM";
        break;
      case Collective::gather:
        name = cfg.gather_algorithm, source = "LANES_GATHER_ALGORITHM";
        break;
      case Collective::reduce:
        name = cfg.reduce_algorithm, source = "LANES_REDUCE_ALGORITHM";
        break;
      case Collective::allreduce:
        name = cfg.allreduce_algorithm, source = "LANES_ALLREDUCE_ALGORITHM";
        break;
      case Collective::barrier:
        name = "auto";
        break;
      case Collective::reduce_scatter_block:
        name = cfg.reduce_scatter_block_algorithm, source = "LANES_REDUCE_SCATTER_BLOCK_ALGORITHM";
        break;
    }
  }
  const char* fallback = coll == Collective::bcast                  ? "binomial"
                         : coll == Collective::scatter              ? "binomial"
                         : coll == Collective::gather               ? "linear"
                         : coll == Collective::alltoall             ? "pairwise"
                         : coll == Collective::reduce               ? "binomial"
                         : coll == Collective::allreduce            ? "recursive-doubling"
                         : coll == Collective::barrier              ? "dissemination"
                         : coll == Collective::reduce_scatter_block ? "ring"
                                                                    : "linear";
  if (name == "auto") {
    // A rule's algorithm that is not in rank order does not serve a non-commutative operation:
    // the model chooses among those that are.
    auto ruled = runtime_->rules().match(coll, bytes, layout.size);
    const algos::Algorithm* rule_algo = ruled ? algos::find_algorithm(coll, *ruled) : nullptr;
    if (ruled && (!rank_order || (rule_algo != nullptr && serves_rank_order(*rule_algo, layout)))) {
      name = *ruled;
      source = "LANES_RULES";
    } else {
      return model_choice(coll, bytes, layout, fallback, rank_order);
    }
  }
  const algos::Algorithm* algo = algos::find_algorithm(coll, name);
  if (algo == nullptr) {
    throw Error(Errc::invalid_argument,
                std::string(source) + "='" + name + "' is not a " + algos::to_string(coll) +
                    " algorithm; available: " + algos::algorithm_names(coll));
  }
  if (algo->applicable != nullptr && !algo->applicable(layout)) {
    const std::string instead =
        rank_order ? model_choice(coll, bytes, layout, fallback, true) : fallback;
    if (runtime_->config().info > 0 && rank_ == 0) {
      std::fprintf(stderr, "lanes: %s '%s' does not apply to %s; using %s\n",
                   algos::to_string(coll), name.c_str(), layout.describe().c_str(),
                   instead.c_str());
    }
    return instead;
  }
  if (rank_order && !serves_rank_order(*algo, layout)) {
    throw Error(Errc::invalid_argument,
                std::string(source) + "='" + name + "': " + algos::to_string(coll) + " " + name +
                    " does not combine in rank order on " + layout.describe() +
                    ", which a non-commutative user operation needs; " + algos::to_string(coll) +
                    " algorithms that do here: " + rank_order_names(coll, layout));
  }
  return name;
}

const algos::Layout& CommImpl::layout_with_lanes(int lanes, int first_rail) {
  if (lanes <= 0) lanes = layout_.num_lanes;
  if (lanes == layout_.num_lanes && first_rail == layout_.first_rail) return layout_;
  if (first_rail < 0 || first_rail >= layout_.num_rails) {
    throw Error(Errc::invalid_argument, "CallOptions::first_rail is " + std::to_string(first_rail) +
                                            " but there are " + std::to_string(layout_.num_rails) +
                                            " rails (valid: 0.." +
                                            std::to_string(layout_.num_rails - 1) + ")");
  }
  if (lanes > algos::kMaxLanes) {
    throw Error(Errc::invalid_argument, "CallOptions::lanes is " + std::to_string(lanes) +
                                            "; lanes uses at most " +
                                            std::to_string(algos::kMaxLanes));
  }
  const auto key = std::make_pair(lanes, first_rail);
  auto it = layouts_by_lanes_.find(key);
  if (it == layouts_by_lanes_.end()) {
    it = layouts_by_lanes_.emplace(key, layout_.with_lanes(lanes, first_rail)).first;
  }
  return it->second;
}

std::shared_ptr<const PreparedSchedule> CommImpl::schedule_for(
    Collective coll, int root, std::size_t bytes, const std::string& algorithm, int lanes,
    int first_rail, std::size_t elem, bool reroot, bool internal) {
  const CacheKey key{
      static_cast<int>(coll), root, bytes, algorithm, lanes, first_rail, elem, reroot, internal};
  if (const auto* known = cache_.find(key)) return *known;
  const algos::Algorithm* algo = algos::find_algorithm(coll, algorithm);
  if (algo == nullptr) throw Error(Errc::internal, "unknown algorithm " + algorithm);
  const algos::Layout& layout = layout_with_lanes(lanes, first_rail);
  algos::CollArgs args;
  args.coll = coll;
  args.rank = rank_;
  args.root = root;
  args.bytes = bytes;
  args.elem = elem;
  algos::Schedule sched;
  if (reroot) {
    algos::CollArgs at_zero = args;
    at_zero.root = 0;
    sched = algos::reroot_reduce(algo->build(layout, at_zero), layout, args);
  } else {
    sched = algo->build(layout, args);
  }
  sched.finalize();
  auto prepared = prepare(*this, std::move(sched), algorithm, layout.first_rail);
  if (runtime_->config().info > 0 && rank_ == 0 && !internal) {
    std::fprintf(stderr, "lanes: %s of %zu bytes, root %d on %s: %s%s\n", algos::to_string(coll),
                 bytes, root, layout.describe().c_str(), algorithm.c_str(),
                 reroot ? " to rank 0, then to the root (a non-commutative operation)" : "");
  }
  return cache_.put(key, prepared);  // bounded: the least recently used shape leaves
}

void CommImpl::run_internal(Collective coll, std::size_t bytes, const std::byte* send,
                            std::byte* recv, const std::string& algorithm) {
  Prepared p;
  p.schedule = schedule_for(coll, 0, bytes, algorithm, 0, 0, 1, false, /*internal=*/true);
  p.send = send;
  p.recv = recv;
  p.block = bytes;
  auto ex = std::make_shared<Execution>(shared_from_this(), p.schedule, send, recv);
  runtime_->activate(ex);
  runtime_->wait(*ex);
}

void CommImpl::exchange(const void* mine, void* all, std::size_t bytes) {
  run_internal(Collective::allgather, bytes, static_cast<const std::byte*>(mine),
               static_cast<std::byte*>(all), "linear");
}

// ---------------------------------------------------------------------------------------------
namespace {

struct Signature {
  std::uint32_t coll;
  std::int32_t root;
  std::uint64_t bytes;
  std::uint32_t has_error;
  std::uint8_t type;  // reductions
  std::uint8_t op;
  std::uint8_t user;   // reductions: 0 a predefined operation, 1 a commutative user one, 2 another
  std::uint64_t elem;  // reductions with a user operation: its element size
  std::int32_t lanes;  // CallOptions::lanes and first_rail
  std::int32_t first_rail;
  char algorithm[32];
};

std::string describe_call(const Signature& s) {
  const auto coll = static_cast<Collective>(s.coll);
  const bool rooted = algos::is_rooted(coll);
  const bool vector =
      coll == Collective::bcast || coll == Collective::reduce || coll == Collective::allreduce;
  std::string text = std::string(algos::to_string(coll)) + "(";
  if (rooted) text += "root " + std::to_string(s.root) + ", ";
  if (coll != Collective::barrier) {
    text += std::to_string(s.bytes) + (vector ? " bytes" : " bytes per block") + ", ";
  }
  if (algos::is_reduction(coll) && s.user != 0) {
    text += std::string("a ") + (s.user == 1 ? "commutative" : "non-commutative") +
            " user operation of " + std::to_string(s.elem) + "-byte elements, ";
  } else if (algos::is_reduction(coll)) {
    text += std::string(to_string(static_cast<Op>(s.op))) + " of " +
            to_string(static_cast<Datatype>(s.type)) + ", ";
  }
  if (s.lanes != 0 || s.first_rail != 0) {
    text += std::to_string(s.lanes) + " lanes from rail " + std::to_string(s.first_rail) + ", ";
  }
  return text + "algorithm " + s.algorithm + ")";
}

}  // namespace

void CommImpl::agree(const Call& call, std::size_t bytes, const std::string& local_error) {
  const Collective coll = call.coll;
  const std::string& algorithm = call.options.algorithm;
  Signature mine{};
  mine.coll = static_cast<std::uint32_t>(coll);
  mine.root = call.root;
  mine.bytes = bytes;
  if (algos::is_reduction(coll) && call.user_op) {
    // User operations compare by what they declare: their functions are this process's own.
    mine.user = call.user_op->commutative ? 1 : 2;
    mine.elem = call.user_op->elem_size;
  } else if (algos::is_reduction(coll)) {
    mine.type = static_cast<std::uint8_t>(call.type);
    mine.op = static_cast<std::uint8_t>(call.op);
  }
  mine.has_error = local_error.empty() ? 0 : 1;
  mine.lanes = call.options.lanes;
  mine.first_rail = call.options.first_rail;
  std::snprintf(mine.algorithm, sizeof mine.algorithm, "%s", algorithm.c_str());
  std::vector<Signature> all(static_cast<std::size_t>(size()));
  exchange(&mine, all.data(), sizeof mine);
  for (int r = 0; r < size(); ++r) {
    if (all[static_cast<std::size_t>(r)].has_error != 0) {
      throw Error(Errc::invalid_argument,
                  r == rank_
                      ? "rank " + std::to_string(r) + ": " + local_error
                      : "rank " + std::to_string(r) + " passed invalid arguments to " +
                            algos::to_string(coll) + " (LANES_CHECK=1; its error says which)");
    }
  }
  const Signature& ref = all.front();
  for (int r = 1; r < size(); ++r) {
    const Signature& s = all[static_cast<std::size_t>(r)];
    if (s.coll != ref.coll || s.root != ref.root || s.bytes != ref.bytes || s.type != ref.type ||
        s.op != ref.op || s.user != ref.user || s.elem != ref.elem || s.lanes != ref.lanes ||
        s.first_rail != ref.first_rail ||
        std::strncmp(s.algorithm, ref.algorithm, sizeof s.algorithm) != 0) {
      const bool kinds = s.coll == ref.coll && (s.user == 0) != (ref.user == 0);
      throw Error(
          Errc::mismatch,
          "collective mismatch (LANES_CHECK=1): rank 0 called " + describe_call(ref) +
              " but rank " + std::to_string(r) + " called " + describe_call(s) +
              (kinds ? " (a user operation on one rank, a predefined one on the other)" : ""));
    }
  }
}

CommImpl::Prepared CommImpl::prepare_call(const Call& call) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  const auto [block, err] = check_call(call, rank_, size());
  Prepared prepared;
  prepared.call = call;
  prepared.block = block;
  const CallShape shape = shape_of(call, block);
  if (err.empty()) {
    if (const CallDecision* known = call_cache_.find(shape, call.options.algorithm)) {
      prepared.call.options.algorithm = known->algorithm;
      fill(prepared, known->schedule);
      return prepared;
    }
  }
  // A non-commutative operation: combined in rank order only.
  const bool rank_order = shape.user == 2;
  const algos::Layout* layout = nullptr;
  std::string algorithm;
  std::string error = err;
  try {
    layout = &layout_with_lanes(call.options.lanes, call.options.first_rail);
    algorithm = choose_algorithm(call.coll, block, call.options, *layout, rank_order);
  } catch (const Error& e) {
    // An unknown algorithm or a bad lane count: with LANES_CHECK agreed like the others.
    if (!runtime_->config().check || e.code() != Errc::invalid_argument) throw;
    if (error.empty()) error = std::string(algos::to_string(call.coll)) + ": " + e.what();
    algorithm = call.options.algorithm;
  }
  prepared.call.options.algorithm = algorithm;
  if (!error.empty()) {
    // Without LANES_CHECK only this rank knows; with it, every rank fails at start().
    if (!runtime_->config().check) throw Error(Errc::invalid_argument, error);
    prepared.error = error;  // every rank learns of it at start()
    return prepared;
  }
  const bool barrier = call.coll == Collective::barrier;
  const bool nothing =
      (block == 0 && !barrier) || ((call.coll == Collective::bcast || barrier) && size() == 1);
  std::shared_ptr<const PreparedSchedule> schedule;
  if (!nothing) {
    // In rank order toward rank 0 only: reduce there, then send on to the root.
    const algos::Algorithm* algo = algos::find_algorithm(call.coll, algorithm);
    const bool reroot = rank_order && call.coll == Collective::reduce && algo != nullptr &&
                        algo->rank_order != nullptr && !algo->rank_order(*layout, call.root);
    schedule = schedule_for(call.coll, shape.root, block, algorithm, call.options.lanes,
                            call.options.first_rail, shape.elem, reroot);
  }
  call_cache_.add(shape, call.options.algorithm, CallDecision{algorithm, schedule});
  fill(prepared, schedule);
  return prepared;
}

CommImpl::Operands CommImpl::operands(const Call& call) const {
  Operands o;
  const auto [uses_send, uses_recv] =
      buffers_used(call.coll, algos::is_rooted(call.coll) && call.root == rank_);
  o.send = uses_send ? call.send.data() : nullptr;
  o.recv = uses_recv ? call.recv.data() : nullptr;
  if (algos::is_reduction(call.coll) && call.user_op) {
    o.combine = user_combiner(call.user_op);
  } else if (algos::is_reduction(call.coll)) {
    o.combine.kernel = combine_fn(call.type, call.op);
  }
  o.elem = algos::is_reduction(call.coll) ? elem_of(call) : 1;
  return o;
}

void CommImpl::fill(Prepared& prepared, std::shared_ptr<const PreparedSchedule> schedule) const {
  if (!schedule) return;
  Operands o = operands(prepared.call);
  prepared.schedule = std::move(schedule);
  prepared.send = o.send;
  prepared.recv = o.recv;
  prepared.combine = std::move(o.combine);
}

std::shared_ptr<Execution> CommImpl::launch(std::shared_ptr<const PreparedSchedule> schedule,
                                            const std::byte* send, std::byte* recv,
                                            Combiner combine, std::size_t elem) {
  std::shared_ptr<Execution> ex;
  if (spare_ && spare_.use_count() == 1) {
    ex = std::move(spare_);
    ex->restart(shared_from_this(), std::move(schedule), send, recv, std::move(combine), elem);
  } else {
    ex = std::make_shared<Execution>(shared_from_this(), std::move(schedule), send, recv,
                                     std::move(combine), elem);
  }
  runtime_->activate(ex);
  return ex;
}

void CommImpl::finish(std::shared_ptr<Execution> ex) {
  runtime_->wait(*ex);
  // The next call reuses it: no allocation per call. Recycled, it no longer holds this
  // communicator.
  if (ex.use_count() == 1) {
    ex->recycle();
    spare_ = std::move(ex);
  }
}

std::shared_ptr<Execution> CommImpl::start(const Prepared& prepared) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  if (runtime_->config().check) {
    agree(prepared.call, prepared.block, prepared.error);
  }
  if (!prepared.schedule) return nullptr;
  return launch(prepared.schedule, prepared.send, prepared.recv, prepared.combine,
                elem_of(prepared.call));
}

void CommImpl::run(const Call& call) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  if (!runtime_->config().check) {
    // A shape seen before: straight to the execution, no Prepared in between.
    const CallCheck checked = check_call(call, rank_, size());
    if (checked.error.empty()) {
      const CallDecision* known =
          call_cache_.find(shape_of(call, checked.block), call.options.algorithm);
      if (known != nullptr) {
        if (!known->schedule) return;
        Operands o = operands(call);
        if (known->schedule->small_node) {
          run_small_node_schedule(*this, *known->schedule, o.send, o.recv, o.combine, o.elem);
        } else {
          finish(launch(known->schedule, o.send, o.recv, std::move(o.combine), o.elem));
        }
        return;
      }
    }
  }
  auto ex = start(prepare_call(call));
  if (ex) finish(std::move(ex));
}

// ---------------------------------------------------------------------------------------------
std::shared_ptr<CommImpl> CommImpl::member_comm(const std::vector<int>& members, int new_rank,
                                                std::uint32_t id, int& leader_new_rank) {
  std::vector<int> labels, world;
  for (const int m : members) {
    labels.push_back(layout_.node_of[static_cast<std::size_t>(m)]);
    world.push_back(world_rank_of_[static_cast<std::size_t>(m)]);
  }
  algos::Layout sub = algos::Layout::from_node_labels(labels, layout_.num_lanes);
  sub.num_rails = layout_.num_rails;
  sub.rail_numa = layout_.rail_numa;
  sub.rail_weights = layout_.rail_weights;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto m = static_cast<std::size_t>(members[i]);
    sub.lane_of[i] = layout_.lane_of[m];  // the same primary rail as before
    sub.numa_of[i] = layout_.numa_of[m];
  }
  sub.spread_lanes();  // a node with fewer members: each drives more lanes
  leader_new_rank =
      sub.node_ranks[static_cast<std::size_t>(sub.node_of[static_cast<std::size_t>(new_rank)])]
          .front();
  return std::make_shared<CommImpl>(runtime_, std::move(sub), new_rank, std::move(world), id);
}

std::shared_ptr<CommImpl> CommImpl::split(int color, int key) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  struct Entry {
    std::int32_t color;
    std::int32_t key;
    std::uint32_t next_id;
  };
  const Entry mine{color, key, runtime_->next_comm_id()};
  std::vector<Entry> all(static_cast<std::size_t>(size()));
  exchange(&mine, all.data(), sizeof mine);
  std::uint32_t id = 0;
  for (const Entry& e : all) id = std::max(id, e.next_id);
  runtime_->claim_comm_id(id);

  std::shared_ptr<CommImpl> comm;
  int leader_parent_rank = rank_;
  if (color >= 0) {
    std::vector<int> members;
    for (int r = 0; r < size(); ++r) {
      if (all[static_cast<std::size_t>(r)].color == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
    });
    const int new_rank =
        static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
    int leader_new = 0;
    comm = member_comm(members, new_rank, id, leader_new);
    leader_parent_rank = members[static_cast<std::size_t>(leader_new)];
  }
  // Every member of this communicator takes part in the same exchange rounds.
  const ExchangeFn over_parent = [this](const void* m, void* a, std::size_t b) {
    exchange(m, a, b);
  };
  if (comm) {
    comm->open_node_channels(over_parent, size(), leader_parent_rank, copy_policy(), false);
    runtime_->track(comm);
  } else {
    CommImpl none(runtime_, algos::Layout::blocks(1, 1, 1), 0, {world_rank_of_[0]}, id);
    none.open_node_channels(over_parent, size(), 0, transport::CopyPolicy{}, false);
  }
  return comm;
}

std::shared_ptr<CommImpl> CommImpl::group(std::span<const int> ranks, const ExchangeFn& exchange) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  std::vector<int> members(ranks.begin(), ranks.end());
  std::vector<char> seen(static_cast<std::size_t>(size()), 0);
  int new_rank = -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int r = members[i];
    if (r < 0 || r >= size() || seen[static_cast<std::size_t>(r)] != 0) {
      throw Error(Errc::invalid_argument,
                  "group(): rank " + std::to_string(r) + " is " +
                      (r < 0 || r >= size() ? "not a rank of a communicator of " +
                                                  std::to_string(size()) + " processes"
                                            : "listed twice"));
    }
    seen[static_cast<std::size_t>(r)] = 1;
    if (r == rank_) new_rank = static_cast<int>(i);
  }
  if (new_rank < 0) {
    throw Error(Errc::invalid_argument, "group(): the calling process (rank " +
                                            std::to_string(rank_) + ") is not among the ranks");
  }
  // An id no member uses yet: each member's next id exceeds every id it holds.
  const std::uint32_t mine = runtime_->next_comm_id();
  std::vector<std::uint32_t> ids(members.size());
  exchange(&mine, ids.data(), sizeof mine);
  const std::uint32_t id = *std::max_element(ids.begin(), ids.end());
  runtime_->claim_comm_id(id);
  int leader_new = 0;
  std::shared_ptr<CommImpl> comm = member_comm(members, new_rank, id, leader_new);
  comm->open_node_channels(exchange, static_cast<int>(members.size()), leader_new, copy_policy(),
                           false);
  runtime_->track(comm);
  return comm;
}

}  // namespace lanes::detail
