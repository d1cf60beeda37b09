// The v-variants across processes: scatterv, gatherv, allgatherv and alltoallv with blocks of a
// size per rank (empty ones among them), at displacements in reverse rank order with gaps, for
// every root, with the default algorithm and every one by name; blocking and nonblocking (a
// size's calls all in flight, completed in reverse order), in bytes and typed. Every byte of every
// receive buffer is checked: each block holds its sender's values, every byte outside the blocks
// still holds the canary. Then argument errors, thrown on every rank alike before anything moves.
// With --mismatch (run with LANES_CHECK=1): calls whose two ends disagree on a block's size fail
// on every rank with a mismatch error naming the block, and the communicator stays usable.
// Launch under mpirun (PMIx bootstrap).
//
//   vcollectives_check [--mismatch]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <lanes/lanes.hpp>
#include <string>
#include <vector>

namespace {

using Sizes = std::vector<std::size_t>;
constexpr std::byte kCanary{0xee};

std::byte value(int call, int from, int to, std::size_t i) {
  return static_cast<std::byte>((call * 131 + from * 31 + to * 7 + static_cast<int>(i)) % 251);
}

// Rank `r`'s block in call `call` at base size `base`: some empty, others of different sizes.
std::size_t block_size(int call, int r, std::size_t base) {
  if ((r * 7 + call * 3) % 5 == 0) return 0;
  return base * static_cast<std::size_t>(1 + (r + call) % 3) + static_cast<std::size_t>(r);
}

// The pair (from, to)'s block in an alltoallv.
std::size_t pair_size(int call, int from, int to, std::size_t base) {
  if ((from + 2 * to + call) % 4 == 0) return 0;
  return base * static_cast<std::size_t>(1 + (from * 3 + to + call) % 3) +
         static_cast<std::size_t>(from);
}

// Displacements of blocks `sizes` laid out in reverse rank order with a gap of 3 bytes after each;
// returns the buffer's size.
std::size_t reverse_layout(const Sizes& sizes, Sizes& displs) {
  displs.assign(sizes.size(), 0);
  std::size_t at = 1;
  for (std::size_t k = sizes.size(); k-- > 0;) {
    displs[k] = at;
    at += sizes[k] + 3;
  }
  return at;
}

struct Checker {
  int rank;
  long checks = 0;
  long failures = 0;
  void fail(const std::string& what) {
    if (failures++ < 10) std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  }
  // `buffer` holds block b of `sizes`/`displs` from `from(b)` and the canary elsewhere.
  void blocks(const std::vector<std::byte>& buffer, const Sizes& sizes, const Sizes& displs,
              int call, const std::function<int(std::size_t)>& from,
              const std::function<int(std::size_t)>& to, const std::string& label) {
    std::vector<char> inside(buffer.size(), 0);
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      for (std::size_t i = 0; i < sizes[b]; ++i) {
        inside[displs[b] + i] = 1;
        if (buffer[displs[b] + i] != value(call, from(b), to(b), i)) {
          fail(label + ": block " + std::to_string(b) + " byte " + std::to_string(i) + " wrong");
          return;
        }
      }
    }
    for (std::size_t i = 0; i < buffer.size(); ++i) {
      if (inside[i] == 0 && buffer[i] != kCanary) {
        fail(label + ": byte " + std::to_string(i) + " outside every block was written");
        return;
      }
    }
    ++checks;
  }
};

// One call's buffers and how to check them, kept alive while it is in flight.
struct Pending {
  lanes::Request request;
  std::vector<std::byte> send, recv;
  Sizes send_counts, send_displs, recv_counts, recv_displs;
  std::function<void()> check;
};

enum class Mode { blocking, nonblocking };

