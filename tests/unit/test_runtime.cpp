// The public API in one process: a single-process runtime, argument checking, use after
// finalize, and several runtimes on threads of this process bootstrapped through the allgather
// callback (real UCX over loopback, real shared memory).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <lanes/lanes.hpp>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

namespace {

// Sets environment variables for one test and restores them afterwards.
class Env {
 public:
  Env(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (auto [k, v] : vars) {
      const char* old = std::getenv(k);
      saved_.emplace_back(k, old ? std::optional<std::string>(old) : std::nullopt);
      if (v)
        setenv(k, v, 1);
      else
        unsetenv(k);
    }
  }
  ~Env() {
    for (auto& [k, v] : saved_) {
      if (v)
        setenv(k.c_str(), v->c_str(), 1);
      else
        unsetenv(k.c_str());
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

lanes::Errc code_of(const std::function<void()>& fn, std::string* what = nullptr) {
  try {
    fn();
  } catch (const lanes::Error& e) {
    if (what) *what = e.what();
    return e.code();
  }
  ADD_FAILURE() << "no lanes::Error thrown";
  return lanes::Errc::internal;
}

// An in-process allgather for `n` threads.
class ThreadExchange {
 public:
  explicit ThreadExchange(int n) : n_(n), barrier_(n), slots_(static_cast<std::size_t>(n)) {}
  std::function<void(const void*, void*, std::size_t)> fn(int rank) {
    return [this, rank](const void* mine, void* all, std::size_t bytes) {
      const auto* p = static_cast<const std::byte*>(mine);
      slots_[static_cast<std::size_t>(rank)].assign(p, p + bytes);
      barrier_.arrive_and_wait();
      for (int r = 0; r < n_; ++r) {
        std::memcpy(static_cast<std::byte*>(all) + static_cast<std::size_t>(r) * bytes,
                    slots_[static_cast<std::size_t>(r)].data(), bytes);
      }
      barrier_.arrive_and_wait();
    };
  }

 private:
  int n_;
  std::barrier<> barrier_;
  std::vector<std::vector<std::byte>> slots_;
};

// Runs `body(rank, runtime)` on `n` threads, each with its own runtime.
void run_ranks(int n, const std::function<void(int, lanes::Runtime&)>& body) {
  ThreadExchange ex(n);
  std::vector<std::thread> threads;
  std::mutex m;
  std::vector<std::string> errors;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        lanes::Runtime rt = lanes::Runtime::init(lanes::AllgatherBootstrap{r, n, ex.fn(r), ""});
        body(r, rt);
      } catch (const std::exception& e) {
        std::lock_guard lock(m);
        errors.push_back("rank " + std::to_string(r) + ": " + e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) ADD_FAILURE() << e;
}

void check_collectives(lanes::Communicator& comm, std::size_t n) {
  const int me = comm.rank();
  const int p = comm.size();
  for (int root = 0; root < p; ++root) {
    std::vector<std::uint32_t> data(n, 0);
    if (me == root) std::iota(data.begin(), data.end(), static_cast<std::uint32_t>(root * 1000));
    comm.bcast(data, root);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(data[i], root * 1000u + i) << "bcast root " << root << " at rank " << me;
    }
    std::vector<std::uint32_t> send(me == root ? n * static_cast<std::size_t>(p) : 0), recv(n);
    std::iota(send.begin(), send.end(), 7u);
    comm.scatter(send, recv, root);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(recv[i], 7u + me * n + i) << "scatter";
  }
  std::vector<std::uint32_t> send(n * static_cast<std::size_t>(p)), recv(send.size());
  for (std::size_t i = 0; i < send.size(); ++i)
    send[i] = static_cast<std::uint32_t>(me * 100000 + i);
  comm.alltoall(send, recv);
  for (int j = 0; j < p; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(recv[static_cast<std::size_t>(j) * n + i],
                j * 100000u + static_cast<std::uint32_t>(me) * n + i);
    }
  }
}

// Reductions of several types and operations with every allreduce and reduce algorithm: results
// computed here, floats bitwise the same on every rank, in place, nonblocking and persistent.
void check_reductions(lanes::Communicator& comm, std::size_t n) {
  using lanes::Op;
  const int me = comm.rank();
  const int p = comm.size();
  for (const char* algo : {"recursive-doubling", "ring", "full-lane"}) {
    const lanes::CallOptions o{.algorithm = algo};
    std::vector<std::int32_t> ints(n), sum(n);
    for (std::size_t i = 0; i < n; ++i) ints[i] = static_cast<std::int32_t>(me * 7 + i) - 50;
    comm.allreduce(ints, sum, Op::sum, o);
    for (std::size_t i = 0; i < n; ++i) {
      std::int32_t want = 0;
      for (int r = 0; r < p; ++r) want += static_cast<std::int32_t>(r * 7 + i) - 50;
      ASSERT_EQ(sum[i], want) << algo << " int32 sum at " << i;
    }
    // 8-bit sums wrap.
    std::vector<std::uint8_t> bytes(n, static_cast<std::uint8_t>(200 + me)), wrapped(n);
    comm.allreduce(bytes, wrapped, Op::sum, o);
    unsigned want8 = 0;
    for (int r = 0; r < p; ++r) want8 += 200u + static_cast<unsigned>(r);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(wrapped[i], want8 % 256) << algo;
    std::vector<std::uint32_t> bits(n, 1u << me), ored(n), xored(n), anded(n);
    comm.allreduce(bits, ored, Op::bor, o);
    comm.allreduce(bits, xored, Op::bxor, o);
    comm.allreduce(bits, anded, Op::band, o);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(ored[i], (1u << p) - 1);
      ASSERT_EQ(xored[i], (1u << p) - 1);
      ASSERT_EQ(anded[i], p == 1 ? 1u : 0u);
    }
    std::vector<std::int8_t> truth(n, static_cast<std::int8_t>(me % 2)), land(n), lor(n);
    comm.allreduce(truth, land, Op::land, o);
    comm.allreduce(truth, lor, Op::lor, o);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(land[i], 0);  // rank 0 contributes false
      ASSERT_EQ(lor[i], p > 1 ? 1 : 0);
    }
    // Float sums whose value depends on the order of combination: the same bits everywhere.
    std::vector<double> big(n), total(n);
    for (std::size_t i = 0; i < n; ++i) big[i] = (me % 2 == 0 ? 1e16 : 1.0) * (me + 1) + i * 0.1;
    comm.allreduce(big, total, Op::sum, o);
    std::vector<double> everyone(n * static_cast<std::size_t>(p));
    comm.allgather(total, everyone);
    for (int r = 1; r < p; ++r) {
      ASSERT_EQ(std::memcmp(everyone.data(), everyone.data() + r * n, n * sizeof(double)), 0)
          << algo << ": rank " << r << " holds other bits than rank 0";
    }
    std::vector<float> f(n, static_cast<float>(me) - 1.5f), mx(n), mn(n);
    comm.allreduce(f, mx, Op::max, o);
    comm.allreduce(f, mn, Op::min, o);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(mx[i], static_cast<float>(p - 1) - 1.5f);
      ASSERT_EQ(mn[i], -1.5f);
    }
    std::vector<std::int64_t> twos(n, 2), prod(n);
    comm.allreduce(twos, prod, Op::prod, o);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(prod[i], std::int64_t{1} << p);
    // bfloat16: 1.0 from every rank sums to p (exact in bfloat16 for small p).
    std::vector<lanes::bfloat16> halves(n, lanes::bfloat16{0x3f80}), hsum(n);
    comm.allreduce(halves, hsum, Op::sum, o);
    float want_h = static_cast<float>(p);
    std::uint32_t want_bits;
    std::memcpy(&want_bits, &want_h, 4);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hsum[i].bits, want_bits >> 16);
    // In place, nonblocking, persistent.
    std::vector<std::int32_t> inplace = ints;
    comm.allreduce(inplace, Op::sum, o);
    ASSERT_EQ(inplace, sum);
    std::vector<std::int32_t> later(n);
    lanes::Request req = comm.iallreduce(ints, later, Op::sum, o);
    req.wait();
    ASSERT_EQ(later, sum);
    std::vector<std::int32_t> planned(n);
    lanes::Plan plan = comm.plan_allreduce(ints, planned, Op::sum, o);
    for (int twice = 0; twice < 2; ++twice) {
      std::fill(planned.begin(), planned.end(), 0);
      plan.start();
      plan.wait();
      ASSERT_EQ(planned, sum);
    }
  }
  for (const char* algo : {"ring", "pairwise"}) {
    // Block r of the result: the sum of every rank's block r.
    std::vector<std::int32_t> blocks(n * static_cast<std::size_t>(p)), mine(n);
    for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<std::int32_t>(i) + me;
    comm.reduce_scatter_block(blocks, mine, Op::sum, {.algorithm = algo});
    for (std::size_t i = 0; i < n; ++i) {
      const auto at = static_cast<std::int32_t>(static_cast<std::size_t>(me) * n + i);
      ASSERT_EQ(mine[i], p * at + p * (p - 1) / 2) << algo << " at " << i;
    }
  }
  for (int root = 0; root < p; ++root) {
    std::vector<std::int64_t> mine(n), at_root(me == root ? n : 0);
    for (std::size_t i = 0; i < n; ++i) mine[i] = me + static_cast<std::int64_t>(i) * p;
    comm.reduce(mine, at_root, Op::sum, root);
    if (me != root) continue;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(at_root[i],
                static_cast<std::int64_t>(p) * (p - 1) / 2 + static_cast<std::int64_t>(i) * p * p)
          << "reduce root " << root;
    }
  }
}

