// Peers' rail addresses are checked when they arrive, so that nothing on the progress path can
// find them malformed: real UCX over loopback, in one process.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "lanes/error.hpp"
#include "transport/ucx/rails.hpp"

namespace lanes::transport {
namespace {

RailOptions loopback(int rails) {
  RailOptions o;
  o.devices.assign(static_cast<std::size_t>(rails), "lo");
  o.wakeup = false;
  return o;
}

std::string error_of(Rails& rails, int peer, const std::vector<std::byte>& packed, Errc& code) {
  try {
    rails.set_peer_addresses(peer, packed);
  } catch (const Error& e) {
    code = e.code();
    return e.what();
  }
  return "";
}

TEST(Rails, PeerAddressesAreCheckedWhenTheyArrive) {
  Rails one(loopback(1), 2);
  Rails two(loopback(2), 2);
  one.set_peer_addresses(1, one.packed_addresses());  // well formed, same rails: accepted

  Errc code = Errc::internal;
  std::string what = error_of(one, 1, two.packed_addresses(), code);
  EXPECT_EQ(code, Errc::topology);
  EXPECT_NE(what.find("rank 1 opened 2 rails and this process 1"), std::string::npos) << what;

  std::vector<std::byte> cut = one.packed_addresses();
  cut.resize(cut.size() - 1);  // an address shorter than its length says
  code = Errc::topology;
  what = error_of(one, 1, cut, code);
  EXPECT_EQ(code, Errc::internal);
  EXPECT_NE(what.find("malformed worker address of rank 1"), std::string::npos) << what;
  code = Errc::topology;
  what = error_of(one, 1, {}, code);
  EXPECT_EQ(code, Errc::internal) << what;
}

}  // namespace
}  // namespace lanes::transport
