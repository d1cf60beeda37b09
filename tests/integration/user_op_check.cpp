// User-defined reduction operations across processes: a non-commutative one (the polynomial hash
// of a concatenation, each rank contributing its own string) and a commutative one on a 12-byte
// struct, through allreduce (also in place), reduce to every root and reduce_scatter_block;
// blocking, nonblocking (a size's calls all in flight, completed in reverse order) and as plans
// started twice; with the runtime's choice and every algorithm by name. Every element is checked
// against the combination in rank order this program computes; an algorithm named for the
// non-commutative operation either serves it so or refuses it, saying it does not combine in rank
// order. Launch under mpirun (PMIx bootstrap).
//
//   user_op_check [--sizes 0,1,7,100003]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <lanes/lanes.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

// A string as its hash h = sum of c_i B^(len-1-i) and B^len, both modulo 2^64: the hash of x
// followed by y is x.hash * y.power + y.hash. Associative, not commutative.
struct Text {
  std::uint64_t hash = 0;
  std::uint64_t power = 1;
  bool operator==(const Text&) const = default;
};

constexpr std::uint64_t kBase = 1000003;

Text concat(const Text& x, const Text& y) {
  return {x.hash * y.power + y.hash, x.power * y.power};
}

// Rank `rank`'s string at element i of call `call`: 1 to 4 characters.
Text text_term(int rank, std::size_t i, int call) {
  Text t;
  const std::size_t len = 1 + (i + static_cast<std::size_t>(rank)) % 4;
  for (std::size_t k = 0; k < len; ++k) {
    const std::uint64_t c = 'a' + (i * 7 + static_cast<std::size_t>(rank) * 13 +
                                   static_cast<std::size_t>(call) * 3 + k * 5) %
                                      26;
    t = concat(t, Text{c, kBase});
  }
  return t;
}

Text text_total(int p, std::size_t i, int call) {
  Text t = text_term(0, i, call);
  for (int r = 1; r < p; ++r) t = concat(t, text_term(r, i, call));
  return t;
}

const lanes::UserOp<Text> kConcat{[](const Text* in, Text* inout, std::size_t n) {
                                    for (std::size_t i = 0; i < n; ++i)
                                      inout[i] = concat(in[i], inout[i]);
                                  },
                                  false};

struct Tally {
  std::int32_t sum = 0;
  std::int32_t low = 0;
  std::int32_t count = 0;
  bool operator==(const Tally&) const = default;
};

Tally tally_term(int rank, std::size_t i, int call) {
  const auto v = static_cast<std::int32_t>(
      (i * 31 + static_cast<std::size_t>(rank) * 17 + static_cast<std::size_t>(call)) % 1000);
  return {v, v - rank, 1};
}

Tally tally_total(int p, std::size_t i, int call) {
  Tally t{0, tally_term(0, i, call).low, 0};
  for (int r = 0; r < p; ++r) {
    const Tally x = tally_term(r, i, call);
    t.sum += x.sum;
    t.low = std::min(t.low, x.low);
    t.count += x.count;
  }
  return t;
}

const lanes::UserOp<Tally> kTally{[](const Tally* in, Tally* inout, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    inout[i].sum += in[i].sum;
    inout[i].low = std::min(inout[i].low, in[i].low);
    inout[i].count += in[i].count;
  }
}};

enum class Mode { blocking, nonblocking, plan };

struct Checker {
  int rank;
  long checks = 0;
  long failures = 0;

  template <class T, class Total>
  void expect(const std::vector<T>& got, int p, int call, std::size_t offset, Total total,
              const std::string& what) {
    ++checks;
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (!(got[i] == total(p, offset + i, call))) {
        ++failures;
        std::fprintf(stderr, "FAIL rank %d: %s element %zu of %zu is not the rank-order result\n",
                     rank, what.c_str(), i, got.size());
        return;
      }
    }
  }
};

