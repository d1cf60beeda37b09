// Agreement on a step's outcome: every member throws the same kind of error, naming the member
// that failed, or goes on when none did.
#include <gtest/gtest.h>

#include <barrier>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "lib/agreement.hpp"

namespace lanes::detail {
namespace {

std::string what_of(const std::function<void()>& f, Errc& code) {
  try {
    f();
  } catch (const Error& e) {
    code = e.code();
    return e.what();
  }
  return "";
}

TEST(Agreement, AttemptKeepsTheCodeAndTheMessage) {
  const auto f = attempt([] { throw Error(Errc::topology, "no rail 'x'"); });
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->code, Errc::topology);
  EXPECT_EQ(f->message, "no rail 'x'");
  EXPECT_FALSE(attempt([] {}).has_value());
  EXPECT_EQ(attempt([] { throw std::bad_alloc(); })->code, Errc::resource);
}

TEST(Agreement, NobodyFailedNobodyThrows) {
  std::vector<std::optional<Failure>> none(4);
  EXPECT_NO_THROW(throw_if_any_failed(none, 0, "starting up"));
}

TEST(Agreement, EveryMemberNamesTheFailedRank) {
  std::vector<std::optional<Failure>> f(4);
  f[2] = Failure{Errc::resource, "/dev/shm is full"};
  for (int me = 0; me < 4; ++me) {
    Errc code = Errc::internal;
    const std::string what = what_of([&] { throw_if_any_failed(f, me, "starting up"); }, code);
    EXPECT_EQ(code, Errc::resource);
    EXPECT_NE(what.find("rank 2 of 4 failed while starting up: /dev/shm is full"),
              std::string::npos)
        << what;
    EXPECT_EQ(what.find("other rank"), std::string::npos) << what;
  }
}

TEST(Agreement, AFailedMemberReportsItsOwnFailureAndTheCount) {
  std::vector<std::optional<Failure>> f(5);
  f[1] = Failure{Errc::topology, "no rail 'a'"};
  f[3] = Failure{Errc::invalid_argument, "bad LANES_TIMEOUT"};
  Errc code = Errc::internal;
  std::string what = what_of([&] { throw_if_any_failed(f, 3, "starting up"); }, code);
  EXPECT_EQ(code, Errc::invalid_argument);
  EXPECT_NE(what.find("rank 3 of 5 failed while starting up: bad LANES_TIMEOUT (1 other rank "
                      "failed too)"),
            std::string::npos)
      << what;
  what = what_of([&] { throw_if_any_failed(f, 0, "starting up"); }, code);
  EXPECT_EQ(code, Errc::topology);
  EXPECT_NE(what.find("rank 1 of 5"), std::string::npos) << what;
}

TEST(Agreement, RecordsCarryPayloadsAndLongMessagesSafely) {
  std::vector<char> records(kOutcomeBytes * 3);
  put_outcome(&records[0], std::nullopt, "lanes-segment-name");
  put_outcome(&records[kOutcomeBytes], Failure{Errc::transport, std::string(1000, 'x')});
  put_outcome(&records[2 * kOutcomeBytes], std::nullopt);
  EXPECT_EQ(payload_of(&records[0]), "lanes-segment-name");
  Errc code = Errc::internal;
  const std::string what =
      what_of([&] { throw_if_any_failed(records.data(), 3, -1, "attaching"); }, code);
  EXPECT_EQ(code, Errc::transport);
  EXPECT_NE(what.find("rank 1 of 3 failed while attaching: xxx"), std::string::npos);
  EXPECT_LT(what.size(), kOutcomeBytes + 100);  // cut to the record, never read past it
}

// Members that exchange through threads (an allgather by hand): all throw, none waits.
TEST(Agreement, AgreeThrowsOnEveryMember) {
  constexpr int n = 3;
  std::vector<char> board(kOutcomeBytes * n);
  std::barrier sync(n);
  std::vector<std::string> whats(n);
  std::vector<std::thread> members;
  for (int me = 0; me < n; ++me) {
    members.emplace_back([&, me] {
      const ExchangeFn exchange = [&](const void* mine, void* all, std::size_t bytes) {
        std::memcpy(&board[bytes * static_cast<std::size_t>(me)], mine, bytes);
        sync.arrive_and_wait();
        std::memcpy(all, board.data(), bytes * n);
        sync.arrive_and_wait();
      };
      const std::optional<Failure> mine =
          me == 1 ? std::optional<Failure>(Failure{Errc::transport, "UCX failed"}) : std::nullopt;
      Errc code = Errc::internal;
      whats[static_cast<std::size_t>(me)] =
          what_of([&] { agree(exchange, n, me, mine, "opening rails"); }, code);
      EXPECT_EQ(code, Errc::transport);
    });
  }
  for (auto& t : members) t.join();
  for (const auto& w : whats) {
    EXPECT_NE(w.find("rank 1 of 3 failed while opening rails: UCX failed"), std::string::npos) << w;
  }
}

}  // namespace
}  // namespace lanes::detail
