// The usage example of the README, kept compiling and tested:
//   g++ -std=c++20 readme_example.cpp $(pkg-config --cflags --libs lanes) -o readme_example
//   mpirun -np 4 ./readme_example
#include <cstdio>
#include <lanes/lanes.hpp>
#include <numeric>
#include <vector>

int main() {
  lanes::Runtime rt = lanes::Runtime::init();  // PMIx under mpirun/prterun/srun
  lanes::Communicator world = rt.world();
  const int me = world.rank(), p = world.size();

  // Broadcast 1 Mi doubles from rank 0.
  std::vector<double> data(1 << 20);
  if (me == 0) std::iota(data.begin(), data.end(), 0.0);
  world.bcast(data, /*root=*/0);

  // Scatter one block of 1000 ints to every rank.
  std::vector<int> all(me == 0 ? 1000 * p : 0), mine(1000);
  if (me == 0) std::iota(all.begin(), all.end(), 0);
  world.scatter(all, mine, /*root=*/0);

  // Alltoall: block j of `out` goes to rank j.
  std::vector<long> out(p * 4, me), in(p * 4);
  world.alltoall(out, in);

  // Sub-communicators share the rails; collectives work the same way.
  lanes::Communicator half = world.split(/*color=*/me % 2, /*key=*/me);
  std::vector<int> token(8, half.rank() == 0 ? me : -1);
  half.bcast(token, 0);

  bool ok = data.back() == (1 << 20) - 1 && mine[0] == 1000 * me && in[4 * (p - 1)] == p - 1 &&
            token[7] == me % 2;
  std::printf("rank %d of %d (local rank %d, %d nodes): %s\n", me, p, world.node_rank(),
              world.num_nodes(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
