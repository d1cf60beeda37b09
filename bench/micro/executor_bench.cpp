#include "executor_bench.hpp"

#include <benchmark/benchmark.h>

#include <sched.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <lanes/lanes.hpp>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "transport/shm/channels.hpp"
#include "transport/shm/segment.hpp"

namespace lanes_micro {

namespace {

enum class Op : int {
  stop,
  bcast,
  alltoall,
  allgather,
  ialltoall,
  plan_alltoall,
  pingpong,
  raw_pingpong,
  allreduce
};

// Buffers for one collective of `bytes` per block among `p` ranks.
struct Buffers {
  Buffers(std::size_t bytes, int p)
      : one(bytes),
        send(bytes * static_cast<std::size_t>(p)),
        recv(bytes * static_cast<std::size_t>(p)) {}
  std::vector<std::byte> one, send, recv;
};

void run_op(lanes::Communicator& c, Op op, Buffers& b) {
  switch (op) {
    case Op::bcast:
      c.bcast(b.one, 0);
      break;
    case Op::alltoall:
      c.alltoall(b.send, b.recv);
      break;
    case Op::allgather:
      c.allgather(b.one, b.recv);
      break;
    case Op::ialltoall:
      c.ialltoall(b.send, b.recv).wait();
      break;
    case Op::allreduce: {
      auto in = std::span(reinterpret_cast<const std::uint32_t*>(b.one.data()), b.one.size() / 4);
      auto out = std::span(reinterpret_cast<std::uint32_t*>(b.send.data()), b.one.size() / 4);
      c.allreduce(in, out, lanes::Op::sum);
      break;
    }
    case Op::pingpong:  // one message from rank 0 to rank 1, one back
      c.bcast(b.one, 0);
      c.bcast(b.one, 1);
      break;
    case Op::plan_alltoall:
    case Op::raw_pingpong:
    case Op::stop:
      break;
  }
}

// Rails over loopback unless the caller chose others.
void default_rails() {
  setenv("LANES_RAILS", "lo", 0);
}

std::optional<lanes::Runtime> single_rt;  // a runtime of this process alone

lanes::Runtime& single() {
  if (!single_rt) {
    default_rails();
    single_rt.emplace(lanes::Runtime::init());
  }
  return *single_rt;
}

void bm_single(benchmark::State& state, Op op) {
  lanes::Communicator world = single().world();
  Buffers b(static_cast<std::size_t>(state.range(0)), world.size());
  if (op == Op::plan_alltoall) {
    lanes::Plan plan = world.plan_alltoall(b.send, b.recv);
    for (auto _ : state) {
      plan.start();
      plan.wait();
    }
  } else {
    for (auto _ : state) run_op(world, op, b);
  }
  state.SetItemsProcessed(state.iterations());
}

// In-process allgather for the two runtimes' bootstrap.
class Exchange {
 public:
  std::function<void(const void*, void*, std::size_t)> fn(int rank) {
    return [this, rank](const void* mine, void* all, std::size_t bytes) {
      const auto* p = static_cast<const std::byte*>(mine);
      slots_[rank].assign(p, p + bytes);
      barrier_.arrive_and_wait();
      for (std::size_t r = 0; r < 2; ++r)
        std::memcpy(static_cast<std::byte*>(all) + r * bytes, slots_[r].data(), bytes);
      barrier_.arrive_and_wait();
    };
  }

