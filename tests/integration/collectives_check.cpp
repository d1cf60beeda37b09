// Runs bcast, scatter and alltoall through lanes over every root and several sizes and checks
// every byte against values this program computes itself. Launch under mpirun (PMIx bootstrap).
//
//   collectives_check [--sizes 0,1,7,1048579,67108864] [--colls bcast,scatter,alltoall]
//                     [--split] [--repeat N]
// Sizes: the bcast payload; scatter/alltoall use blocks of that size, or size/p (rounded up)
// above 8 MiB so that buffers stay near the payload.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lanes/lanes.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

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

void fill(std::uint8_t* p, std::size_t n, int from, int to, int call) {
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern(from, to, i, call);
}

void run_checks(lanes::Communicator& comm, const std::vector<std::size_t>& sizes,
                const std::string& colls, Checker& c, int& call) {
  const int p = comm.size();
  const int me = comm.rank();
  for (std::size_t size : sizes) {
    const std::size_t block =
        size > (8u << 20) ? (size + static_cast<std::size_t>(p) - 1) / static_cast<std::size_t>(p)
                          : size;
    if (colls.find("bcast") != std::string::npos) {
      std::vector<std::uint8_t> data(size);
      for (int root = 0; root < p; ++root, ++call) {
        if (me == root)
          fill(data.data(), size, root, -1, call);
        else
          std::fill(data.begin(), data.end(), 0xEE);
        comm.bcast(data, root);
        c.expect_block(data.data(), size, root, -1, call, "bcast");
      }
    }
    if (colls.find("scatter") != std::string::npos) {
      std::vector<std::uint8_t> send, recv(block);
      for (int root = 0; root < p; ++root, ++call) {
        send.assign(me == root ? block * static_cast<std::size_t>(p) : 0, 0);
        for (int j = 0; me == root && j < p; ++j) {
          fill(send.data() + block * static_cast<std::size_t>(j), block, root, j, call);
        }
        std::fill(recv.begin(), recv.end(), 0xEE);
        comm.scatter(send, recv, root);
        c.expect_block(recv.data(), block, root, me, call, "scatter");
      }
    }
    if (colls.find("alltoall") != std::string::npos) {
      std::vector<std::uint8_t> send(block * static_cast<std::size_t>(p));
      std::vector<std::uint8_t> recv(send.size(), 0xEE);
      for (int j = 0; j < p; ++j) {
        fill(send.data() + block * static_cast<std::size_t>(j), block, me, j, call);
      }
      comm.alltoall(send, recv);
      for (int j = 0; j < p; ++j) {
        c.expect_block(recv.data() + block * static_cast<std::size_t>(j), block, j, me, call,
                       "alltoall");
      }
      ++call;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes = {0, 1, 7, (1u << 20) + 3, 64u << 20};
  std::string colls = "bcast,scatter,alltoall";
  bool split = false;
  int repeat = 1;
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
    else {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    lanes::Communicator world = rt.world();
    Checker c{world.rank(), "world"};
    int call = 0;
    for (int r = 0; r < repeat; ++r) run_checks(world, sizes, colls, c, call);
    if (split) {
      // Two halves by parity, each in reversed rank order.
      lanes::Communicator half = world.split(world.rank() % 2, -world.rank());
      Checker h{world.rank(), "split"};
      call = 100000;  // the halves make different numbers of calls: restart the numbering
      run_checks(half, sizes, colls, h, call);
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
        run_checks(rest, sizes, colls, h2, call);
        c.checks += h2.checks;
        c.failures += h2.failures;
      }
    }
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