// Prepares call `call` of `coll` at `base` (root `root`), runs it or starts it.
void run_one(lanes::Communicator& comm, const std::string& coll, int root, std::size_t base,
             int call, Mode mode, const lanes::CallOptions& o, Checker& c, Pending& x) {
  const int p = comm.size();
  const int me = comm.rank();
  const auto pz = static_cast<std::size_t>(p);
  const std::string label = coll + " '" + o.algorithm + "' root " + std::to_string(root) +
                            " base " + std::to_string(base) + " call " + std::to_string(call);
  const bool nb = mode == Mode::nonblocking;
  auto fill = [&](std::vector<std::byte>& buf, const Sizes& sizes, const Sizes& displs, int from,
                  const std::function<int(std::size_t)>& to) {
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      for (std::size_t i = 0; i < sizes[b]; ++i) buf[displs[b] + i] = value(call, from, to(b), i);
    }
  };
  if (coll == "scatterv") {
    Sizes sizes(pz);
    for (int r = 0; r < p; ++r) sizes[static_cast<std::size_t>(r)] = block_size(call, r, base);
    if (me == root) {
      x.send_counts = sizes;
      x.send.assign(reverse_layout(sizes, x.send_displs), std::byte{0});
      fill(x.send, sizes, x.send_displs, root, [](std::size_t b) { return static_cast<int>(b); });
    }
    x.recv.assign(sizes[static_cast<std::size_t>(me)] + 2, kCanary);
    const auto recv = std::span(x.recv).first(sizes[static_cast<std::size_t>(me)]);
    if (nb) {
      x.request = comm.iscatterv_bytes(x.send, x.send_counts, x.send_displs, recv, root, o);
    } else {
      comm.scatterv_bytes(x.send, x.send_counts, x.send_displs, recv, root, o);
    }
    const Sizes mine{sizes[static_cast<std::size_t>(me)]}, at{0};
    x.check = [&c, &x, mine, at, call, root, me, label] {
      c.blocks(
          x.recv, mine, at, call, [root](std::size_t) { return root; },
          [me](std::size_t) { return me; }, label);
    };
  } else if (coll == "gatherv") {
    Sizes sizes(pz);
    for (int r = 0; r < p; ++r) sizes[static_cast<std::size_t>(r)] = block_size(call, r, base);
    x.send.assign(sizes[static_cast<std::size_t>(me)], std::byte{0});
    fill(x.send, {x.send.size()}, {0}, me, [root](std::size_t) { return root; });
    if (me == root) {
      x.recv_counts = sizes;
      x.recv.assign(reverse_layout(sizes, x.recv_displs), kCanary);
    }
    if (nb) {
      x.request = comm.igatherv_bytes(x.send, x.recv, x.recv_counts, x.recv_displs, root, o);
    } else {
      comm.gatherv_bytes(x.send, x.recv, x.recv_counts, x.recv_displs, root, o);
    }
    if (me == root) {
      x.check = [&c, &x, call, root, label] {
        c.blocks(
            x.recv, x.recv_counts, x.recv_displs, call,
            [](std::size_t b) { return static_cast<int>(b); }, [root](std::size_t) { return root; },
            label);
      };
    }
  } else if (coll == "allgatherv") {
    x.recv_counts.assign(pz, 0);
    for (int r = 0; r < p; ++r)
      x.recv_counts[static_cast<std::size_t>(r)] = block_size(call, r, base);
    x.recv.assign(reverse_layout(x.recv_counts, x.recv_displs), kCanary);
    x.send.assign(x.recv_counts[static_cast<std::size_t>(me)], std::byte{0});
    fill(x.send, {x.send.size()}, {0}, me, [](std::size_t) { return -1; });
    if (nb) {
      x.request = comm.iallgatherv_bytes(x.send, x.recv, x.recv_counts, x.recv_displs, o);
    } else {
      comm.allgatherv_bytes(x.send, x.recv, x.recv_counts, x.recv_displs, o);
    }
    x.check = [&c, &x, call, label] {
      c.blocks(
          x.recv, x.recv_counts, x.recv_displs, call,
          [](std::size_t b) { return static_cast<int>(b); }, [](std::size_t) { return -1; }, label);
    };
  } else {  // alltoallv
    x.send_counts.assign(pz, 0);
    x.recv_counts.assign(pz, 0);
    for (int r = 0; r < p; ++r) {
      x.send_counts[static_cast<std::size_t>(r)] = pair_size(call, me, r, base);
      x.recv_counts[static_cast<std::size_t>(r)] = pair_size(call, r, me, base);
    }
    x.send.assign(reverse_layout(x.send_counts, x.send_displs), std::byte{0});
    fill(x.send, x.send_counts, x.send_displs, me,
         [](std::size_t b) { return static_cast<int>(b); });
    x.recv.assign(reverse_layout(x.recv_counts, x.recv_displs), kCanary);
    if (nb) {
      x.request = comm.ialltoallv_bytes(x.send, x.send_counts, x.send_displs, x.recv, x.recv_counts,
                                        x.recv_displs, o);
    } else {
      comm.alltoallv_bytes(x.send, x.send_counts, x.send_displs, x.recv, x.recv_counts,
                           x.recv_displs, o);
    }
    x.check = [&c, &x, call, me, label] {
      c.blocks(
          x.recv, x.recv_counts, x.recv_displs, call,
          [](std::size_t b) { return static_cast<int>(b); }, [me](std::size_t) { return me; },
          label);
    };
  }
}

