// Copy bandwidth between two cores, 1-16 MiB: one thread on each of the first two CPUs this
// process may use, the first copying the source piece by piece into a ring of two 256 KiB pieces,
// the second copying each piece out as it lands: what a staged on-node message costs at best,
// every byte crossing from one core's cache to the other's. Beside it, the same pieces copied by
// one core (copy/one-core): the difference is what crossing the cores costs.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kPiece = 256 * 1024;
constexpr std::size_t kRing = 2;

// The first two CPUs of this process's affinity mask; false when it has fewer.
bool two_cpus(int& first, int& second) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  first = second = -1;
  for (int c = 0; c < CPU_SETSIZE && second < 0; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    (first < 0 ? first : second) = c;
  }
  return second >= 0;
}

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void bm_cross_core(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  int producer_cpu = 0, consumer_cpu = 0;
  if (!two_cpus(producer_cpu, consumer_cpu)) {
    state.SkipWithError("needs two CPUs");
    return;
  }
  std::vector<char> src(n, 1), dst(n, 0), ring(kPiece * kRing, 0);
  const std::size_t pieces = n / kPiece;
  std::atomic<std::size_t> produced{0}, consumed{0};
  std::atomic<std::size_t> rounds{0};  // rounds the producer may start
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    pin(producer_cpu);
    std::size_t round = 0;
    for (;;) {
      while (rounds.load(std::memory_order_acquire) == round) {
        if (stop.load(std::memory_order_acquire)) return;
      }
      for (std::size_t c = 0; c < pieces; ++c) {
        const std::size_t total = round * pieces + c;
        while (total - consumed.load(std::memory_order_acquire) >= kRing) {
        }
        std::memcpy(ring.data() + (c % kRing) * kPiece, src.data() + c * kPiece, kPiece);
        produced.store(total + 1, std::memory_order_release);
      }
      ++round;
    }
  });
  cpu_set_t before;  // this thread's mask, given back at the end: the next run needs both CPUs
  sched_getaffinity(0, sizeof before, &before);
  pin(consumer_cpu);
  std::size_t round = 0;
  for (auto _ : state) {
    rounds.store(round + 1, std::memory_order_release);
    for (std::size_t c = 0; c < pieces; ++c) {
      const std::size_t total = round * pieces + c;
      while (produced.load(std::memory_order_acquire) <= total) {
      }
      std::memcpy(dst.data() + c * kPiece, ring.data() + (c % kRing) * kPiece, kPiece);
      consumed.store(total + 1, std::memory_order_release);
    }
    ++round;
    benchmark::ClobberMemory();
  }
  stop.store(true, std::memory_order_release);
  producer.join();
  pthread_setaffinity_np(pthread_self(), sizeof before, &before);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(bm_cross_core)
    ->Name("copy/cross-core")
    ->RangeMultiplier(4)
    ->Range(1 << 20, 16 << 20)
    ->UseRealTime();

// Both copies on one core: into the ring piece, then out of it.
void bm_one_core(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  std::vector<char> src(n, 1), dst(n, 0), ring(kPiece * kRing, 0);
  for (auto _ : state) {
    for (std::size_t c = 0; c < n / kPiece; ++c) {
      char* piece = ring.data() + (c % kRing) * kPiece;
      std::memcpy(piece, src.data() + c * kPiece, kPiece);
      std::memcpy(dst.data() + c * kPiece, piece, kPiece);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * state.range(0));
}
BENCHMARK(bm_one_core)->Name("copy/one-core")->RangeMultiplier(4)->Range(1 << 20, 16 << 20);

}  // namespace
