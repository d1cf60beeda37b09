#include "algos/shared_cores.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <unordered_map>
#include <vector>

namespace lanes::algos {

namespace {

std::size_t element_of(Collective coll, std::size_t bytes) {
  if (!is_reduction(coll)) return 1;
  for (std::size_t e = 8; e > 1; e /= 2) {
    if (bytes % e == 0) return e;
  }
  return 1;
}

// Key of the message numbered `msg` from `peer` among a rank's receives.
std::uint64_t message_key(int peer, std::uint32_t msg) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer)) << 32) | msg;
}

struct Task {
  double work = 0;
  double ready = 0;  // when its last dependency finished
  std::uint32_t pending = 0;
  std::vector<std::pair<std::uint32_t, OpId>> waiting;  // (rank, op) that depend on it
};

}  // namespace

SharedCoreRun shared_core_run(const Algorithm& algo, const Layout& layout, std::size_t bytes,
                              const MachineParams& m, int cores, SingleCopyFrom single_copy) {
  const auto p = static_cast<std::size_t>(layout.size);
  std::vector<Schedule> schedules(p);
  CollArgs args;
  args.coll = algo.coll;
  args.bytes = bytes;
  args.elem = element_of(algo.coll, bytes);
  for (std::size_t r = 0; r < p; ++r) {
    args.rank = static_cast<int>(r);
    schedules[r] = algo.build(layout, args);
    schedules[r].finalize();
  }
  // The smallest single-copy message of each sender (0: none), by the executor's rule.
  std::vector<std::size_t> least(p, single_copy.any);
  for (std::size_t r = 0; r < p; ++r) {
    const bool at_once =
        node_send_order(schedules[r], layout, static_cast<int>(r)).sends_before_receiving();
    if (at_once && single_copy.exchange > 0) least[r] = single_copy.exchange;
  }
  const auto single = [&](std::size_t from, std::size_t b) {
    return least[from] > 0 && b >= least[from];
  };

  SharedCoreRun run;
  std::vector<std::vector<Task>> tasks(p);
  std::vector<std::unordered_map<std::uint64_t, OpId>> recv_of(p);
  std::size_t total = 0;
  for (std::size_t r = 0; r < p; ++r) {
    const auto& ops = schedules[r].ops;
    tasks[r].resize(ops.size());
    total += ops.size();
    for (OpId i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      Task& t = tasks[r][i];
      t.pending = static_cast<std::uint32_t>(op.deps.size());
      for (const OpId d : op.deps) tasks[r][d].waiting.emplace_back(r, i);
      switch (op.kind) {
        case OpKind::send:
          t.work = m.alpha_shm / 2 +
                   (single(r, op.src.bytes) ? 0.0 : static_cast<double>(op.src.bytes) * m.beta_shm);
          break;
        case OpKind::recv: {
          ++t.pending;  // its send
          recv_of[r][message_key(op.peer, op.msg)] = i;
          const bool one_copy = single(static_cast<std::size_t>(op.peer), op.dst.bytes);
          t.work = (one_copy ? m.alpha_shm : m.alpha_shm / 2) +
                   static_cast<double>(op.dst.bytes) * m.beta_shm *
                       (one_copy ? std::max(single_copy.slowdown, 1.0) : 1.0);
          break;
        }
        case OpKind::copy:
          t.work = static_cast<double>(op.src.bytes) * m.beta_shm;
          break;
        case OpKind::combine:
          t.work = static_cast<double>(op.src.bytes) * m.gamma;
          break;
      }
      run.work_s += t.work;
    }
  }
  for (std::size_t r = 0; r < p; ++r) {
    const auto& ops = schedules[r].ops;
    for (OpId i = 0; i < ops.size(); ++i) {
      if (ops[i].kind != OpKind::send || ops[i].peer < 0 ||
          static_cast<std::size_t>(ops[i].peer) >= p) {
        continue;
      }
      const auto peer = static_cast<std::size_t>(ops[i].peer);
      const auto it = recv_of[peer].find(message_key(static_cast<int>(r), ops[i].msg));
      if (it != recv_of[peer].end()) tasks[r][i].waiting.emplace_back(peer, it->second);
    }
  }

  // Each process's ready ops, earliest first; the cores' next free times.
  using Ready = std::pair<double, OpId>;
  std::vector<std::priority_queue<Ready, std::vector<Ready>, std::greater<>>> ready(p);
  for (std::size_t r = 0; r < p; ++r) {
    for (OpId i = 0; i < tasks[r].size(); ++i) {
      if (tasks[r][i].pending == 0) ready[r].emplace(0.0, i);
    }
  }
  std::priority_queue<double, std::vector<double>, std::greater<>> core_free;
  for (int c = 0; c < std::max(cores, 1); ++c) core_free.push(0.0);
  std::vector<double> process_free(p, 0.0);
  // When each process's next op could start; entries of an older version are stale.
  struct Candidate {
    double start;
    std::uint32_t rank;
    std::uint64_t version;
    bool operator>(const Candidate& o) const {
      return start != o.start ? start > o.start : rank > o.rank;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> next;
  std::vector<std::uint64_t> version(p, 0);
  const auto start_of = [&](std::size_t r) {
    const double at = ready[r].top().first;
    return std::max(process_free[r], at > process_free[r] ? at + m.handoff : at);
  };
  const auto offer = [&](std::size_t r) {
    if (!ready[r].empty()) {
      next.push({start_of(r), static_cast<std::uint32_t>(r), ++version[r]});
    }
  };
  for (std::size_t r = 0; r < p; ++r) offer(r);
  std::size_t done = 0;
  double end = 0;
  while (!next.empty()) {
    const Candidate c = next.top();
    next.pop();
    if (c.version != version[c.rank]) continue;
    const std::size_t r = c.rank;
    const auto [at, i] = ready[r].top();
    ready[r].pop();
    if (at > process_free[r]) ++run.handoffs;
    const double start = std::max(c.start, core_free.top());
    core_free.pop();
    const double finish = start + tasks[r][i].work;
    core_free.push(finish);
    process_free[r] = finish;
    end = std::max(end, finish);
    ++done;
    for (const auto& [wr, wi] : tasks[r][i].waiting) {
      Task& t = tasks[wr][wi];
      t.ready = std::max(t.ready, finish);
      if (--t.pending == 0) {
        ready[wr].emplace(t.ready, wi);
        if (wr != r) offer(wr);
      }
    }
    offer(r);
  }
  run.seconds = done == total ? end : std::numeric_limits<double>::infinity();
  return run;
}

std::vector<SharedCoreCandidate> rank_on_shared_cores(const std::vector<Prediction>& ranking,
                                                      Collective coll, const Layout& layout,
                                                      std::size_t bytes, const MachineParams& m,
                                                      int cores, SingleCopyFrom single_copy) {
  std::vector<SharedCoreCandidate> out;
  for (const Prediction& candidate : ranking) {
    const Algorithm* algo = find_algorithm(coll, candidate.algorithm);
    if (algo == nullptr || (algo->applicable != nullptr && !algo->applicable(layout))) continue;
    SharedCoreRun run = shared_core_run(*algo, layout, bytes, m, cores, single_copy);
    out.push_back({{candidate.algorithm, run.seconds}, run});
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.prediction.seconds < b.prediction.seconds;
  });
  return out;
}

}  // namespace lanes::algos
