// With LANES_CHECK=1, ranks that call collectives inconsistently all fail with a message naming
// the mismatch instead of hanging or corrupting data, and the communicator stays usable.
// Needs at least 3 ranks.
#include <cstdio>
#include <cstring>
#include <functional>
#include <lanes/lanes.hpp>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect_error(const char* name, lanes::Errc code, const std::string& must_mention,
                  const std::function<void()>& call, int rank) {
  try {
    call();
    std::fprintf(stderr, "FAIL %s: rank %d got no error\n", name, rank);
    ++failures;
  } catch (const lanes::Error& e) {
    if (e.code() != code || std::string(e.what()).find(must_mention) == std::string::npos) {
      std::fprintf(stderr, "FAIL %s: rank %d got '%s' (%s), expected code '%s' mentioning '%s'\n",
                   name, rank, e.what(), lanes::to_string(e.code()), lanes::to_string(code),
                   must_mention.c_str());
      ++failures;
    }
  }
}

}  // namespace

int main() {
  lanes::Runtime rt = lanes::Runtime::init();
  lanes::Communicator world = rt.world();
  const int me = world.rank();
  const int p = world.size();
  if (p < 3) {
    std::fprintf(stderr, "misuse_check needs at least 3 ranks\n");
    return 2;
  }
  std::vector<int> data(1000, me);
  std::vector<int> big(2000, me);
  int cases = 0;

  expect_error(
      "size mismatch", lanes::Errc::mismatch, "rank 1",
      [&] { world.bcast(me == 1 ? std::span(big) : std::span(data), 0); }, me);
  ++cases;
  expect_error(
      "root mismatch", lanes::Errc::mismatch, "rank 2", [&] { world.bcast(data, me == 2 ? 1 : 0); },
      me);
  ++cases;
  expect_error(
      "collective mismatch", lanes::Errc::mismatch, "scatter",
      [&] {
        if (me == 0) {
          std::vector<int> send(data.size() * static_cast<std::size_t>(p));
          world.scatter(send, data, 0);
        } else {
          world.bcast(data, 0);
        }
      },
      me);
  ++cases;
  expect_error(
      "invalid root on one rank", lanes::Errc::invalid_argument, "rank 2",
      [&] { world.bcast(data, me == 2 ? p + 5 : 0); }, me);
  ++cases;
  expect_error(
      "scatter send too small at the root", lanes::Errc::invalid_argument, "rank 0",
      [&] {
        std::vector<int> send(me == 0 ? data.size() : 0);
        world.scatter(send, data, 0);
      },
      me);
  ++cases;
  expect_error(
      "unknown algorithm on one rank", lanes::Errc::invalid_argument, "rank 1",
      [&] {
        lanes::CallOptions o;
        if (me == 1) o.algorithm = "telepathy";
        world.bcast(data, 0, o);
      },
      me);
  ++cases;
  expect_error(
      "bad lane count on one rank", lanes::Errc::invalid_argument, "rank 2",
      [&] {
        lanes::CallOptions o;
        if (me == 2) o.lanes = 1000;
        world.bcast(data, 0, o);
      },
      me);
  ++cases;
  expect_error(
      "lane count mismatch", lanes::Errc::mismatch, "lanes",
      [&] {
        lanes::CallOptions o;
        o.lanes = me == 1 ? 1 : 2;
        world.bcast(data, 0, o);
      },
      me);
  ++cases;

  // Still usable: a correct broadcast afterwards.
  std::vector<int> ok(4096, me == 0 ? 42 : -1);
  world.bcast(ok, 0);
  for (int v : ok) {
    if (v != 42) {
      std::fprintf(stderr, "FAIL: rank %d: broadcast after the mismatches is wrong\n", me);
      ++failures;
      break;
    }
  }
  ++cases;
  if (failures > 0) return 1;
  if (me == 0) std::printf("misuse_check: %d ranks: %d cases passed\n", p, cases);
  return 0;
}