 private:
  std::barrier<> barrier_{2};
  std::vector<std::byte> slots_[2];
};

// Waits for `t`: polls, and gives the core away once it has waited kSpinBeforeYield (about 25
// raw round trips here). lanes' yield mode gives it away after 64 idle passes of its whole
// progress loop (rails and node channels), not of one slot; 64 polls of one slot took less than
// a message's way between the two cores, and yielding after them put a system call into every
// raw message (AMD EPYC guest: raw round trips of 1786 ns against lanes' 941, a negative
// overhead).
constexpr auto kSpinBeforeYield = std::chrono::microseconds(20);
void wait_for(lanes::transport::ShmTransfer t) {
  using clock = std::chrono::steady_clock;
  std::string why;
  clock::time_point since{};
  for (unsigned polls = 0; t.test(why) == lanes::transport::XferState::pending;) {
    if (++polls % 64 != 0) continue;
    const auto now = clock::now();
    if (polls == 64) since = now;
    if (now - since >= kSpinBeforeYield) sched_yield();
  }
}

// A ping-pong written straight into a node segment's inline slots: the floor under lanes'
// one-message calls. Rank 0's side runs on the benchmark's thread, rank 1's on the pair's helper
// (Op::raw_pingpong), so the same two threads take part as in lanes' ping-pong.
struct RawPingPong {
  RawPingPong() : geometry(lanes::transport::default_geometry(2)) {
    using namespace lanes::transport;
    ShmSegment seg = ShmSegment::create(channel_segment_bytes(geometry));
    const std::string name = seg.name();
    a = std::make_unique<NodeChannels>(std::move(seg), 0, geometry, true, CopyPolicy{});
    b = std::make_unique<NodeChannels>(ShmSegment::attach(name, channel_segment_bytes(geometry)), 1,
                                       geometry, false, CopyPolicy{});
    a->publish_self();
    b->publish_self();
    a->unlink();
  }
  // `side` 0 sends first; message numbers continue from call to call.
  void run(int side, long long reps, std::size_t bytes) {
    lanes::transport::NodeChannels& ch = side == 0 ? *a : *b;
    std::uint64_t& next = next_msg[side];
    std::vector<std::byte> data(bytes);
    for (long long i = 0; i < reps; ++i, ++next) {
      if (side == 0) {
        wait_for(ch.send(1, next, data.data(), bytes));
        wait_for(ch.recv(1, next, data.data(), bytes));
      } else {
        wait_for(ch.recv(0, next, data.data(), bytes));
        wait_for(ch.send(0, next, data.data(), bytes));
      }
    }
  }
  lanes::transport::ChannelGeometry geometry;
  std::unique_ptr<lanes::transport::NodeChannels> a, b;
  std::uint64_t next_msg[2] = {0, 0};
};

RawPingPong& raw_pingpong() {
  static RawPingPong raw;
  return raw;
}

// Rank 0 is the benchmark's thread; rank 1 a helper that runs whatever rank 0 announces with a
// broadcast before each timed loop: (operation, repetitions, bytes).
class Pair {
 public:
  explicit Pair(const char* node_size) {
    default_rails();
    // Two threads polling on two cores starve each other as soon as anything else runs:
    // waiting threads yield unless the caller chose otherwise.
    setenv("LANES_PROGRESS", "yield", 0);
    setenv("LANES_NODE_SIZE", node_size, 1);
    helper_ = std::thread([this] {
      lanes::Runtime rt = lanes::Runtime::init(lanes::AllgatherBootstrap{1, 2, ex_.fn(1), ""});
      lanes::Communicator c = rt.world();
      for (;;) {
        long long cmd[3] = {};
        c.bcast(cmd, 0);
        const auto op = static_cast<Op>(cmd[0]);
        if (op == Op::stop) break;
        Buffers b(static_cast<std::size_t>(cmd[2]), 2);
        if (op == Op::raw_pingpong) {
          raw_pingpong().run(1, cmd[1], static_cast<std::size_t>(cmd[2]));
        } else if (op == Op::plan_alltoall) {
          lanes::Plan plan = c.plan_alltoall(b.send, b.recv);
          for (long long i = 0; i < cmd[1]; ++i) plan.start(), plan.wait();
        } else {
          for (long long i = 0; i < cmd[1]; ++i) run_op(c, op, b);
        }
      }
    });
    rt_.emplace(lanes::Runtime::init(lanes::AllgatherBootstrap{0, 2, ex_.fn(0), ""}));
    world_ = rt_->world();
    announce(Op::bcast, 0, 0);  // the helper is past its start-up: the environment may change
  }
  Pair(const Pair&) = delete;
  Pair& operator=(const Pair&) = delete;
  ~Pair() {
    announce(Op::stop, 0, 0);
    rt_.reset();  // collective with the helper's runtime
    helper_.join();
  }
  void announce(Op op, long long reps, long long bytes) {
    long long cmd[3] = {static_cast<long long>(op), reps, bytes};
    world_.bcast(cmd, 0);
  }
  lanes::Communicator& world() { return world_; }

