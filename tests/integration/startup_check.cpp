// Start-up that fails on some ranks only: every rank must get a lanes::Error naming the rank that
// failed, and none may wait for the others. Each rank reports what init did and how long it took,
// then exits normally (an abort would let mpirun end the job and hide a hang).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <lanes/lanes.hpp>

int main() {
  const char* env_rank = std::getenv("OMPI_COMM_WORLD_RANK");
  const int launcher_rank = env_rank != nullptr ? std::atoi(env_rank) : -1;
  const auto t0 = std::chrono::steady_clock::now();
  const auto seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  try {
    lanes::Runtime rt = lanes::Runtime::init();
    std::printf("startup_check: rank %d started after %.2f s\n", launcher_rank, seconds());
  } catch (const lanes::Error& e) {
    std::printf("startup_check: rank %d failed after %.2f s: %s\n", launcher_rank, seconds(),
                e.what());
  }
  return 0;
}
