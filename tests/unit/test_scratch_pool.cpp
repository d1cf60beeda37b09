// The scratch pool: buffers come back for later calls, concurrent leases never share one, and the
// pool keeps only a bounded number of idle buffers.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <vector>

#include "lib/scratch_pool.hpp"

namespace lanes::detail {
namespace {

TEST(ScratchPool, ReusesAReturnedBuffer) {
  ScratchPool pool;
  std::byte* first = nullptr;
  {
    ScratchPool::Lease a = pool.take(1 << 20);
    first = a.data();
    ASSERT_NE(first, nullptr);
  }
  ScratchPool::Lease b = pool.take(1000);  // smaller: the idle megabyte serves it
  EXPECT_EQ(b.data(), first);
}

TEST(ScratchPool, ConcurrentLeasesAreDistinct) {
  ScratchPool pool;
  std::vector<ScratchPool::Lease> leases;
  std::set<std::byte*> seen;
  for (int i = 0; i < 6; ++i) {
    leases.push_back(pool.take(4096));
    EXPECT_TRUE(seen.insert(leases.back().data()).second);
  }
}

TEST(ScratchPool, ZeroBytesIsNoBuffer) {
  ScratchPool pool;
  EXPECT_EQ(pool.take(0).data(), nullptr);
}

TEST(ScratchPool, KeepsTheLargestIdleBuffers) {
  ScratchPool pool(2);
  std::byte* large = nullptr;
  {
    std::vector<ScratchPool::Lease> leases;
    leases.push_back(pool.take(100));
    leases.push_back(pool.take(1 << 16));
    large = leases.back().data();
    leases.push_back(pool.take(200));
  }
  // Three returned, two kept: the 100-byte one went. The large one is still there.
  ScratchPool::Lease a = pool.take(1 << 16);
  EXPECT_EQ(a.data(), large);
}

TEST(ScratchPool, AMovedLeaseReturnsOnce) {
  ScratchPool pool;
  std::byte* data = nullptr;
  {
    ScratchPool::Lease a = pool.take(512);
    data = a.data();
    ScratchPool::Lease b = std::move(a);
    EXPECT_EQ(b.data(), data);
  }
  ScratchPool::Lease c = pool.take(512);
  ScratchPool::Lease d = pool.take(512);
  EXPECT_EQ(c.data(), data);
  EXPECT_NE(d.data(), data);
}

}  // namespace
}  // namespace lanes::detail
