#include "lib/comm_impl.hpp"

#include <chrono>
#include <cstdio>
#include <lanes/error.hpp>

#include "algos/common.hpp"
#include "algos/reduce/hierarchical.hpp"
#include "algos/registry.hpp"
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
// Selection is lib/selection.cpp's pure function; a communicator remembers its answers per shape
// and reports them under LANES_INFO.
std::string CommImpl::choose_algorithm(Collective coll, std::size_t bytes,
                                       const CallOptions& options, const algos::Layout& layout,
                                       bool rank_order) const {
  const SelectionKey key{static_cast<int>(coll), bytes,      layout.num_lanes,
                         layout.first_rail,      rank_order, options.algorithm};
  if (const std::string* known = selections_.find(key)) return *known;
  SelectionInput in;
  in.coll = coll;
  in.bytes = bytes;
  in.layout = &layout;
  in.rank_order = rank_order;
  in.requested = options.algorithm;
  in.config = &runtime_->config();
  in.rules = &runtime_->rules();
  in.machine = &runtime_->machine();
  if (layout.num_nodes() == 1) {  // whether its processes outnumber the cores: selection's call
    in.shared.cores = runtime_->host_cores();
    if (channels_ && channels_->cma_possible()) {
      in.shared.single_copy = {channels_->single_copy_min(transport::SingleCopy::no),
                               channels_->single_copy_min(transport::SingleCopy::exchange),
                               std::max(channels_->cma_slowdown(), 1.0)};
    }
  }
  const Selection chosen = select_algorithm(in);
  if (runtime_->config().info > 0 && rank_ == 0) report(coll, bytes, layout, chosen);
  return selections_.put(key, chosen.algorithm);
}