 private:
  Exchange ex_;
  std::thread helper_;
  std::optional<lanes::Runtime> rt_;
  lanes::Communicator world_;
};

std::unique_ptr<Pair> pairs[2];  // 0: one node, 1: two emulated nodes

// One pair at a time: an idle helper polls for its next command and would take a core from
// the pair being measured.
Pair& pair(int kind) {
  pairs[1 - kind].reset();
  if (!pairs[kind]) pairs[kind] = std::make_unique<Pair>(kind == 0 ? "2" : "1");
  return *pairs[kind];
}

void bm_pair(benchmark::State& state, int kind, Op op) {
  Pair& pr = pair(kind);
  const long long bytes = state.range(0);
  pr.announce(op, static_cast<long long>(state.max_iterations), bytes);
  Buffers b(static_cast<std::size_t>(bytes), 2);
  if (op == Op::plan_alltoall) {
    lanes::Plan plan = pr.world().plan_alltoall(b.send, b.recv);
    for (auto _ : state) plan.start(), plan.wait();
  } else {
    for (auto _ : state) run_op(pr.world(), op, b);
  }
  state.SetItemsProcessed(state.iterations());
}

// lanes' per-call overhead: round trips of two one-message broadcasts against raw round trips,
// in alternating rounds (the machine is shared: each figure is its fastest round's, noise only
// adds);
// half the difference is one call's overhead. Timed: lanes' rounds.
void bm_overhead(benchmark::State& state) {
  Pair& pr = pair(0);
  const auto bytes = static_cast<std::size_t>(state.range(0));
  constexpr long long kRoundTrips = 2000;
  Buffers b(bytes, 2);
  std::vector<double> raw_ns, lanes_ns;
  const auto per_trip = [](auto t0, auto t1) {
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / kRoundTrips;
  };
  for (auto _ : state) {
    pr.announce(Op::raw_pingpong, kRoundTrips, static_cast<long long>(bytes));
    auto t0 = std::chrono::steady_clock::now();
    raw_pingpong().run(0, kRoundTrips, bytes);
    auto t1 = std::chrono::steady_clock::now();
    raw_ns.push_back(per_trip(t0, t1));
    pr.announce(Op::pingpong, kRoundTrips, static_cast<long long>(bytes));
    t0 = std::chrono::steady_clock::now();
    for (long long i = 0; i < kRoundTrips; ++i) run_op(pr.world(), Op::pingpong, b);
    t1 = std::chrono::steady_clock::now();
    lanes_ns.push_back(per_trip(t0, t1));
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  const auto fastest = [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  };
  const double raw = fastest(raw_ns), lanes = fastest(lanes_ns);
  state.counters["raw_roundtrip_ns"] = raw;
  state.counters["lanes_roundtrip_ns"] = lanes;
  state.counters["overhead_per_call_ns"] = (lanes - raw) / 2;
}

[[maybe_unused]] const bool registered = [] {
  benchmark::RegisterBenchmark("exec/p2-one-node/overhead-over-inline-slot", bm_overhead)
      ->Arg(8)
      ->Iterations(51)
      ->UseManualTime();
  const std::pair<const char*, Op> ops[] = {{"bcast", Op::bcast},
                                            {"alltoall", Op::alltoall},
                                            {"allgather", Op::allgather},
                                            {"allreduce", Op::allreduce},
                                            {"ialltoall+wait", Op::ialltoall},
                                            {"plan-alltoall", Op::plan_alltoall}};
  for (const auto& [name, op] : ops) {
    benchmark::RegisterBenchmark((std::string("exec/p1/") + name).c_str(), bm_single, op)->Arg(8);
  }
  const char* kinds[] = {"exec/p2-one-node/", "exec/p2-two-nodes/"};
  for (int kind : {0, 1}) {
    for (const auto& [name, op] : ops) {
      benchmark::RegisterBenchmark((std::string(kinds[kind]) + name).c_str(), bm_pair, kind, op)
          ->Arg(8)
          ->UseRealTime();
    }
  }
  return true;
}();

}  // namespace

void stop_runtimes() {
  for (auto& p : pairs) p.reset();
  single_rt.reset();
}

}  // namespace lanes_micro
