// Runs lanes' collectives over every root and several sizes and checks
// every byte against values this program computes itself. Launch under mpirun (PMIx bootstrap).
//
//   collectives_check [--sizes 0,1,7,1048579,67108864]
//                     [--colls bcast,scatter,gather,alltoall,allgather,reduce,allreduce,
//                              barrier,reduce_scatter_block]
//                     [--mode blocking|nonblocking|plan] [--algorithms all] [--split]
//                     [--repeat N] [--memory shared]
// --algorithms all: every algorithm of each collective, chosen per call.
// nonblocking: all roots' calls of one size are in flight at once; plan: each plan runs twice.
// --memory shared: every buffer from lanes::Runtime::allocate (the shared heap, which node peers
// read in place); at least one must lie in the heap.
// Sizes: the bcast payload; scatter/alltoall use blocks of that size, or size/p (rounded up)
// above 8 MiB so that buffers stay near the payload. Reductions sum uint32 vectors of that many
// bytes (rounded up to whole elements; size/p above 8 MiB), in place every other root. barrier:
// one rank arrives late; every rank's entry and exit times (one host: one monotonic clock) must
// show that no rank left before the last one entered.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <lanes/lanes.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "huge_pages.hpp"

namespace {

// --memory shared: where buffers come from, and how many came from the heap.
const lanes::Runtime* g_runtime = nullptr;
std::unordered_map<void*, lanes::Memory> g_blocks;
long g_shared_blocks = 0;

// Elements are default-initialised (left unwritten): every buffer is filled before a call uses
// it, and a value-initialising vector would write each byte once more.
template <class T>
struct CheckAllocator {
  using value_type = T;
  CheckAllocator() = default;
  template <class U>
  explicit CheckAllocator(const CheckAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (g_runtime != nullptr) {
      lanes::Memory m = g_runtime->allocate(bytes);
      if (m.shared()) ++g_shared_blocks;
      void* p = m.data();
      g_blocks.emplace(p, std::move(m));
      return static_cast<T*>(p);
    }
    // Large ones with huge pages asked for (huge_pages.hpp).
    if (!lanes_tests::mapped(bytes)) return std::allocator<T>().allocate(n);
    return static_cast<T*>(lanes_tests::map_huge_pages(bytes));
  }
  void deallocate(T* p, std::size_t n) {
    if (g_blocks.erase(p) != 0) return;
    if (!lanes_tests::mapped(n * sizeof(T))) {
      std::allocator<T>().deallocate(p, n);
    } else {
      lanes_tests::unmap_huge_pages(p, n * sizeof(T));
    }
  }
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  bool operator==(const CheckAllocator&) const { return true; }
};
using Bytes = std::vector<std::uint8_t, CheckAllocator<std::uint8_t>>;
using Words = std::vector<std::uint32_t, CheckAllocator<std::uint32_t>>;

// `count` buffers of `n` elements each, built in place (not copies of one value-initialised
// buffer).
template <class Buffer>
std::vector<Buffer> buffers(std::size_t count, std::size_t n) {
  std::vector<Buffer> out(count);
  for (Buffer& b : out) b.resize(n);
  return out;
}

std::vector<std::size_t> parse_sizes(const std::string& s) {
  std::vector<std::size_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoull(item));
  return out;
}

// The byte at `index` of the data that `from` contributes for `to` in call `call`.
inline std::uint8_t pattern(int from, int to, std::size_t index, int call) {
  const std::uint64_t x =
      index * 131u + (index >> 9) * 7u + static_cast<std::uint64_t>(from) * 29u +
      static_cast<std::uint64_t>(to) * 53u + static_cast<std::uint64_t>(call) * 11u;
  return static_cast<std::uint8_t>(x ^ (x >> 8));
}

struct Checker {
  int rank;
  std::string where;
  long checks = 0;
  long failures = 0;

  void expect_block(const std::uint8_t* got, std::size_t n, int from, int to, int call,
                    const char* what) {
    ++checks;
    for (std::size_t i = 0; i < n; ++i) {
      if (got[i] != pattern(from, to, i, call)) {
        ++failures;
        std::fprintf(stderr, "FAIL %s rank %d: %s byte %zu of %zu is %u, expected %u\n",
                     where.c_str(), rank, what, i, n, got[i], pattern(from, to, i, call));
        return;
      }
    }
  }
};