// User operations ------------------------------------------------------------------------------
// A commutative one on a struct no predefined Datatype describes (24 bytes: not a divisor of the
// node phases' power-of-two chunks), with values whose sums are exact in any order.
struct Moments {
  double sum = 0;
  double max = 0;
  std::int64_t count = 0;
  bool operator==(const Moments&) const = default;
};

Moments moments_term(int rank, std::size_t i, int call) {
  const auto x = static_cast<double>(
      (i * 7919 + static_cast<std::size_t>(rank) * 104729 + static_cast<std::size_t>(call) * 31) %
      1000003);
  return {x, x - static_cast<double>(rank), static_cast<std::int64_t>(i % 5) + rank};
}

lanes::UserOp<Moments> moments_op() {
  return {[](const Moments* in, Moments* inout, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      inout[i].sum += in[i].sum;
      inout[i].max = std::max(inout[i].max, in[i].max);
      inout[i].count += in[i].count;
    }
  }};
}

// A non-commutative, associative one: 3x3 matrices modulo 2^32 (36 bytes), in[i] * inout[i].
// Every rank's matrix is unimodular, so that products never degenerate.
struct Mat3 {
  std::uint32_t m[9];
  bool operator==(const Mat3&) const = default;
};

Mat3 mul(const Mat3& x, const Mat3& y) {
  Mat3 z{};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      std::uint32_t v = 0;
      for (int k = 0; k < 3; ++k) v += x.m[3 * r + k] * y.m[3 * k + c];
      z.m[3 * r + c] = v;
    }
  }
  return z;
}

Mat3 mat_term(int rank, std::size_t i, int call) {
  const auto h = [&](std::uint32_t salt) {
    std::uint64_t x = i * 0x9E3779B97F4A7C15ULL +
                      static_cast<std::uint64_t>(rank) * 0xBF58476D1CE4E5B9ULL +
                      static_cast<std::uint64_t>(call) * 0x94D049BB133111EBULL + salt;
    x ^= x >> 29;
    x *= 0xD6E8FEB86659FD93ULL;
    return static_cast<std::uint32_t>(x >> 32);
  };
  // Upper times lower unitriangular: determinant 1, and x * y != y * x in general.
  const Mat3 upper{{1, h(1), h(2), 0, 1, h(3), 0, 0, 1}};
  const Mat3 lower{{1, 0, 0, h(4), 1, 0, h(5), h(6), 1}};
  return mul(upper, lower);
}

lanes::UserOp<Mat3> mat_op() {
  return {[](const Mat3* in, Mat3* inout, std::size_t n) {
            for (std::size_t i = 0; i < n; ++i) inout[i] = mul(in[i], inout[i]);
          },
          false};
}

// The rank-order product of element i over `p` ranks (block `block` of reduce_scatter_block:
// element block * n + i of every rank's send).
Mat3 mat_product(int p, std::size_t i, int call) {
  Mat3 acc = mat_term(0, i, call);
  for (int r = 1; r < p; ++r) acc = mul(acc, mat_term(r, i, call));
  return acc;
}

Moments moments_total(int p, std::size_t i, int call) {
  Moments acc = moments_term(0, i, call);
  for (int r = 1; r < p; ++r) {
    const Moments t = moments_term(r, i, call);
    acc.sum += t.sum;
    acc.max = std::max(acc.max, t.max);
    acc.count += t.count;
  }
  return acc;
}

enum class Way { blocking, nonblocking, plan };