void CommImpl::report(Collective coll, std::size_t bytes, const algos::Layout& layout,
                      const Selection& chosen) const {
  if (!chosen.ranking.empty() || chosen.source == "model") {
    std::string text;
    for (const auto& c : chosen.ranking) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s %.3g us", c.algorithm.c_str(), c.seconds * 1e6);
      text += buf;
    }
    std::fprintf(stderr, "lanes: model for %s of %zu bytes on %s:%s; chosen: %s\n",
                 algos::to_string(coll), bytes, layout.describe().c_str(), text.c_str(),
                 chosen.algorithm.c_str());
  }
  if (chosen.source == "fallback") {
    std::fprintf(stderr, "lanes: %s '%s' does not apply to %s; using %s\n", algos::to_string(coll),
                 chosen.not_applicable.c_str(), layout.describe().c_str(),
                 chosen.algorithm.c_str());
  }
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
    int first_rail, std::size_t elem, bool reroot, bool internal, int groups) {
  const CacheKey key{static_cast<int>(coll),
                     root,
                     bytes,
                     algorithm,
                     lanes,
                     first_rail,
                     elem,
                     reroot,
                     internal,
                     groups};
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
  args.groups = groups;
  algos::Schedule sched;
  if (reroot) {
    algos::CollArgs at_zero = args;
    at_zero.root = 0;
    sched = algos::reroot_reduce(algo->build(layout, at_zero), layout, args);
  } else {
    sched = algo->build(layout, args);
  }
  sched.finalize();
  auto prepared =
      prepare(*this, std::move(sched), algorithm, layout.first_rail, coll == Collective::reduce);
  if (runtime_->config().info > 0 && rank_ == 0 && !internal) {
    const std::string with_groups =
        groups > 0 ? " with " + std::to_string(groups) + " groups" : std::string();
    std::fprintf(stderr, "lanes: %s of %zu bytes, root %d on %s: %s%s%s\n", algos::to_string(coll),
                 bytes, root, layout.describe().c_str(), algorithm.c_str(), with_groups.c_str(),
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
    prepared.groups = groups_for(call.coll, algorithm, block, call.options, prepared.searching);
    prepared.reroot = reroot;
    schedule = schedule_for(call.coll, shape.root, block, algorithm, call.options.lanes,
                            call.options.first_rail, shape.elem, reroot, false, prepared.groups);
  }
  // A call whose G is still searched does not enter the cache: each one is a trial.
  if (!prepared.searching) {
    call_cache_.add(shape, call.options.algorithm, CallDecision{algorithm, schedule});
  }
  fill(prepared, schedule);
  return prepared;
}

int CommImpl::groups_for(Collective coll, const std::string& algorithm, std::size_t bytes,
                         const CallOptions& options, bool& searching) const {
  searching = false;
  const Config& cfg = runtime_->config();
  if (!algos::has_group_choice(coll, algorithm)) return 0;
  if (cfg.hierarchy_groups > 0) return cfg.hierarchy_groups;
  if (!cfg.hierarchy_search) return 0;
  const int settled = group_search_.settled(GroupSearch::key_of(
      static_cast<int>(coll), algorithm, bytes, options.lanes, options.first_rail));
  searching = settled == 0;
  return settled;
}

void CommImpl::run_group_trial(Prepared& prepared) {
  const Call& call = prepared.call;
  const CallShape shape = shape_of(call, prepared.block);
  const GroupSearch::Key key =
      GroupSearch::key_of(static_cast<int>(call.coll), call.options.algorithm, prepared.block,
                          call.options.lanes, call.options.first_rail);
  const algos::Layout& layout = layout_with_lanes(call.options.lanes, call.options.first_rail);
  const int groups =
      group_search_.next_trial(key, algos::hierarchical_group_choices(call.coll, layout));
  prepared.groups = groups;
  fill(prepared, schedule_for(call.coll, shape.root, prepared.block, call.options.algorithm,
                              call.options.lanes, call.options.first_rail, shape.elem,
                              prepared.reroot, false, groups));
  const auto begin = std::chrono::steady_clock::now();
  if (auto ex = start(prepared)) finish(std::move(ex));
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - begin;
  if (!group_search_.record(key, took.count())) return;
  // The last trial: every rank takes the G whose slowest rank was fastest.
  const std::vector<double> mine = group_search_.best_times(key);
  std::vector<double> all(mine.size() * static_cast<std::size_t>(size()));
  exchange(mine.data(), all.data(), mine.size() * sizeof(double));
  const algos::CostInput shape_in = algos::cost_input_of(layout, prepared.block);
  int model = algos::model_groups(call.coll, call.options.algorithm, shape_in);
  if (call.coll == Collective::reduce && model == size()) model = 1;  // the base algorithm too
  const int chosen = group_search_.settle(key, all, model);
  call_cache_.clear();  // shapes decided with the model's G before
  if (runtime_->config().info > 0 && rank_ == 0) {
    std::string text;
    const std::vector<int>& choices = group_search_.choices(key);
    const std::vector<double>& slowest = group_search_.slowest(key);
    for (std::size_t i = 0; i < choices.size(); ++i) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s G = %d %.4g us", i == 0 ? "" : ",", choices[i],
                    slowest[i] * 1e6);
      text += buf;
    }
    std::fprintf(stderr,
                 "lanes: groups searched for %s %s of %zu to %zu bytes on %s:%s (the "
                 "slowest rank's best of %d each; the model's G = %d); G = %d\n",
                 algos::to_string(call.coll), call.options.algorithm.c_str(), key.bytes_class,
                 2 * key.bytes_class - 1, layout.describe().c_str(), text.c_str(),
                 GroupSearch::kRounds, model, chosen);
  }
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

void CommImpl::reclaim(std::shared_ptr<Execution> ex) noexcept {
  if (!ex || spare_ || ex.use_count() != 1 || !ex->finished() || ex->failed()) return;
  ex->recycle();
  spare_ = std::move(ex);
}

std::shared_ptr<Execution> CommImpl::start(const Prepared& prepared) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  if (runtime_->config().check) {
    agree(prepared.call, prepared.block, prepared.error, prepared.groups);
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
  Prepared prepared = prepare_call(call);
  if (prepared.searching && prepared.schedule) {
    run_group_trial(prepared);
    return;
  }
  auto ex = start(prepared);
  if (ex) finish(std::move(ex));
}

}  // namespace lanes::detail
