// Ranks that pass different counts to one collective, without LANES_CHECK: the rank that sees
// the wrong size fails with a mismatch and revokes the communicator, and every other rank gets a
// lanes::Error too, from the call itself or from the barrier after it, within a bound. Six cases
// (bcast with the root's count larger and smaller, scatter with the root's count smaller,
// gather, alltoall and allgather with one rank's count larger), each at a small and a large
// size, each on a fresh communicator split from the world, which stays healthy throughout.
// Prints one line per rank and exits 0 when every case failed on every rank in time.
//
//   mismatch_check [--bound-s 5]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <lanes/lanes.hpp>
#include <string>
#include <vector>

namespace {

using Call = std::function<void(lanes::Communicator&, std::size_t)>;

struct Case {
  const char* name;
  Call call;
};

// The rank whose count differs: the last one, so that it is not the root (0) in rooted cases.
bool odd_one(const lanes::Communicator& c) {
  return c.rank() == c.size() - 1;
}

std::vector<Case> cases() {
  return {
      {"bcast, the root's count larger",
       [](lanes::Communicator& c, std::size_t n) {
         std::vector<int> v(c.rank() == 0 ? 2 * n : n, 1);
         c.bcast(v, 0);
       }},
      {"bcast, the root's count smaller",
       [](lanes::Communicator& c, std::size_t n) {
         std::vector<int> v(c.rank() == 0 ? n / 2 : n, 1);
         c.bcast(v, 0);
       }},
      {"scatter, the root's count smaller",
       [](lanes::Communicator& c, std::size_t n) {
         const std::size_t mine = c.rank() == 0 ? n / 2 : n;
         std::vector<int> send(c.rank() == 0 ? mine * static_cast<std::size_t>(c.size()) : 0, 1);
         std::vector<int> recv(mine);
         c.scatter(send, recv, 0);
       }},
      {"gather, one rank's count larger",
       [](lanes::Communicator& c, std::size_t n) {
         std::vector<int> send(odd_one(c) ? 2 * n : n, 1);
         std::vector<int> recv(c.rank() == 0 ? n * static_cast<std::size_t>(c.size()) : 0);
         c.gather(send, recv, 0);
       }},
      {"alltoall, one rank's count larger",
       [](lanes::Communicator& c, std::size_t n) {
         const std::size_t block = odd_one(c) ? 2 * n : n;
         std::vector<int> send(block * static_cast<std::size_t>(c.size()), 1), recv(send.size());
         c.alltoall(send, recv);
       }},
      {"allgather, one rank's count larger",
       [](lanes::Communicator& c, std::size_t n) {
         const std::size_t block = odd_one(c) ? 2 * n : n;
         std::vector<int> send(block, 1), recv(block * static_cast<std::size_t>(c.size()));
         c.allgather(send, recv);
       }},
  };
}

}  // namespace

int main(int argc, char** argv) {
  double bound_s = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--bound-s") bound_s = std::atof(argv[i + 1]);
  }
  lanes::Runtime rt = lanes::Runtime::init();
  lanes::Communicator world = rt.world();
  int failures = 0, checked = 0;
  double worst = 0;
  for (const Case& c : cases()) {
    for (const std::size_t n : {std::size_t{10}, std::size_t{300000}}) {
      lanes::Communicator comm = world.split(0, world.rank());
      const auto start = std::chrono::steady_clock::now();
      std::string outcome;
      try {
        c.call(comm, n);
        comm.barrier();
        outcome = "no error";
      } catch (const lanes::Error& e) {
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        worst = std::max(worst, s);
        if (s > bound_s) outcome = "LATE (" + std::to_string(s) + " s): " + e.what();
      }
      ++checked;
      if (!outcome.empty()) {
        ++failures;
        std::printf("mismatch_check: rank %d: FAIL %s, %zu ints: %s\n", world.rank(), c.name, n,
                    outcome.c_str());
      }
      world.barrier();  // the world is untouched: the next case starts together
    }
  }
  std::printf("mismatch_check: rank %d: %d of %d cases failed in time (slowest %.2f s)%s\n",
              world.rank(), checked - failures, checked, worst, failures == 0 ? "" : " FAIL");
  return failures == 0 ? 0 : 1;
}