// One element type's checks: allreduce (also in place), reduce to every root (in place at the
// root every other root), reduce_scatter_block, each blocking, nonblocking (all of a size in
// flight at once, completed in reverse order) and as a plan started twice; send buffers must
// come back untouched. `term(rank, i, call)`, `total(p, i, call)`. A non-empty `only` runs that
// collective alone (with o.algorithm, one of its algorithms).
template <class T, class Term, class Total>
void check_user_op(lanes::Communicator& comm, const lanes::UserOp<T>& op, std::size_t n, Way way,
                   const lanes::CallOptions& o, Term term, Total total, int& call,
                   const std::string& only = "") {
  const int me = comm.rank();
  const int p = comm.size();
  const auto pn = static_cast<std::size_t>(p) * n;
  std::vector<lanes::Request> pending;
  std::vector<std::function<void()>> checks;
  // Every vector lives until the checks ran.
  std::vector<std::unique_ptr<std::vector<T>>> keep;
  const auto vec = [&](std::size_t size) -> std::vector<T>& {
    keep.push_back(std::make_unique<std::vector<T>>(size));
    return *keep.back();
  };
  const auto filled = [&](std::size_t size, int c) -> std::vector<T>& {
    std::vector<T>& v = vec(size);
    for (std::size_t i = 0; i < size; ++i) v[i] = term(me, i, c);
    return v;
  };
  const auto expect_total = [&, p](const std::vector<T>& got, int c, std::size_t offset,
                                   const std::string& what) {
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!(got[i] == total(p, offset + i, c))) {
        ADD_FAILURE() << what << ": element " << i << " of " << got.size() << " at rank " << me
                      << " is not the combination in rank order";
        return;
      }
    }
  };
  const auto untouched = [&](const std::vector<T>& send, int c, const std::string& what) {
    for (std::size_t i = 0; i < send.size(); ++i) {
      if (!(send[i] == term(me, i, c))) {
        ADD_FAILURE() << what << ": send element " << i << " changed at rank " << me;
        return;
      }
    }
  };
  // Runs `blocking`, or starts `start`, or makes the plan and runs it twice (refilling recv).
  const auto run = [&](auto blocking, auto start, auto make_plan, std::vector<T>& recv) {
    switch (way) {
      case Way::blocking:
        blocking();
        break;
      case Way::nonblocking:
        pending.push_back(start());
        break;
      case Way::plan: {
        lanes::Plan plan = make_plan();
        for (int twice = 0; twice < 2; ++twice) {
          std::fill(recv.begin(), recv.end(), T{});
          plan.start();
          plan.wait();
        }
        break;
      }
    }
  };
  if (only.empty() || only == "allreduce") {
    const int c = call++;
    std::vector<T>& send = filled(n, c);
    std::vector<T>& recv = vec(n);
    run([&] { comm.allreduce(send, recv, op, o); },
        [&] { return comm.iallreduce(send, recv, op, o); },
        [&] { return comm.plan_allreduce(send, recv, op, o); }, recv);
    checks.push_back([&, c] {
      expect_total(recv, c, 0, "allreduce");
      untouched(send, c, "allreduce");
    });
  }
  if (way == Way::blocking && (only.empty() || only == "allreduce")) {
    const int c = call++;
    std::vector<T>& data = filled(n, c);
    comm.allreduce(data, op, o);
    checks.push_back([&, c] { expect_total(data, c, 0, "allreduce in place"); });
  }
  for (int root = 0; root < p && (only.empty() || only == "reduce"); ++root) {
    const int c = call++;
    const bool in_place = root % 2 == 1 && way != Way::plan;
    std::vector<T>& send = filled(n, c);
    std::vector<T>& recv = in_place && me == root ? send : vec(me == root ? n : 0);
    run([&] { comm.reduce(send, recv, op, root, o); },
        [&] { return comm.ireduce(send, recv, op, root, o); },
        [&] { return comm.plan_reduce(send, recv, op, root, o); }, recv);
    checks.push_back([&, c, root, in_place] {
      const std::string what = "reduce root " + std::to_string(root);
      if (me == root) expect_total(recv, c, 0, what);
      if (!(in_place && me == root)) untouched(send, c, what);
    });
  }
  if (only.empty() || only == "reduce_scatter_block") {
    const int c = call++;
    std::vector<T>& send = filled(pn, c);
    std::vector<T>& recv = vec(n);
    run([&] { comm.reduce_scatter_block(send, recv, op, o); },
        [&] { return comm.ireduce_scatter_block(send, recv, op, o); },
        [&] { return comm.plan_reduce_scatter_block(send, recv, op, o); }, recv);
    checks.push_back([&, c] {
      expect_total(recv, c, static_cast<std::size_t>(me) * n, "reduce_scatter_block");
      untouched(send, c, "reduce_scatter_block");
    });
  }
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) it->wait();
  for (const auto& check : checks) check();
}

// Both operations, every way, at `sizes` (0, 1, not divisible by p, and long enough that the
// node phases cut parts into several chunks), with the runtime's choice; then with every
// algorithm by name. A non-commutative operation must be served by the algorithms `served` names
// ("allreduce recursive-doubling") and refused, with an error saying why, by those `refused`
// names; any other algorithm either refuses it or gets it right.
void check_user_ops(lanes::Communicator& comm, const std::vector<std::size_t>& sizes,
                    const std::vector<std::string>& served,
                    const std::vector<std::string>& refused) {
  int call = 0;
  for (const std::size_t n : sizes) {
    for (const Way way : {Way::blocking, Way::nonblocking, Way::plan}) {
      check_user_op(comm, moments_op(), n, way, {}, moments_term, moments_total, call);
      check_user_op(comm, mat_op(), n, way, {}, mat_term, mat_product, call);
    }
  }
  const auto p = static_cast<std::size_t>(comm.size());
  const auto named = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (const std::string coll : {"allreduce", "reduce", "reduce_scatter_block"}) {
    for (const std::string& algorithm : lanes::algorithms(coll)) {
      const std::string name = coll + " " + algorithm;
      const lanes::CallOptions o{.algorithm = algorithm};
      const std::size_t n = 2003;
      check_user_op(comm, moments_op(), n, Way::blocking, o, moments_term, moments_total, call,
                    coll);
      std::vector<Mat3> send(coll == "reduce_scatter_block" ? p * n : n), recv(n);
      std::string what;
      bool refusal = false;
      try {
        if (coll == "allreduce") comm.allreduce(send, recv, mat_op(), o);
        if (coll == "reduce") comm.reduce(send, recv, mat_op(), 0, o);
        if (coll == "reduce_scatter_block") comm.reduce_scatter_block(send, recv, mat_op(), o);
      } catch (const lanes::Error& e) {
        refusal = e.code() == lanes::Errc::invalid_argument;
        what = e.what();
        EXPECT_NE(what.find("does not combine in rank order"), std::string::npos) << what;
        EXPECT_NE(what.find("CallOptions::algorithm='" + algorithm + "'"), std::string::npos)
            << what;
      }
      if (refusal) {
        EXPECT_FALSE(named(served, name)) << name << ": " << what;
        continue;
      }
      EXPECT_FALSE(named(refused, name)) << name << " served a non-commutative operation";
      check_user_op(comm, mat_op(), n, Way::blocking, o, mat_term, mat_product, call, coll);
    }
  }
}

}  // namespace