// Every collective, algorithm, root and size, blocking and nonblocking.
void run_all(lanes::Communicator& comm, Checker& c, int& call) {
  for (const std::string coll : {"scatterv", "gatherv", "allgatherv", "alltoallv"}) {
    std::vector<std::string> names{""};
    for (const std::string& n : lanes::algorithms(coll)) names.push_back(n);
    const bool rooted = coll == "scatterv" || coll == "gatherv";
    for (const std::size_t base : {std::size_t{1}, std::size_t{1000}, std::size_t{70000}}) {
      for (int root = 0; root < (rooted ? comm.size() : 1); ++root) {
        for (const std::string& name : names) {
          Pending x;
          run_one(comm, coll, root, base, call++, Mode::blocking, {.algorithm = name}, c, x);
          if (x.check) x.check();
        }
        // Nonblocking: every algorithm's call in flight, completed in reverse order.
        std::vector<Pending> flight(names.size());
        for (std::size_t k = 0; k < names.size(); ++k) {
          run_one(comm, coll, root, base, call++, Mode::nonblocking, {.algorithm = names[k]}, c,
                  flight[k]);
        }
        for (std::size_t k = names.size(); k-- > 0;) {
          flight[k].request.wait();
          if (flight[k].check) flight[k].check();
        }
      }
    }
  }
}

// The typed forms: counts and displacements in elements of int.
void run_typed(lanes::Communicator& comm, Checker& c) {
  const int p = comm.size();
  const int me = comm.rank();
  const auto pz = static_cast<std::size_t>(p);
  Sizes counts(pz), displs(pz);
  std::vector<int> all;
  for (int r = 0; r < p; ++r) {
    counts[static_cast<std::size_t>(r)] = static_cast<std::size_t>(r + 1);
    displs[static_cast<std::size_t>(r)] = all.size() + 1;  // one element of gap before each
    all.push_back(-1);
    for (int i = 0; i <= r; ++i) all.push_back(1000 * r + i);
  }
  std::vector<int> mine(static_cast<std::size_t>(me + 1));
  comm.scatterv(all, counts, displs, mine, 0);
  std::vector<int> gathered(all.size(), -1);
  comm.allgatherv(mine, gathered, counts, displs);
  if (gathered != all) {
    c.fail("typed scatterv then allgatherv: wrong elements");
  } else {
    ++c.checks;
  }
  std::vector<int> back(me == 0 ? all.size() : 0, -1);
  comm.igatherv(mine, back, counts, displs, 0).wait();
  if (me == 0 && back != all) {
    c.fail("typed igatherv: wrong elements");
  } else {
    ++c.checks;
  }
}

