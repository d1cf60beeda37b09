// The public API in one process: a single-process runtime, argument checking, use after
// finalize, and several runtimes on threads of this process bootstrapped through the allgather
// callback (real UCX over loopback, real shared memory).
#include <gtest/gtest.h>
#include <unistd.h>

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
