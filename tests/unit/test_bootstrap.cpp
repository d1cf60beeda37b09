// Bootstraps that need no launcher: the single-process one, the allgather one with threads standing
// in for ranks, and PMIx detection from the environment.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <barrier>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "lanes/error.hpp"
#include "transport/bootstrap/bootstrap.hpp"

namespace lanes::transport {
namespace {

std::vector<std::byte> pattern(int rank, std::size_t len, int round) {
  std::vector<std::byte> v(len);
  for (std::size_t i = 0; i < len; ++i) {
    v[i] = static_cast<std::byte>(
        (static_cast<std::size_t>(rank) * 131 + i * 7 + static_cast<std::size_t>(round) * 29 + 1) &
        0xff);
  }
  return v;
}

// Ranks as threads: each deposits its block in its own slot, waits for all, copies every slot
// out, and waits again so that no slot is overwritten by the next round while still being read.
class ThreadGroup {
 public:
  explicit ThreadGroup(int size) : slots_(static_cast<std::size_t>(size)), barrier_(size) {}

  AllgatherFn fn(int rank) {
    return [this, rank](const void* mine, void* all, std::size_t bytes) {
      auto& slot = slots_[static_cast<std::size_t>(rank)];
      const auto* src = static_cast<const std::byte*>(mine);
      slot.assign(src, src + bytes);
      barrier_.arrive_and_wait();
      auto* out = static_cast<std::byte*>(all);
      bool sizes_agree = true;
      for (std::size_t r = 0; r < slots_.size(); ++r) {
        if (slots_[r].size() != bytes) {
          sizes_agree = false;
        } else if (bytes > 0) {
          std::memcpy(out + r * bytes, slots_[r].data(), bytes);
        }
      }
      barrier_.arrive_and_wait();
      // Thrown only after the last barrier so that the other threads are not left waiting.
      if (!sizes_agree) throw std::runtime_error("ranks disagree on the block size");
    };
  }

 private:
  std::vector<std::vector<std::byte>> slots_;
  std::barrier<> barrier_;
};

// Saves the PMIx variables, clears them for the test and puts them back afterwards.
class PmixEnvGuard {
 public:
  PmixEnvGuard() {
    for (char** env = environ; *env != nullptr; ++env) {
      const std::string entry(*env);
      const auto eq = entry.find('=');
      const std::string name = entry.substr(0, eq);
      if (name.starts_with("PMIX_")) {
        saved_.emplace_back(name, eq == std::string::npos ? "" : entry.substr(eq + 1));
      }
    }
    for (const auto& [name, value] : saved_) unsetenv(name.c_str());
  }
  ~PmixEnvGuard() {
    clear();
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  PmixEnvGuard(const PmixEnvGuard&) = delete;
  PmixEnvGuard& operator=(const PmixEnvGuard&) = delete;

  static void clear() {
    std::vector<std::string> names;
    for (char** env = environ; *env != nullptr; ++env) {
      const std::string entry(*env);
      if (entry.starts_with("PMIX_")) names.push_back(entry.substr(0, entry.find('=')));
    }
    for (const auto& name : names) unsetenv(name.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
};

template <typename F>
void expect_error(F&& f, Errc code, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no lanes::Error thrown (expected one mentioning '" << needle << "')";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

AllgatherFn noop() {
  return [](const void*, void*, std::size_t) {};
}

TEST(SingleBootstrap, RankSizePlacement) {
  auto boot = make_single_bootstrap();
  EXPECT_STREQ(boot->name(), "single");
  EXPECT_EQ(boot->rank(), 0);
  EXPECT_EQ(boot->size(), 1);
  const Placement p = boot->placement();
  EXPECT_EQ(p.node_key, this_host_name());
  EXPECT_EQ(p.local_rank, 0);
  EXPECT_EQ(p.local_size, 1);
}

TEST(SingleBootstrap, AllgatherCopies) {
  auto boot = make_single_bootstrap();
  const auto mine = pattern(0, 100, 0);
  std::vector<std::byte> all(100);
  boot->allgather(mine.data(), all.data(), mine.size());
  EXPECT_EQ(all, mine);

  // In place and zero bytes are both fine.
  boot->allgather(all.data(), all.data(), all.size());
  EXPECT_EQ(all, mine);
  boot->allgather(nullptr, nullptr, 0);
}

TEST(SingleBootstrap, Allgatherv) {
  auto boot = make_single_bootstrap();
  const auto mine = pattern(0, 17, 3);
  const auto all = allgatherv(*boot, mine);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], mine);
  const auto empty = allgatherv(*boot, {});
  ASSERT_EQ(empty.size(), 1u);
  EXPECT_TRUE(empty[0].empty());
}

TEST(HostName, NonEmptyAndStable) {
  const std::string name = this_host_name();
  EXPECT_FALSE(name.empty());
  EXPECT_EQ(name, this_host_name());
}

TEST(AllgatherBootstrap, ThreadsAsRanks) {
  constexpr int kSize = 5;
  ThreadGroup group(kSize);
  std::vector<std::string> failures(kSize);

  auto rank_main = [&](int rank) {
    auto& failure = failures[static_cast<std::size_t>(rank)];
    try {
      // Ranks 0-2 on one node, 3-4 on another.
      auto boot = make_allgather_bootstrap(rank, kSize, group.fn(rank), rank < 3 ? "n0" : "n1");
      if (boot->rank() != rank || boot->size() != kSize || std::string(boot->name()) != "allgather")
        failure += "wrong rank/size/name; ";
      const Placement p = boot->placement();
      if (p.node_key != (rank < 3 ? "n0" : "n1")) failure += "wrong node key; ";
      if (p.local_rank != -1 || p.local_size != -1) failure += "local rank/size should be -1; ";

      // Fixed-size rounds, including an empty one.
      int round = 0;
      for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{13}, std::size_t{4096}}) {
        const auto mine = pattern(rank, len, round);
        std::vector<std::byte> all(len * kSize);
        boot->allgather(mine.data(), all.data(), len);
        for (int r = 0; r < kSize; ++r) {
          const auto want = pattern(r, len, round);
          if (!std::equal(want.begin(), want.end(), all.begin() + static_cast<long>(r * len)))
            failure += "allgather of " + std::to_string(len) + " bytes: wrong block of rank " +
                       std::to_string(r) + "; ";
        }
        ++round;
      }

      // Variable sizes: rank 0 contributes nothing, the others differ.
      auto len_of = [](int r) { return static_cast<std::size_t>(r * r * 11); };
      auto got = allgatherv(*boot, pattern(rank, len_of(rank), 50));
      if (got.size() != std::size_t{kSize})
        failure += "allgatherv returned the wrong number of blocks; ";
      for (int r = 0; r < kSize && r < static_cast<int>(got.size()); ++r) {
        if (got[static_cast<std::size_t>(r)] != pattern(r, len_of(r), 50))
          failure += "allgatherv: wrong block of rank " + std::to_string(r) + "; ";
      }

      // Everyone empty: no second round, still one (empty) block per rank.
      got = allgatherv(*boot, {});
      if (got.size() != std::size_t{kSize}) failure += "empty allgatherv: wrong count; ";
      for (const auto& block : got) {
        if (!block.empty()) failure += "empty allgatherv: non-empty block; ";
      }
    } catch (const std::exception& e) {
      failure += std::string("exception: ") + e.what();
    }
  };