TEST(Runtime, SingleProcessWithoutLauncher) {
  Env env{{"LANES_RAILS", "lo"}, {"PMIX_NAMESPACE", nullptr}};
  lanes::Runtime rt = lanes::Runtime::init();
  EXPECT_EQ(rt.bootstrap_name(), "single");
  lanes::Communicator world = rt.world();
  EXPECT_EQ(world.rank(), 0);
  EXPECT_EQ(world.size(), 1);
  EXPECT_EQ(world.node_rank(), 0);
  EXPECT_EQ(world.node_size(), 1);
  EXPECT_EQ(world.num_nodes(), 1);
  check_collectives(world, 1000);
  check_collectives(world, 0);
  check_reductions(world, 33);
  lanes::Communicator self = world.split(0, 0);
  EXPECT_EQ(self.size(), 1);
  check_collectives(self, 7);
  EXPECT_FALSE(world.split(-1, 0).valid());
}

TEST(Runtime, BadInputNamesTheProblem) {
  Env env{{"LANES_RAILS", "lo"}};
  lanes::Runtime rt = lanes::Runtime::init();
  lanes::Communicator w = rt.world();
  std::vector<int> v(10), v2(10);
  std::string what;
  EXPECT_EQ(code_of([&] { w.bcast(v, 1); }, &what), lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("root 1 is out of range"), std::string::npos) << what;
  EXPECT_EQ(code_of([&] { w.bcast(v, -1); }), lanes::Errc::invalid_argument);
  EXPECT_EQ(code_of([&] { w.scatter(v, v2, 3); }), lanes::Errc::invalid_argument);
  std::vector<int> small(5);
  EXPECT_EQ(code_of([&] { w.scatter(small, v2, 0); }, &what), lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("send must hold"), std::string::npos) << what;
  EXPECT_EQ(code_of([&] { w.alltoall(v, small); }, &what), lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("recv holds"), std::string::npos) << what;
  // Null data with a non-zero size.
  const std::span<std::byte> null_bytes(static_cast<std::byte*>(nullptr), std::size_t{16});
  EXPECT_EQ(code_of([&] { w.bcast_bytes(null_bytes, 0); }, &what), lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("null"), std::string::npos) << what;
  // Overlapping send and receive ranges.
  std::vector<int> buf(20);
  EXPECT_EQ(
      code_of([&] { w.alltoall(std::span(buf).first(10), std::span(buf).subspan(5, 10)); }, &what),
      lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("overlap"), std::string::npos) << what;
  EXPECT_EQ(code_of([&] { w.scatter(std::span(buf).first(10), std::span(buf).subspan(9, 10), 0); }),
            lanes::Errc::invalid_argument);
  // Unknown algorithm names list the known ones.
  EXPECT_EQ(code_of([&] { w.bcast(v, 0, {.algorithm = "telepathy"}); }, &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("binomial"), std::string::npos) << what;
  // Reductions: bitwise operations on floats, sizes that differ, partial overlap.
  std::vector<float> fl(4), fl2(4);
  EXPECT_EQ(code_of([&] { w.allreduce(fl, fl2, lanes::Op::bxor); }, &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("bxor does not apply to float32"), std::string::npos) << what;
  EXPECT_EQ(code_of([&] { w.allreduce(v, small, lanes::Op::sum); }, &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("both hold the vector"), std::string::npos) << what;
  EXPECT_EQ(code_of(
                [&] {
                  w.allreduce(std::span(buf).first(10), std::span(buf).subspan(5, 10),
                              lanes::Op::sum);
                },
                &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("overlap"), std::string::npos) << what;
  std::vector<std::byte> three(3), three2(3);
  EXPECT_EQ(
      code_of([&] { w.allreduce_bytes(three, three2, lanes::Datatype::int32, lanes::Op::sum); },
              &what),
      lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("whole number of int32"), std::string::npos) << what;
  EXPECT_EQ(code_of([&] { w.allreduce(v, v2, lanes::Op::sum, {.algorithm = "telepathy"}); }, &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("recursive-doubling"), std::string::npos) << what;
  // Zero sizes are fine.
  std::vector<int> none;
  w.allreduce(none, none, lanes::Op::sum);
  w.bcast(none, 0);
  w.scatter(none, none, 0);
  w.alltoall(none, none);
}

TEST(Runtime, UseAfterFinalizeThrows) {
  Env env{{"LANES_RAILS", "lo"}};
  lanes::Runtime rt = lanes::Runtime::init();
  lanes::Communicator w = rt.world();
  std::vector<int> v(4);
  w.bcast(v, 0);
  rt.finalize();
  rt.finalize();  // idempotent
  EXPECT_EQ(code_of([&] { w.bcast(v, 0); }), lanes::Errc::finalized);
  EXPECT_EQ(code_of([&] { (void)w.rank(); }), lanes::Errc::finalized);
  EXPECT_EQ(code_of([&] { (void)rt.world(); }), lanes::Errc::finalized);
  lanes::Runtime moved = std::move(rt);
  EXPECT_EQ(code_of([&] { (void)moved.world(); }), lanes::Errc::finalized);
}

TEST(Runtime, NullCommunicatorIsAnError) {
  lanes::Communicator none;
  EXPECT_FALSE(none.valid());
  std::vector<int> v(1);
  EXPECT_EQ(code_of([&] { none.bcast(v, 0); }), lanes::Errc::invalid_argument);
}

TEST(Runtime, UnknownRailIsAnErrorListingDevices) {
  Env env{{"LANES_RAILS", "nosuchnic0"}};
  std::string what;
  EXPECT_EQ(code_of([&] { (void)lanes::Runtime::init(); }, &what), lanes::Errc::topology);
  EXPECT_NE(what.find("nosuchnic0"), std::string::npos) << what;
  EXPECT_NE(what.find("lo"), std::string::npos) << what;
}

// A bad LANES_RULES or LANES_CALIBRATION file fails Runtime::init() with a message naming the
// file, the place in it and the field; a bad numeric variable names the variable.
TEST(Runtime, BadConfigurationFilesNameTheFileAndField) {
  const std::string dir = ::testing::TempDir();  // ends with a slash
  const std::string rules = dir + "lanes_test_rules_" + std::to_string(getpid()) + ".json";
  const std::string cal = dir + "lanes_test_calibration_" + std::to_string(getpid()) + ".cal";
  {
    std::ofstream(rules) << R"({"rules": [{"collective": "bcast", "algorithm": "binomial",
                                          "max_ranks": 1e10}]})";
    std::ofstream(cal) << "alpha_shm 1e-6\nrails true\n";
  }
  std::string what;
  {
    Env env{{"LANES_RAILS", "lo"}, {"PMIX_NAMESPACE", nullptr}, {"LANES_RULES", rules.c_str()}};
    EXPECT_EQ(code_of([] { (void)lanes::Runtime::init(); }, &what), lanes::Errc::invalid_argument);
    EXPECT_NE(what.find("LANES_RULES file '" + rules + "': rule 0 (bcast): \"max_ranks\""),
              std::string::npos)
        << what;
  }
  {
    Env env{{"LANES_RAILS", "lo"}, {"PMIX_NAMESPACE", nullptr}, {"LANES_CALIBRATION", cal.c_str()}};
    EXPECT_EQ(code_of([] { (void)lanes::Runtime::init(); }, &what), lanes::Errc::invalid_argument);
    EXPECT_NE(what.find("LANES_CALIBRATION file '" + cal + "': line 2: rails: 'true'"),
              std::string::npos)
        << what;
  }
  {
    Env env{{"LANES_RAILS", "lo"}, {"PMIX_NAMESPACE", nullptr}, {"LANES_TIMEOUT", "-5"}};
    EXPECT_EQ(code_of([] { (void)lanes::Runtime::init(); }, &what), lanes::Errc::invalid_argument);
    EXPECT_NE(what.find("LANES_TIMEOUT='-5'"), std::string::npos) << what;
  }
  std::remove(rules.c_str());
  std::remove(cal.c_str());
}

TEST(Runtime, AllgatherBootstrapValidatesArguments) {
  EXPECT_EQ(code_of([] {
              (void)lanes::Runtime::init(lanes::AllgatherBootstrap{3, 2, {}, ""});
            }),
            lanes::Errc::invalid_argument);
}

// Four ranks as threads on one node: on-node traffic through the shared-memory channels.
TEST(Runtime, ThreadsOnOneNodeUseSharedMemory) {
  for (const char* cma : {"auto", "0"}) {
    Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", nullptr}, {"LANES_CMA", cma}};
    run_ranks(4, [](int, lanes::Runtime& rt) {
      lanes::Communicator w = rt.world();
      EXPECT_EQ(w.num_nodes(), 1);
      EXPECT_EQ(w.node_size(), 4);
      EXPECT_EQ(w.node(), 0);
      EXPECT_EQ(rt.bootstrap_name(), "allgather");
      check_collectives(w, 1);
      check_collectives(w, 100003);
      check_reductions(w, 3);
      check_reductions(w, 70001);
      lanes::Communicator half = w.split(w.rank() / 2, -w.rank());
      EXPECT_EQ(half.size(), 2);
      EXPECT_EQ(half.rank(), 1 - w.rank() % 2);
      check_collectives(half, 5000);
    });
  }
}

// Small calls repeated with the same shapes take the path of shapes seen before, where schedules
// of a few on-node messages run without an execution: every round's data arrives, for two and
// four ranks of a node; then a size mismatch on such a shape fails both sides instead of hanging.
TEST(Runtime, RepeatedSmallCallsOnOneNode) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", nullptr}, {"LANES_TIMEOUT", "2"}};
  for (const int p : {2, 4}) {
    run_ranks(p, [p](int me, lanes::Runtime& rt) {
      lanes::Communicator w = rt.world();
      for (std::uint32_t round = 0; round < 50; ++round) {
        const int root = static_cast<int>(round) % p;
        std::uint32_t one[3] = {0, 0, 0};
        if (me == root) one[0] = round, one[1] = round + 1, one[2] = round + 2;
        w.bcast(std::span(one), root);
        ASSERT_EQ(one[2], round + 2) << "bcast round " << round;
        std::vector<std::uint32_t> send(static_cast<std::size_t>(p)), recv(send.size());
        for (int j = 0; j < p; ++j) send[static_cast<std::size_t>(j)] = round * 100 + me * 10 + j;
        w.alltoall(send, recv);
        for (int j = 0; j < p; ++j) {
          ASSERT_EQ(recv[static_cast<std::size_t>(j)], round * 100 + j * 10 + me) << "alltoall";
        }
        std::uint32_t mine = round * 10 + static_cast<std::uint32_t>(me), got = 0;
        w.scatter(std::span(send), std::span(&got, 1), root);
        ASSERT_EQ(got, round * 100 + root * 10 + me) << "scatter round " << round;
        w.gather(std::span(&mine, 1), std::span(recv), root);
        if (me == root) {
          for (int j = 0; j < p; ++j) ASSERT_EQ(recv[static_cast<std::size_t>(j)], round * 10 + j);
        }
        w.allgather(std::span(&mine, 1), std::span(recv));
        for (int j = 0; j < p; ++j) ASSERT_EQ(recv[static_cast<std::size_t>(j)], round * 10 + j);
      }
      if (p != 2) return;
      // Rank 1 expects more than rank 0 sends, on a shape both know: rank 1 fails with a
      // mismatch and revokes the communicator; rank 0's message fit its slot and it went on,
      // and its next call fails at once or as soon as it waits.
      std::uint32_t data[2] = {1, 2};
      if (me == 0) {
        w.bcast(std::span(data, 1), 0);
        try {
          w.barrier();
          ADD_FAILURE() << "a barrier on a revoked communicator returned";
        } catch (const lanes::Error& e) {
          EXPECT_EQ(e.code(), lanes::Errc::mismatch) << e.what();
          EXPECT_NE(std::string(e.what()).find("rank 1 failed"), std::string::npos) << e.what();
        }
      } else {
        try {
          w.bcast(std::span(data, 2), 0);
          ADD_FAILURE() << "a receive of 8 bytes took a message of 4";
        } catch (const lanes::Error& e) {
          EXPECT_EQ(e.code(), lanes::Errc::mismatch) << e.what();
          EXPECT_NE(std::string(e.what()).find("receive from rank 0"), std::string::npos)
              << e.what();
        }
        EXPECT_THROW(w.bcast(std::span(data, 1), 0), lanes::Error);
      }
    });
  }
}

