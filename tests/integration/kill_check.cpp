// One rank dies (SIGKILL) in the middle of a stream of broadcasts; every survivor must get a
// lanes::Error within a bounded time instead of hanging, then an error from its next call at
// once, and must finalize within 10 s. With --stop S the rank is stopped (SIGSTOP) instead and
// continued S seconds later: under LANES_TIMEOUT every rank, the stopped one once it runs
// again, must get the error the same way. Prints two lines per survivor:
//   kill_check: rank R got <code> after T ms: <message>
//   kill_check: rank R: next call failed after T ms, finalize took S s
// and exits 0 when all of it came within the bounds and nothing wrote into the broadcast buffer
// after the error (a canary written then, checked after finalize), 1 otherwise.
//
//   kill_check [--victim R] [--after-ms 300] [--bound-s 30] [--bytes 67108864] [--stop S]
//              [--memory shared]
// --memory shared: the broadcast buffer comes from the shared heap (Runtime::allocate), which the
// peers read in place, the dead one's included.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <lanes/lanes.hpp>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "huge_pages.hpp"

int main(int argc, char** argv) {
  int victim = -1;
  int after_ms = 300;
  double bound_s = 30;
  std::size_t bytes = 64u << 20;
  double stop_s = 0;  // > 0: SIGSTOP, then SIGCONT after this long
  bool shared_memory = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--victim")
      victim = std::atoi(argv[i + 1]);
    else if (a == "--after-ms")
      after_ms = std::atoi(argv[i + 1]);
    else if (a == "--bound-s")
      bound_s = std::atof(argv[i + 1]);
    else if (a == "--bytes")
      bytes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (a == "--stop")
      stop_s = std::atof(argv[i + 1]);
    else if (a == "--memory")
      shared_memory = std::string(argv[i + 1]) == "shared";
  }
  lanes::Runtime rt = lanes::Runtime::init();
  lanes::Communicator world = rt.world();
  if (victim < 0) victim = world.size() - 1;
  // Everyone learns the moment of death (wall clock: the ranks share a host or synced clocks).
  using wall = std::chrono::system_clock;
  std::int64_t kill_at_us = 0;
  if (world.rank() == 0) {
    kill_at_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     (wall::now() + std::chrono::milliseconds(after_ms)).time_since_epoch())
                     .count();
  }
  world.bcast(std::span(&kill_at_us, 1), 0);
  const wall::time_point kill_at{std::chrono::microseconds(kill_at_us)};
  // The victim dies only once every rank has received the kill time: a gather to the victim
  // needs nothing from it, so no survivor can be left waiting on it in this preamble. (Without
  // it, a rank slowed by load could still wait for the kill time when the victim died, and its
  // first message from the victim, still pending connection set-up, was lost with it.)
  std::vector<char> ready(world.rank() == victim ? world.size() : 0);
  world.gather(std::vector<char>{1}, ready, victim);
  if (world.rank() == victim && stop_s > 0) {
    // A child process continues the victim; it only sleeps and signals (fork of a process with
    // threads: nothing but async-signal-safe calls in the child).
    const pid_t victim_pid = getpid();
    const auto wake =
        kill_at + std::chrono::duration_cast<wall::duration>(std::chrono::duration<double>(stop_s));
    const auto wait_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(wake - wall::now()).count();
    if (fork() == 0) {
      timespec ts{static_cast<time_t>(wait_ns / 1000000000),
                  static_cast<long>(wait_ns % 1000000000)};
      while (nanosleep(&ts, &ts) != 0) {
      }
      kill(victim_pid, SIGCONT);
      _exit(0);
    }
  }
  if (world.rank() == victim) {
    std::thread([kill_at, stop_s] {
      std::this_thread::sleep_until(kill_at);
      raise(stop_s > 0 ? SIGSTOP : SIGKILL);
    }).detach();
  }
  lanes_tests::TestBuffer ordinary(shared_memory ? 0 : bytes);
  lanes::Memory heap_block = shared_memory ? rt.allocate(bytes) : lanes::Memory();
  const std::span<char> data = shared_memory ? heap_block.as<char>() : ordinary.span();
  if (shared_memory && !heap_block.shared()) {
    std::printf("kill_check: rank %d: FAIL: the buffer is not in the shared heap\n", world.rank());
    return 1;
  }
  std::fill(data.begin(), data.end(), 1);
  long rounds = 0;
  try {
    for (;; ++rounds) {
      world.bcast(data, static_cast<int>(rounds % world.size()));
      const double s = std::chrono::duration<double>(wall::now() - kill_at).count();
      if (s > bound_s + 5) {
        std::printf("kill_check: rank %d never saw an error, %.1f s after the kill: FAIL\n",
                    world.rank(), s);
        return 1;
      }
    }
  } catch (const lanes::Error& e) {
    const double late_ms = std::chrono::duration<double, std::milli>(wall::now() - kill_at).count();
    bool in_time = late_ms <= bound_s * 1000;
    std::printf("kill_check: rank %d got '%s' %.0f ms after the kill (%s, %ld rounds): %s\n",
                world.rank(), lanes::to_string(e.code()), late_ms, in_time ? "in time" : "LATE",
                rounds, e.what());
    // Nothing may write into the buffer once the call returned with an error, not even a peer
    // that runs again (a stopped one) while this rank finalizes: a canary, checked at the end.
    constexpr char kCanary = static_cast<char>(0xCA);
    std::fill(data.begin(), data.end(), kCanary);
    // A survivor that carries on: its next call fails at once, and it finalizes in a bound.
    const auto again = wall::now();
    bool second = false;
    try {
      world.bcast(data, 0);
    } catch (const lanes::Error&) {
      second = true;
    }
    const double again_ms = std::chrono::duration<double, std::milli>(wall::now() - again).count();
    const int me = world.rank();
    // A stopped victim must find its peers alive once it runs again (else it would see them
    // gone rather than the revocation).
    if (stop_s > 0) {
      std::this_thread::sleep_until(kill_at + std::chrono::duration_cast<wall::duration>(
                                                  std::chrono::duration<double>(stop_s + 1.5)));
    }
    const auto closing = wall::now();
    rt.finalize();
    const double closing_s = std::chrono::duration<double>(wall::now() - closing).count();
    const auto overwritten =
        std::count_if(data.begin(), data.end(), [](char c) { return c != kCanary; });
    if (overwritten != 0) {
      std::printf("kill_check: rank %d: FAIL: %zu bytes of the buffer written after the error\n",
                  me, static_cast<std::size_t>(overwritten));
    }
    const bool ok = second && again_ms < 1000 && closing_s < 10 && overwritten == 0;
    std::printf("kill_check: rank %d: next call %s after %.1f ms, finalize took %.2f s%s\n", me,
                second ? "failed" : "SUCCEEDED", again_ms, closing_s, ok ? "" : ": LATE");
    std::fflush(stdout);
    return in_time && ok ? 0 : 1;
  }
}