// One operation's calls of one size: allreduce (and in place when blocking), reduce to every
// root, reduce_scatter_block; `only` (when not empty) runs that collective alone.
template <class T, class Term, class Total>
void run_op(lanes::Communicator& comm, const lanes::UserOp<T>& op, std::size_t n, Mode mode,
            const lanes::CallOptions& o, const std::string& only, Term term, Total total,
            Checker& c, int& call, const std::string& label) {
  const int me = comm.rank();
  const int p = comm.size();
  std::vector<std::unique_ptr<std::vector<T>>> keep;
  std::vector<lanes::Request> pending;
  std::vector<std::function<void()>> checks;
  const auto vec = [&](std::size_t size, int fill_call) -> std::vector<T>& {
    keep.push_back(std::make_unique<std::vector<T>>(size));
    if (fill_call >= 0) {
      for (std::size_t i = 0; i < size; ++i) (*keep.back())[i] = term(me, i, fill_call);
    }
    return *keep.back();
  };
  const auto run = [&](auto blocking, auto start, auto make_plan, std::vector<T>& recv) {
    if (mode == Mode::blocking) {
      blocking();
    } else if (mode == Mode::nonblocking) {
      pending.push_back(start());
    } else {
      lanes::Plan plan = make_plan();
      for (int twice = 0; twice < 2; ++twice) {
        std::fill(recv.begin(), recv.end(), T{});
        plan.start();
        plan.wait();
      }
    }
  };
  const auto wants = [&](const char* coll) { return only.empty() || only == coll; };
  if (wants("allreduce")) {
    const int k = call++;
    auto& send = vec(n, k);
    auto& recv = vec(n, -1);
    run([&] { comm.allreduce(send, recv, op, o); },
        [&] { return comm.iallreduce(send, recv, op, o); },
        [&] { return comm.plan_allreduce(send, recv, op, o); }, recv);
    checks.push_back([&, k] { c.expect(recv, p, k, 0, total, label + " allreduce"); });
    if (mode == Mode::blocking) {
      const int k2 = call++;
      auto& data = vec(n, k2);
      comm.allreduce(data, op, o);
      checks.push_back([&, k2] { c.expect(data, p, k2, 0, total, label + " allreduce in place"); });
    }
  }
  for (int root = 0; root < p && wants("reduce"); ++root) {
    const int k = call++;
    auto& send = vec(n, k);
    const bool in_place = root % 2 == 0 && mode != Mode::plan && me == root;
    auto& recv = in_place ? send : vec(me == root ? n : 0, -1);
    run([&] { comm.reduce(send, recv, op, root, o); },
        [&] { return comm.ireduce(send, recv, op, root, o); },
        [&] { return comm.plan_reduce(send, recv, op, root, o); }, recv);
    if (me == root) {
      checks.push_back([&, k, root] {
        c.expect(recv, p, k, 0, total, label + " reduce root " + std::to_string(root));
      });
    }
  }
  if (wants("reduce_scatter_block")) {
    const int k = call++;
    auto& send = vec(static_cast<std::size_t>(p) * n, k);
    auto& recv = vec(n, -1);
    run([&] { comm.reduce_scatter_block(send, recv, op, o); },
        [&] { return comm.ireduce_scatter_block(send, recv, op, o); },
        [&] { return comm.plan_reduce_scatter_block(send, recv, op, o); }, recv);
    checks.push_back([&, k] {
      c.expect(recv, p, k, static_cast<std::size_t>(me) * n, total,
               label + " reduce_scatter_block");
    });
  }
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) it->wait();
  for (const auto& check : checks) check();
}

std::vector<std::size_t> parse_sizes(const std::string& s) {
  std::vector<std::size_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoull(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {0, 1, 7, 100003};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc) {
      sizes = parse_sizes(argv[++i]);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    lanes::Communicator world = rt.world();
    Checker c{world.rank()};
    int call = 0;
    for (const std::size_t n : sizes) {
      for (const Mode mode : {Mode::blocking, Mode::nonblocking, Mode::plan}) {
        run_op(world, kConcat, n, mode, {}, "", text_term, text_total, c, call, "concat");
        run_op(world, kTally, n, mode, {}, "", tally_term, tally_total, c, call, "tally");
      }
    }
    long refused = 0;
    for (const std::string coll : {"allreduce", "reduce", "reduce_scatter_block"}) {
      for (const std::string& algorithm : lanes::algorithms(coll)) {
        const lanes::CallOptions o{.algorithm = algorithm};
        const std::string label = coll + " " + algorithm;
        for (const std::size_t n : sizes) {
          run_op(world, kTally, n, Mode::blocking, o, coll, tally_term, tally_total, c, call,
                 "tally " + label);
          try {
            run_op(world, kConcat, n, Mode::blocking, o, coll, text_term, text_total, c, call,
                   "concat " + label);
          } catch (const lanes::Error& e) {
            // Refused before anything moved, on every rank alike.
            if (e.code() != lanes::Errc::invalid_argument ||
                std::string(e.what()).find("does not combine in rank order") == std::string::npos) {
              throw;
            }
            ++refused;
          }
        }
      }
    }
    if (c.failures > 0) return 1;
    if (world.rank() == 0) {
      std::printf(
          "user_op_check: %d ranks on %d nodes: %ld checks passed; %ld calls of algorithms not in "
          "rank order refused\n",
          world.size(), world.num_nodes(), c.checks, refused);
    }
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "user_op_check: %s\n", e.what());
    return 1;
  }
  return 0;
}