// A typed alltoall's blocks hold whole elements: 5 uint32 on 2 ranks are an error (in every
// form), the same 20 bytes as bytes are two blocks of 10.
TEST(Runtime, TypedAlltoallBlocksHoldWholeElements) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", nullptr}};
  run_ranks(2, [](int me, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    std::vector<std::uint32_t> send(5, 1), recv(5);
    std::string what;
    EXPECT_EQ(code_of([&] { w.alltoall(send, recv); }, &what), lanes::Errc::invalid_argument);
    EXPECT_NE(what.find("5 elements of 4 bytes, not divisible into size() = 2"), std::string::npos)
        << what;
    EXPECT_EQ(code_of([&] { w.ialltoall(send, recv).wait(); }), lanes::Errc::invalid_argument);
    EXPECT_EQ(code_of([&] { w.plan_alltoall(send, recv); }), lanes::Errc::invalid_argument);
    w.alltoall_bytes(std::as_bytes(std::span(send)), std::as_writable_bytes(std::span(recv)));
    // Both ranks send the same bytes: each receives its 10-byte block of them twice.
    const auto* got = reinterpret_cast<const char*>(recv.data());
    const auto* mine = reinterpret_cast<const char*>(send.data()) + 10 * me;
    EXPECT_EQ(std::memcmp(got, mine, 10), 0);
    EXPECT_EQ(std::memcmp(got + 10, mine, 10), 0);
  });
}