// Whether the comma-separated `list` names `name`.
bool wants(const std::string& list, const std::string& name) {
  return ("," + list + ",").find("," + name + ",") != std::string::npos;
}

// Element `index` of the vector rank `from` contributes to reduction `call`.
inline std::uint32_t term(int from, std::size_t index, int call) {
  return static_cast<std::uint32_t>(index * 2654435761u +
                                    static_cast<std::uint64_t>(from) * 40503u +
                                    static_cast<std::uint64_t>(call) * 977u);
}

// The wrapping sum of every rank's vector, compared element by element.
void expect_sum(Checker& c, const Words& got, int p, int call, const char* what) {
  ++c.checks;
  for (std::size_t i = 0; i < got.size(); ++i) {
    std::uint32_t want = 0;
    for (int r = 0; r < p; ++r) want += term(r, i, call);
    if (got[i] != want) {
      ++c.failures;
      std::fprintf(stderr, "FAIL %s rank %d: %s element %zu of %zu is %u, expected %u\n",
                   c.where.c_str(), c.rank, what, i, got.size(), got[i], want);
      return;
    }
  }
}

void fill(std::uint8_t* p, std::size_t n, int from, int to, int call) {
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern(from, to, i, call);
}

enum class Mode { blocking, nonblocking, plan };

// One collective call, through the API `mode` selects. Nonblocking calls are queued in `pending`
// and completed by the caller (several collectives in flight at once); plans run twice.
struct Runner {
  lanes::Communicator& comm;
  Mode mode;
  lanes::CallOptions options;
  std::vector<lanes::Request> pending;

  template <class Blocking, class Start, class MakePlan, class Refill>
  void run(Blocking blocking, Start start, MakePlan make_plan, Refill refill) {
    switch (mode) {
      case Mode::blocking:
        blocking();
        break;
      case Mode::nonblocking:
        pending.push_back(start());
        break;
      case Mode::plan: {
        lanes::Plan plan = make_plan();
        for (int round = 0; round < 2; ++round) {
          refill();  // a second start with fresh inputs must see them
          plan.start();
          plan.wait();
        }
        break;
      }
    }
  }
  void finish() {
    // Complete in reverse order: completion must not depend on the order of waits.
    for (auto it = pending.rbegin(); it != pending.rend(); ++it) it->wait();
    pending.clear();
  }
};

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// A barrier (blocking, or nonblocking in the nonblocking mode) with rank `late` arriving 50 ms
// after the others.
void check_barrier(lanes::Communicator& comm, Mode mode, Checker& c, int late,
                   const lanes::CallOptions& o) {
  if (comm.rank() == late) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<double> mine = {now_s(), 0};
  if (mode == Mode::nonblocking) {
    comm.ibarrier(o).wait();
  } else {
    comm.barrier(o);
  }
  mine[1] = now_s();
  std::vector<double> all(2 * static_cast<std::size_t>(comm.size()));
  comm.allgather(mine, all);
  ++c.checks;
  double last_in = 0, first_out = 1e300;
  for (int r = 0; r < comm.size(); ++r) {
    last_in = std::max(last_in, all[2 * static_cast<std::size_t>(r)]);
    first_out = std::min(first_out, all[2 * static_cast<std::size_t>(r) + 1]);
  }
  if (first_out < last_in) {
    ++c.failures;
    std::fprintf(stderr, "FAIL %s rank %d: a rank left the barrier %.6f s before rank %d entered\n",
                 c.where.c_str(), c.rank, last_in - first_out, late);
  }
}