  std::vector<std::thread> threads;
  for (int r = 0; r < kSize; ++r) threads.emplace_back(rank_main, r);
  for (auto& t : threads) t.join();
  for (int r = 0; r < kSize; ++r) {
    EXPECT_TRUE(failures[static_cast<std::size_t>(r)].empty())
        << "rank " << r << ": " << failures[static_cast<std::size_t>(r)];
  }
}

TEST(AllgatherBootstrap, EmptyNodeKeyMeansHostName) {
  auto boot = make_allgather_bootstrap(0, 1, noop(), "");
  EXPECT_EQ(boot->placement().node_key, this_host_name());
}

TEST(AllgatherBootstrap, InvalidArgumentsNamed) {
  expect_error([] { make_allgather_bootstrap(0, 0, noop(), "n"); }, Errc::invalid_argument, "size");
  expect_error([] { make_allgather_bootstrap(0, -3, noop(), "n"); }, Errc::invalid_argument,
               "size");
  expect_error([] { make_allgather_bootstrap(-1, 4, noop(), "n"); }, Errc::invalid_argument,
               "rank");
  expect_error([] { make_allgather_bootstrap(4, 4, noop(), "n"); }, Errc::invalid_argument, "rank");
  expect_error([] { make_allgather_bootstrap(0, 1, AllgatherFn{}, "n"); }, Errc::invalid_argument,
               "fn");
}

TEST(AllgatherBootstrap, UserExceptionBecomesBootstrapError) {
  auto boot = make_allgather_bootstrap(
      0, 1, [](const void*, void*, std::size_t) { throw std::runtime_error("store unreachable"); },
      "n");
  int x = 0;
  int y = 0;
  expect_error([&] { boot->allgather(&x, &y, sizeof(x)); }, Errc::bootstrap, "store unreachable");

  auto odd = make_allgather_bootstrap(
      0, 1, [](const void*, void*, std::size_t) { throw 42; }, "n");
  expect_error([&] { odd->allgather(&x, &y, sizeof(x)); }, Errc::bootstrap, "allgather");
}

TEST(PmixServerPresent, FollowsEnvironment) {
  PmixEnvGuard guard;
  EXPECT_FALSE(pmix_server_present());

  setenv("PMIX_NAMESPACE", "job.1", 1);
  EXPECT_TRUE(pmix_server_present());
  unsetenv("PMIX_NAMESPACE");

  for (const char* name :
       {"PMIX_SERVER_URI", "PMIX_SERVER_URI2", "PMIX_SERVER_URI4", "PMIX_SERVER_URI41"}) {
    setenv(name, "job.0;tcp4://127.0.0.1:1", 1);
    EXPECT_TRUE(pmix_server_present()) << name;
    unsetenv(name);
    EXPECT_FALSE(pmix_server_present()) << name;
  }

  // Other PMIx variables alone do not mean a server launched us.
  setenv("PMIX_RANK", "0", 1);
  setenv("PMIX_MCA_ptl_base_verbose", "0", 1);
  EXPECT_FALSE(pmix_server_present());
}

}  // namespace
}  // namespace lanes::transport