// A runtime whose peer does not come to the closing synchronisation (stopped, or busy elsewhere)
// is destroyed within LANES_FINALIZE_TIMEOUT.
TEST(Runtime, FinalizeIsBounded) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", nullptr}, {"LANES_FINALIZE_TIMEOUT", "1"}};
  run_ranks(2, [](int me, lanes::Runtime& rt) {
    if (me == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    const auto start = std::chrono::steady_clock::now();
    rt.finalize();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(s, 5.0) << "rank " << me;  // the bound plus the checks' period, on a loaded machine
  });
}

// A program that polls a request with test() gets LANES_TIMEOUT as one that waits does: rank 1
// never joins the broadcast, and rank 0's polls end in Errc::timeout. Rank 1 stays away well past
// the timeout: the timeout counts from rank 0's last progress, and once rank 1 finalizes, its
// first node message would meet rank 0's pending receive (a size mismatch, not a timeout).
TEST(Runtime, PollingWithTestTimesOut) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", nullptr}, {"LANES_TIMEOUT", "1"}};
  run_ranks(2, [](int me, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    if (me == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(4000));
      return;
    }
    int value = 0;
    lanes::Request r = w.ibcast(std::span(&value, 1), 1);
    const auto start = std::chrono::steady_clock::now();
    try {
      while (!r.test()) {
      }
      ADD_FAILURE() << "the broadcast completed without its root";
    } catch (const lanes::Error& e) {
      EXPECT_EQ(e.code(), lanes::Errc::timeout) << e.what();
    }
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(s, 5.0);  // LANES_TIMEOUT plus the checks' period, with room for a loaded machine
  });
}

// No write after an error: rank 0's broadcast times out waiting for its root, rank 0 writes a
// canary into the buffer, and only then does rank 1 broadcast into it, eagerly (8 bytes) and by
// rendezvous or single copy (1 MiB), off the node over UCX and on it through the segment. Rank 0
// then progresses its rails and segment in a broadcast on another communicator, behind rank 1's
// late message; the canary must be intact afterwards. (With UCX's receives left posted after
// the failure, both off-node cases find the canary overwritten.)
class NoWriteAfterError : public ::testing::TestWithParam<std::tuple<const char*, std::size_t>> {};