// Errors every rank makes alike: thrown as invalid_argument before anything moves.
void run_errors(lanes::Communicator& comm, Checker& c) {
  const auto pz = static_cast<std::size_t>(comm.size());
  std::vector<std::byte> buf(64), out(64);
  const Sizes ones(pz, 1), zeros(pz, 0);
  Sizes steps(pz);
  for (std::size_t i = 0; i < pz; ++i) steps[i] = i;
  const Sizes past(pz, 64);
  const auto expect_error = [&](const char* what, const std::function<void()>& f) {
    try {
      f();
      c.fail(std::string(what) + ": no error");
    } catch (const lanes::Error& e) {
      if (e.code() != lanes::Errc::invalid_argument) {
        c.fail(std::string(what) + ": " + e.what());
      } else {
        ++c.checks;
      }
    }
  };
  const std::span<std::byte> one = std::span(out).first(1);
  expect_error("root out of range", [&] { comm.scatterv_bytes(buf, ones, steps, one, -1); });
  expect_error("counts of the wrong length", [&] {
    comm.allgatherv_bytes(std::span(buf).first(1), out, Sizes(pz + 1, 1), Sizes(pz + 1, 0));
  });
  expect_error("block past the buffer",
               [&] { comm.alltoallv_bytes(buf, ones, past, out, ones, steps); });
  if (pz > 1) {
    expect_error("overlapping receive blocks",
                 [&] { comm.alltoallv_bytes(buf, ones, steps, out, ones, zeros); });
  }
  expect_error("unknown algorithm", [&] {
    comm.alltoallv_bytes(buf, ones, steps, out, ones, steps, {.algorithm = "no-such"});
  });
  // The communicator is still in step.
  comm.alltoallv_bytes(buf, ones, steps, out, ones, steps);
  ++c.checks;
}

// LANES_CHECK=1: disagreeing ends fail on every rank, naming the block; then a good call.
void run_mismatch(lanes::Communicator& comm, Checker& c) {
  const int p = comm.size();
  const auto pz = static_cast<std::size_t>(p);
  std::vector<std::byte> buf(64 * pz), out(64 * pz);
  Sizes steps(pz), ones(pz, 1);
  for (std::size_t i = 0; i < pz; ++i) steps[i] = 2 * i;
  const auto expect_mismatch = [&](const char* what, const char* says,
                                   const std::function<void()>& f) {
    try {
      f();
      c.fail(std::string(what) + ": no error");
    } catch (const lanes::Error& e) {
      if (e.code() != lanes::Errc::mismatch ||
          std::string(e.what()).find(says) == std::string::npos) {
        c.fail(std::string(what) + ": " + e.what());
      } else {
        ++c.checks;
      }
    }
  };
  // The last rank receives 2 bytes where the root sends 1.
  expect_mismatch("scatterv", "scatterv size mismatch", [&] {
    const std::size_t want = comm.rank() == p - 1 && p > 1 ? 2 : 1;
    comm.scatterv_bytes(buf, ones, steps, std::span(out).first(want), 0);
  });
  // Rank 0 expects 2 bytes from the last rank, which sends it 1.
  expect_mismatch("alltoallv", "alltoallv size mismatch", [&] {
    Sizes recv = ones;
    if (comm.rank() == 0 && p > 1) recv[pz - 1] = 2;
    comm.alltoallv_bytes(buf, ones, steps, out, recv, steps);
  });
  comm.alltoallv_bytes(buf, ones, steps, out, ones, steps);
  ++c.checks;
}

}  // namespace

int main(int argc, char** argv) {
  const bool mismatch = argc > 1 && std::string(argv[1]) == "--mismatch";
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    lanes::Communicator world = rt.world();
    Checker c{world.rank()};
    if (mismatch) {
      run_mismatch(world, c);
    } else {
      int call = 0;
      run_all(world, c, call);
      run_typed(world, c);
      run_errors(world, c);
    }
    if (c.failures > 0) return 1;
    if (world.rank() == 0) {
      std::printf("vcollectives_check: %d ranks on %d nodes: %ld checks passed%s\n", world.size(),
                  world.num_nodes(), c.checks, mismatch ? " (mismatches)" : "");
    }
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "vcollectives_check: %s\n", e.what());
    return 1;
  }
  return 0;
}