void run_checks(lanes::Communicator& comm, const std::vector<std::size_t>& sizes,
                const std::string& colls, Mode mode, Checker& c, int& call,
                const lanes::CallOptions& o = {}) {
  if (wants(colls, "barrier")) {
    for (int late = 0; late < std::min(comm.size(), 3); ++late)
      check_barrier(comm, mode, c, late, o);
  }
  const int p = comm.size();
  const auto up = static_cast<std::size_t>(p);
  const int me = comm.rank();
  Runner runner{comm, mode, o, {}};
  // Rooted collectives: in the nonblocking mode every root's call is in flight at once, each with
  // buffers of its own; otherwise each call completes before the next, which reuses the buffers
  // once checked (memory first touched costs more than the collective at the largest sizes).
  const bool in_flight = mode == Mode::nonblocking;
  const std::size_t slots = in_flight ? up : 1;
  auto slot = [slots](int root) { return static_cast<std::size_t>(root) % slots; };
  // Checks root's call now where the buffers are reused, after runner.finish() otherwise.
  auto each_root_checked = [&](int root, const std::function<void(int)>& check) {
    if (!in_flight) {
      check(root);
    } else if (root == p - 1) {
      runner.finish();
      for (int r = 0; r < p; ++r) check(r);
    }
  };
  for (std::size_t size : sizes) {
    const std::size_t block = size > (8u << 20) ? (size + up - 1) / up : size;
    if (wants(colls, "bcast")) {
      std::vector<Bytes> data = buffers<Bytes>(slots, size);
      const int first = call;
      auto check = [&](int root) {
        c.expect_block(data[slot(root)].data(), size, root, -1, first + root, "bcast");
      };
      for (int root = 0; root < p; ++root) {
        auto& d = data[slot(root)];
        const int id = first + root;
        auto refill = [&d, root, me, size, id] {
          if (me == root)
            fill(d.data(), size, root, -1, id);
          else
            std::fill(d.begin(), d.end(), 0xEE);
        };
        refill();
        runner.run([&] { comm.bcast(d, root, o); }, [&] { return comm.ibcast(d, root, o); },
                   [&] { return comm.plan_bcast(d, root, o); }, refill);
        each_root_checked(root, check);
      }
      call += p;
    }
    if (wants(colls, "scatter")) {
      std::vector<Bytes> send(slots), recv = buffers<Bytes>(slots, block);
      const int first = call;
      auto check = [&](int root) {
        c.expect_block(recv[slot(root)].data(), block, root, me, first + root, "scatter");
      };
      for (int root = 0; root < p; ++root) {
        auto& in = send[slot(root)];
        auto& out = recv[slot(root)];
        in.resize(me == root ? block * up : 0);  // refill() writes it
        const int id = first + root;
        auto refill = [&in, &out, root, me, block, up, id] {
          for (std::size_t j = 0; me == root && j < up; ++j) {
            fill(in.data() + block * j, block, root, static_cast<int>(j), id);
          }
          std::fill(out.begin(), out.end(), 0xEE);
        };
        refill();
        runner.run([&] { comm.scatter(in, out, root, o); },
                   [&] { return comm.iscatter(in, out, root, o); },
                   [&] { return comm.plan_scatter(in, out, root, o); }, refill);
        each_root_checked(root, check);
      }
      call += p;
    }
    if (wants(colls, "gather")) {
      std::vector<Bytes> send = buffers<Bytes>(slots, block), recv(slots);
      const int first = call;
      auto check = [&](int root) {
        for (std::size_t j = 0; me == root && j < up; ++j) {
          c.expect_block(recv[slot(root)].data() + block * j, block, static_cast<int>(j), -2,
                         first + root, "gather");
        }
      };
      for (int root = 0; root < p; ++root) {
        auto& in = send[slot(root)];
        auto& out = recv[slot(root)];
        out.assign(me == root ? block * up : 0, 0xEE);
        const int id = first + root;
        auto refill = [&in, &out, me, block, id] {
          fill(in.data(), block, me, -2, id);
          std::fill(out.begin(), out.end(), 0xEE);
        };
        refill();
        runner.run([&] { comm.gather(in, out, root, o); },
                   [&] { return comm.igather(in, out, root, o); },
                   [&] { return comm.plan_gather(in, out, root, o); }, refill);
        each_root_checked(root, check);
      }
      call += p;
    }
    if (wants(colls, "alltoall")) {
      Bytes send(block * up), recv(send.size(), 0xEE);
      const int id = call++;
      auto refill = [&] {
        for (std::size_t j = 0; j < up; ++j)
          fill(send.data() + block * j, block, me, static_cast<int>(j), id);
        std::fill(recv.begin(), recv.end(), 0xEE);
      };
      refill();
      runner.run([&] { comm.alltoall(send, recv, o); },
                 [&] { return comm.ialltoall(send, recv, o); },
                 [&] { return comm.plan_alltoall(send, recv, o); }, refill);
      runner.finish();
      for (std::size_t j = 0; j < up; ++j) {
        c.expect_block(recv.data() + block * j, block, static_cast<int>(j), me, id, "alltoall");
      }
    }
    const std::size_t elements = (block + 3) / 4;
    if (wants(colls, "allreduce")) {
      Words send(elements), recv(elements);
      const int id = call++;
      auto refill = [&] {
        for (std::size_t i = 0; i < elements; ++i) send[i] = term(me, i, id);
        std::fill(recv.begin(), recv.end(), 0xEEEEEEEEu);
      };
      refill();
      runner.run([&] { comm.allreduce(send, recv, lanes::Op::sum, o); },
                 [&] { return comm.iallreduce(send, recv, lanes::Op::sum, o); },
                 [&] { return comm.plan_allreduce(send, recv, lanes::Op::sum, o); }, refill);
      runner.finish();
      expect_sum(c, recv, p, id, "allreduce");
      if (mode == Mode::blocking) {
        const int again = call++;
        for (std::size_t i = 0; i < elements; ++i) send[i] = term(me, i, again);
        comm.allreduce(send, lanes::Op::sum, o);  // in place
        expect_sum(c, send, p, again, "allreduce in place");
      }
    }
    if (wants(colls, "reduce_scatter_block")) {
      // Blocks of `elements`; rank r receives the sum of every rank's block r.
      Words send(elements * up), recv(elements);
      const int id = call++;
      auto refill = [&] {
        for (std::size_t i = 0; i < send.size(); ++i) send[i] = term(me, i, id);
        std::fill(recv.begin(), recv.end(), 0xEEEEEEEEu);
      };
      refill();
      runner.run([&] { comm.reduce_scatter_block(send, recv, lanes::Op::sum, o); },
                 [&] { return comm.ireduce_scatter_block(send, recv, lanes::Op::sum, o); },
                 [&] { return comm.plan_reduce_scatter_block(send, recv, lanes::Op::sum, o); },
                 refill);
      runner.finish();
      ++c.checks;
      for (std::size_t i = 0; i < elements; ++i) {
        std::uint32_t want = 0;
        for (int r = 0; r < p; ++r)
          want += term(r, static_cast<std::size_t>(me) * elements + i, id);
        if (recv[i] != want) {
          ++c.failures;
          std::fprintf(stderr, "FAIL %s rank %d: reduce_scatter_block element %zu is %u, not %u\n",
                       c.where.c_str(), c.rank, i, recv[i], want);
          break;
        }
      }
    }
    if (wants(colls, "reduce")) {
      std::vector<Words> send = buffers<Words>(slots, elements);
      std::vector<Words> recv(slots);
      const int first = call;
      auto check = [&](int root) {
        if (me == root) expect_sum(c, recv[slot(root)], p, first + root, "reduce");
      };
      for (int root = 0; root < p; ++root) {
        auto& in = send[slot(root)];
        auto& out = recv[slot(root)];
        out.assign(me == root ? elements : 0, 0xEEEEEEEEu);
        const int id = first + root;
        auto refill = [&in, &out, me, elements, id] {
          for (std::size_t i = 0; i < elements; ++i) in[i] = term(me, i, id);
          std::fill(out.begin(), out.end(), 0xEEEEEEEEu);
        };
        refill();
        runner.run([&] { comm.reduce(in, out, lanes::Op::sum, root, o); },
                   [&] { return comm.ireduce(in, out, lanes::Op::sum, root, o); },
                   [&] { return comm.plan_reduce(in, out, lanes::Op::sum, root, o); }, refill);
        each_root_checked(root, check);
      }
      call += p;
    }
    if (wants(colls, "allgather")) {
      Bytes send(block), recv(block * up, 0xEE);
      const int id = call++;
      auto refill = [&] {
        fill(send.data(), block, me, -3, id);
        std::fill(recv.begin(), recv.end(), 0xEE);
      };
      refill();
      runner.run([&] { comm.allgather(send, recv, o); },
                 [&] { return comm.iallgather(send, recv, o); },
                 [&] { return comm.plan_allgather(send, recv, o); }, refill);
      runner.finish();
      for (std::size_t j = 0; j < up; ++j) {
        c.expect_block(recv.data() + block * j, block, static_cast<int>(j), -3, id, "allgather");
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {0, 1, 7, (1u << 20) + 3, 64u << 20};
  std::string colls =
      "bcast,scatter,alltoall,allgather,reduce,allreduce,barrier,reduce_scatter_block";
  bool split = false;
  int repeat = 1;
  Mode mode = Mode::blocking;
  bool every_algorithm = false;
  bool shared_memory = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc)
      sizes = parse_sizes(argv[++i]);
    else if (a == "--colls" && i + 1 < argc)
      colls = argv[++i];
    else if (a == "--split")
      split = true;
    else if (a == "--repeat" && i + 1 < argc)
      repeat = std::atoi(argv[++i]);
    else if (a == "--algorithms" && i + 1 < argc && std::string(argv[i + 1]) == "all") {
      every_algorithm = true;
      ++i;
    } else if (a == "--memory" && i + 1 < argc && std::string(argv[i + 1]) == "shared") {
      shared_memory = true;
      ++i;
    } else if (a == "--mode" && i + 1 < argc) {
      const std::string m = argv[++i];
      mode = m == "nonblocking" ? Mode::nonblocking : m == "plan" ? Mode::plan : Mode::blocking;
    } else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    lanes::Communicator world = rt.world();
    Checker c{world.rank(), "world"};
    if (shared_memory) g_runtime = &rt;
    int call = 0;
    for (int r = 0; r < repeat; ++r) {
      if (!every_algorithm) {
        run_checks(world, sizes, colls, mode, c, call);
        continue;
      }
      // Every algorithm of every collective asked for, chosen per call.
      for (const char* coll : {"bcast", "scatter", "gather", "alltoall", "allgather", "reduce",
                               "allreduce", "barrier", "reduce_scatter_block"}) {
        if (!wants(colls, coll)) continue;
        for (const std::string& algorithm : lanes::algorithms(coll)) {
          lanes::CallOptions o;
          o.algorithm = algorithm;
          run_checks(world, sizes, coll, mode, c, call, o);
        }
      }
    }
    if (split) {
      // Two halves by parity, each in reversed rank order.
      lanes::Communicator half = world.split(world.rank() % 2, -world.rank());
      Checker h{world.rank(), "split"};
      call = 100000;  // the halves make different numbers of calls: restart the numbering
      run_checks(half, sizes, colls, mode, h, call);
      c.checks += h.checks;
      c.failures += h.failures;
      // A communicator that leaves out rank 0 entirely.
      lanes::Communicator rest = world.split(world.rank() == 0 ? -1 : 1, world.rank());
      if (world.rank() == 0 && rest.valid()) {
        std::fprintf(stderr, "FAIL: negative color gave a valid communicator\n");
        ++c.failures;
      }
      if (rest.valid()) {
        Checker h2{world.rank(), "split-rest"};
        call = 200000;
        run_checks(rest, sizes, colls, mode, h2, call);
        c.checks += h2.checks;
        c.failures += h2.failures;
      }
    }
    if (shared_memory && g_shared_blocks == 0) {
      std::fprintf(stderr, "FAIL rank %d: --memory shared, but no buffer lay in the shared heap\n",
                   world.rank());
      ++c.failures;
    }
    g_runtime = nullptr;
    if (c.failures > 0) return 1;
    if (world.rank() == 0) {
      std::printf("collectives_check: %d ranks on %d nodes: %ld checks passed\n", world.size(),
                  world.num_nodes(), c.checks);
    }
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "collectives_check: %s\n", e.what());
    return 1;
  }
  return 0;
}