TEST_P(NoWriteAfterError, CanarySurvivesALateRoot) {
  const auto [node_size, bytes] = GetParam();
  Env env{{"LANES_RAILS", "lo"},
          {"LANES_NODE_SIZE", node_size},
          {"LANES_TIMEOUT", "1"},
          {"LANES_FINALIZE_TIMEOUT", "2"}};
  std::atomic<bool> canary_written{false}, root_done{false};
  run_ranks(2, [&, bytes = bytes](int me, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    lanes::Communicator other = w.split(0, me);  // still usable after w failed
    std::vector<unsigned char> data(bytes, static_cast<unsigned char>(me == 1 ? 0x11 : 0));
    constexpr unsigned char kCanary = 0xCA;
    if (me == 0) {
      EXPECT_EQ(code_of([&] { w.bcast(std::span(data), 1); }), lanes::Errc::timeout);
      std::fill(data.begin(), data.end(), kCanary);
      canary_written = true;
      while (!root_done.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } else {
      while (!canary_written.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      try {
        w.bcast(std::span(data), 1);  // may fail (revoked, or its receiver gone): either is fine
      } catch (const lanes::Error&) {
      }
      root_done = true;
    }
    // Rank 0 progresses its rails and segment while rank 1's late message is there to be had.
    int token = me;
    other.bcast(std::span(&token, 1), 1);
    EXPECT_EQ(token, 1);
    rt.finalize();
    if (me == 0) {
      EXPECT_EQ(std::count(data.begin(), data.end(), kCanary), static_cast<long>(bytes))
          << "bytes written into the buffer after the call failed";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(OffAndOnTheNode, NoWriteAfterError,
                         ::testing::Combine(::testing::Values("1", nullptr),
                                            ::testing::Values(std::size_t{8},
                                                              std::size_t{1} << 20)));

// A second thread calling into a runtime while its first thread is inside a call is refused at
// once, without side effects: the first call completes and the communicator stays usable.
TEST(Runtime, SecondThreadInsideACallIsRefused) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", nullptr}};
  run_ranks(2, [](int me, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    int value = me == 1 ? 42 : 7;
    if (me == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // rank 0 waits meanwhile
      w.bcast(std::span(&value, 1), 1);
    } else {
      std::atomic<bool> entering{false};
      std::thread other([&] {
        while (!entering.load()) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        try {
          w.barrier();
          ADD_FAILURE() << "a second thread entered lanes while the first was inside";
        } catch (const lanes::Error& e) {
          EXPECT_EQ(e.code(), lanes::Errc::invalid_argument);
          EXPECT_NE(std::string(e.what()).find("not thread-safe"), std::string::npos) << e.what();
        }
      });
      entering = true;
      w.bcast(std::span(&value, 1), 1);
      other.join();
    }
    EXPECT_EQ(value, 42);
    w.barrier();
  });
}

// Three ranks as threads, each its own emulated node: everything over UCX on loopback, two rails.
TEST(Runtime, ThreadsOnEmulatedNodesUseRails) {
  Env env{{"LANES_RAILS", "lo,lo"}, {"LANES_NODE_SIZE", "1"}};
  run_ranks(3, [](int, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    EXPECT_EQ(w.num_nodes(), 3);
    EXPECT_EQ(w.node(), w.rank());
    check_collectives(w, 1);
    check_collectives(w, 70001);
    check_reductions(w, 1);
    check_reductions(w, 5003);
    lanes::Communicator odd = w.split(w.rank() % 2, 0);
    check_collectives(odd, 333);
  });
}

// No rank leaves a barrier before every rank entered it: the last to arrive comes late.
TEST(Runtime, BarrierWaitsForEveryRank) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", "2"}};
  std::atomic<int> arrived{0};
  run_ranks(3, [&](int r, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    for (int round = 1; round <= 3; ++round) {
      if (r == round % 3) std::this_thread::sleep_for(std::chrono::milliseconds(50));
      arrived.fetch_add(1);
      if (round == 2) {
        w.ibarrier().wait();
      } else {
        w.barrier();
      }
      EXPECT_GE(arrived.load(), 3 * round) << "rank " << r << " left barrier " << round << " early";
      w.barrier();  // nobody counts the next round before everyone checked this one
    }
  });
}

// Striping in proportion to LANES_RAIL_WEIGHTS (3:1 over two loopback rails), calls placed on the
// second rail alone with CallOptions::first_rail, and a first_rail beyond the rails.
TEST(Runtime, WeightedStripingAndFirstRail) {
  Env env{{"LANES_RAILS", "lo,lo"}, {"LANES_NODE_SIZE", "1"}, {"LANES_RAIL_WEIGHTS", "3,1"}};
  run_ranks(2, [](int, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    EXPECT_EQ(rt.num_rails(), 2);
    EXPECT_NE(rt.describe().find("drives lanes 0,1"), std::string::npos) << rt.describe();
    check_collectives(w, 1);
    check_collectives(w, 250001);  // 1 MB blocks: striped 3:1
    for (int first = 0; first < 2; ++first) {
      std::vector<std::uint32_t> data(100003, w.rank() == 1 ? 9u : 0u);
      w.bcast(data, 1, {.algorithm = "binomial", .lanes = 1, .first_rail = first});
      EXPECT_EQ(data.front(), 9u);
      EXPECT_EQ(data.back(), 9u);
    }
    std::vector<std::uint32_t> data(8);
    std::string what;
    EXPECT_EQ(
        code_of([&] { w.bcast(data, 0, {.algorithm = "", .lanes = 1, .first_rail = 2}); }, &what),
        lanes::Errc::invalid_argument);
    EXPECT_NE(what.find("first_rail"), std::string::npos) << what;
  });
}

TEST(Runtime, RailWeightsMustMatchTheRails) {
  Env env{{"LANES_RAILS", "lo,lo"}, {"LANES_NODE_SIZE", "1"}, {"LANES_RAIL_WEIGHTS", "3,1,1"}};
  std::string what;
  EXPECT_EQ(code_of([&] { lanes::Runtime::init(); }, &what), lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("LANES_RAIL_WEIGHTS gives 3 weights but there are 2 rails"),
            std::string::npos)
      << what;
}

// User operations on four ranks as threads on two emulated nodes (nodes of consecutive ranks:
// the full-lane algorithms combine in rank order), on the same ranks dealt to the nodes
// alternately (they do not), and on three of them (irregular; recursive doubling folds).
TEST(Runtime, UserOperations) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", "2"}};
  run_ranks(4, [](int, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    ASSERT_EQ(w.num_nodes(), 2);
    check_user_ops(w, {0, 1, 5, 30011},
                   {"allreduce recursive-doubling", "allreduce full-lane", "reduce binomial",
                    "reduce full-lane", "reduce_scatter_block pairwise"},
                   {"allreduce ring", "reduce_scatter_block ring"});
    // World ranks 0, 2, 1, 3: new ranks 0 and 2 on one node, 1 and 3 on the other.
    lanes::Communicator dealt = w.split(0, (w.rank() % 2) * 2 + w.rank() / 2);
    ASSERT_EQ(dealt.node(), dealt.rank() % 2);
    check_user_ops(
        dealt, {0, 7, 2003},
        {"allreduce recursive-doubling", "reduce binomial", "reduce_scatter_block pairwise"},
        {"allreduce ring", "allreduce full-lane", "reduce full-lane", "reduce_scatter_block ring"});
    lanes::Communicator three = w.split(w.rank() < 3 ? 0 : -1, 0);
    if (three.valid()) {
      check_user_ops(
          three, {1, 7, 2003},
          {"allreduce recursive-doubling", "reduce binomial", "reduce_scatter_block pairwise"},
          {"allreduce ring", "reduce_scatter_block ring"});
    }
  });
}

// A reduce's root combines a staged message's pieces as they arrive: a user operation that throws
// there fails the call on both ranks, the root with the operation's error, the sender with its
// message rejected (it would otherwise have returned, its message delivered).
TEST(Runtime, UserOperationThrowingWhileItsMessageArrives) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", "2"}};
  run_ranks(2, [](int me, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    const std::size_t n = 100003;  // staged in pieces
    std::vector<std::uint64_t> send(n, static_cast<std::uint64_t>(me)), recv(n);
    const lanes::UserOp<std::uint64_t> throwing{
        [](const std::uint64_t*, std::uint64_t*, std::size_t) {
          throw std::runtime_error("refused");
        }};
    std::string what;
    const lanes::Errc code =
        code_of([&] { w.reduce(send, recv, throwing, 0, {.algorithm = "linear"}); }, &what);
    if (me == 0) {
      EXPECT_EQ(code, lanes::Errc::invalid_argument);
      EXPECT_NE(what.find("the user operation threw: refused"), std::string::npos) << what;
    } else {
      EXPECT_NE(what.find("rejected"), std::string::npos) << what;
    }
  });
}

// Calls of one shape with different operations (two user operations, a user and a predefined
// one) get each their own operation; a nonblocking call and a plan keep theirs after the
// caller's UserOp is gone.
TEST(Runtime, UserOperationsAreNotConfused) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", "1"}};
  run_ranks(2, [](int me, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    const std::vector<std::uint32_t> send = {5u + static_cast<std::uint32_t>(me), 9u, 100u};
    std::vector<std::uint32_t> sum(3), mx(3), mn(3);
    const lanes::UserOp<std::uint32_t> max_op{
        [](const std::uint32_t* in, std::uint32_t* io, std::size_t n) {
          for (std::size_t i = 0; i < n; ++i) io[i] = std::max(in[i], io[i]);
        }};
    const lanes::UserOp<std::uint32_t> min_op{
        [](const std::uint32_t* in, std::uint32_t* io, std::size_t n) {
          for (std::size_t i = 0; i < n; ++i) io[i] = std::min(in[i], io[i]);
        }};
    for (int round = 0; round < 2; ++round) {
      w.allreduce(send, mx, max_op);
      w.allreduce(send, sum, lanes::Op::sum);
      w.allreduce(send, mn, min_op);
      EXPECT_EQ(mx, (std::vector<std::uint32_t>{6, 9, 100}));
      EXPECT_EQ(sum, (std::vector<std::uint32_t>{11, 18, 200}));
      EXPECT_EQ(mn, (std::vector<std::uint32_t>{5, 9, 100}));
    }
    // The operations' only copies are the call's: they count how often they ran.
    auto runs = std::make_shared<std::atomic<int>>(0);
    const auto counting = [&runs](bool commutative) {
      return lanes::UserOp<std::uint32_t>{
          [runs](const std::uint32_t* in, std::uint32_t* io, std::size_t n) {
            ++*runs;
            for (std::size_t i = 0; i < n; ++i) io[i] = in[i] * 10 + io[i];
          },
          commutative};
    };
    std::vector<std::uint32_t> later(3), planned(3);
    lanes::Request req = w.iallreduce(send, later, counting(false));
    lanes::Plan plan = w.plan_allreduce(send, planned, counting(false));
    req.wait();
    EXPECT_EQ(later, (std::vector<std::uint32_t>{5 * 10 + 6, 99, 1100}));
    for (int twice = 0; twice < 2; ++twice) {
      std::fill(planned.begin(), planned.end(), 0);
      plan.start();
      plan.wait();
      EXPECT_EQ(planned, later);
    }
    EXPECT_GE(runs->load(), 3);
  });
}

// LANES_CHECK=1: a user operation on one rank and a predefined one on another is a mismatch that
// says so; so are user operations of different element sizes. The communicator stays usable.
TEST(Runtime, UserOperationMismatchIsReported) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", "1"}, {"LANES_CHECK", "1"}};
  run_ranks(2, [](int me, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    std::vector<std::uint32_t> v(4, 1), r(4);
    const lanes::UserOp<std::uint32_t> add{
        [](const std::uint32_t* in, std::uint32_t* io, std::size_t n) {
          for (std::size_t i = 0; i < n; ++i) io[i] += in[i];
        }};
    std::string what;
    EXPECT_EQ(code_of(
                  [&] {
                    if (me == 0) {
                      w.allreduce(v, r, add);
                    } else {
                      w.allreduce(v, r, lanes::Op::sum);
                    }
                  },
                  &what),
              lanes::Errc::mismatch);
    EXPECT_NE(what.find("a user operation on one rank, a predefined one on the other"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("commutative user operation of 4-byte elements"), std::string::npos)
        << what;
    EXPECT_NE(what.find("sum of uint32"), std::string::npos) << what;
    std::vector<std::uint64_t> wide(2, 1), wide_r(2);
    const lanes::UserOp<std::uint64_t> add64{
        [](const std::uint64_t* in, std::uint64_t* io, std::size_t n) {
          for (std::size_t i = 0; i < n; ++i) io[i] += in[i];
        }};
    EXPECT_EQ(code_of(
                  [&] {
                    if (me == 0) {
                      w.allreduce(v, r, add);
                    } else {
                      w.allreduce(wide, wide_r, add64);
                    }
                  },
                  &what),
              lanes::Errc::mismatch);
    EXPECT_NE(what.find("8-byte elements"), std::string::npos) << what;
    w.allreduce(v, r, add);
    EXPECT_EQ(r, (std::vector<std::uint32_t>(4, 2)));
  });
}

// A user operation that throws fails the call with its message on the ranks that ran it.
TEST(Runtime, UserOperationThatThrowsFailsTheCall) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_NODE_SIZE", "1"}};
  run_ranks(2, [](int, lanes::Runtime& rt) {
    lanes::Communicator w = rt.world();
    std::vector<int> v(3, 1), r(3);
    const lanes::UserOp<int> bad{
        [](const int*, int*, std::size_t) { throw std::runtime_error("no such combination"); }};
    std::string what;
    // Recursive doubling: both ranks combine once both messages arrived.
    EXPECT_EQ(code_of([&] { w.allreduce(v, r, bad, {.algorithm = "recursive-doubling"}); }, &what),
              lanes::Errc::invalid_argument);
    EXPECT_NE(what.find("the user operation threw: no such combination"), std::string::npos)
        << what;
  });
}

