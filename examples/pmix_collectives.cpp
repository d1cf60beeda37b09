// lanes without MPI: the processes find each other through PMIx (mpirun, prterun or
// srun --mpi=pmix provide it), then broadcast, scatter and exchange data through lanes.
//   mpirun -np 4 ./pmix_collectives          (or: prterun -n 4 ..., srun --mpi=pmix -n 4 ...)
#include <cstdint>
#include <cstdio>
#include <lanes/lanes.hpp>
#include <vector>

int main() {
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    lanes::Communicator world = rt.world();
    const int me = world.rank();
    const auto p = static_cast<std::size_t>(world.size());
    if (me == 0)
      std::printf("bootstrap: %s\n%s", rt.bootstrap_name().c_str(), rt.describe().c_str());

    // bcast: 16 MiB of 64-bit words from the last rank.
    const int root = world.size() - 1;
    std::vector<std::uint64_t> words(2u << 20);
    for (std::size_t i = 0; me == root && i < words.size(); ++i) words[i] = i * 3 + 1;
    world.bcast(words, root);

    // scatter: rank 0 hands out block i (1000 floats) to rank i.
    std::vector<float> blocks(me == 0 ? 1000 * p : 0), block(1000);
    for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<float>(i / 1000);
    world.scatter(blocks, block, 0);

    // alltoall: every rank sends its rank number to every other rank.
    std::vector<int> send(p, me), recv(p, -1);
    world.alltoall(send, recv);

    bool ok = words.back() == (words.size() - 1) * 3 + 1 && block.front() == static_cast<float>(me);
    for (std::size_t j = 0; j < p; ++j) ok = ok && recv[j] == static_cast<int>(j);
    std::printf("rank %d: bcast, scatter and alltoall %s\n", me, ok ? "correct" : "WRONG");
    return ok ? 0 : 1;
  } catch (const lanes::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
