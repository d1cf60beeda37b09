// A split whose node segment cannot be made on one rank: that rank (BAD_RANK, a node leader
// under a 1-block file-size limit, so growing the new segment fails with EFBIG, as a full
// /dev/shm would) and every other member must get a lanes::Error naming it, none may wait; the
// world must still work, and so must a split made once the limit is lifted. Each rank prints
// what happened and exits normally.
#include <sys/resource.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <lanes/lanes.hpp>
#include <vector>

namespace {

bool bcast_works(lanes::Communicator& comm, int value) {
  std::vector<int> v(100000, comm.rank() == 0 ? value : -1);
  comm.bcast(v, 0);
  for (int x : v) {
    if (x != value) return false;
  }
  return true;
}

}  // namespace

int main() {
  const char* bad_env = std::getenv("BAD_RANK");
  const int bad = bad_env != nullptr ? std::atoi(bad_env) : -1;
  lanes::Runtime rt = lanes::Runtime::init();
  lanes::Communicator world = rt.world();
  const int me = world.rank();
  rlimit old{};
  getrlimit(RLIMIT_FSIZE, &old);
  if (me == bad) {
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit tiny = old;
    tiny.rlim_cur = 512;
    setrlimit(RLIMIT_FSIZE, &tiny);
  }
  const auto t0 = std::chrono::steady_clock::now();
  try {
    lanes::Communicator half = world.split(/*color=*/0, /*key=*/me);
    std::printf("split_failure_check: rank %d split succeeded\n", me);
  } catch (const lanes::Error& e) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("split_failure_check: rank %d failed after %.2f s: %s\n", me, s, e.what());
  }
  if (me == bad) setrlimit(RLIMIT_FSIZE, &old);
  bool ok = false;
  try {
    ok = bcast_works(world, 7);
    lanes::Communicator again = world.split(/*color=*/me % 2, /*key=*/me);
    ok = ok && bcast_works(again, 11 + me % 2);
  } catch (const lanes::Error& e) {
    std::printf("split_failure_check: rank %d: %s\n", me, e.what());
    ok = false;
  }
  std::printf("split_failure_check: rank %d world and a later split %s\n", me,
              ok ? "ok" : "BROKEN");
  std::fflush(stdout);
  return 0;
}