// Arguments: an algorithm not in rank order named for a non-commutative operation (per call or
// by its variable), an empty function, sizes that are not whole elements.
TEST(Runtime, UserOperationBadInput) {
  Env env{{"LANES_RAILS", "lo"}, {"LANES_ALLREDUCE_ALGORITHM", "ring"}};
  lanes::Runtime rt = lanes::Runtime::init();
  lanes::Communicator w = rt.world();
  std::vector<Mat3> m(3, mat_term(0, 0, 0)), out(3);
  std::string what;
  EXPECT_EQ(code_of([&] { w.allreduce(m, out, mat_op()); }, &what), lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("LANES_ALLREDUCE_ALGORITHM='ring'"), std::string::npos) << what;
  EXPECT_NE(what.find("does not combine in rank order"), std::string::npos) << what;
  EXPECT_NE(what.find("recursive-doubling"), std::string::npos) << what;  // the ones that do
  EXPECT_EQ(
      code_of([&] { w.reduce_scatter_block(m, out, mat_op(), {.algorithm = "ring"}); }, &what),
      lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("CallOptions::algorithm='ring'"), std::string::npos) << what;
  // Named in rank order, or commutative: fine.
  w.allreduce(m, out, mat_op(), {.algorithm = "recursive-doubling"});
  EXPECT_EQ(out, m);
  std::vector<Moments> mo(5, moments_term(0, 1, 2)), mo_out(5);
  w.allreduce(mo, mo_out, moments_op());
  EXPECT_EQ(mo_out, mo);
  EXPECT_EQ(code_of([&] { w.allreduce(mo, mo_out, lanes::UserOp<Moments>{}); }, &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("has no function"), std::string::npos) << what;
  std::vector<std::byte> ten(10), ten2(10);
  const lanes::UserOpBytes three{[](const void*, void*, std::size_t) {}, 3};
  EXPECT_EQ(code_of([&] { w.allreduce_bytes(ten, ten2, three); }, &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("not a whole number of 3-byte elements"), std::string::npos) << what;
  const lanes::UserOpBytes none{[](const void*, void*, std::size_t) {}, 0};
  EXPECT_EQ(code_of([&] { w.reduce_bytes(ten, ten2, none, 0); }, &what),
            lanes::Errc::invalid_argument);
  EXPECT_NE(what.find("0 bytes"), std::string::npos) << what;
}
