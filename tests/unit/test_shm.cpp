// The node segment and its channels, between threads of this process (real POSIX shared memory
// and real process_vm_readv/writev on our own pid).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <lanes/error.hpp>
#include <thread>
#include <vector>

#include "transport/shm/channels.hpp"
#include "transport/shm/cma.hpp"
#include "transport/shm/segment.hpp"

using namespace lanes::transport;

namespace {

bool in_dev_shm(const std::string& name) {
  return std::filesystem::exists("/dev/shm" + name);
}

// Runs `fn` until it stops being pending (a test would hang otherwise: bound it).
XferState drive(ShmTransfer& t, std::string& error) {
  for (long i = 0; i < 200000000L; ++i) {
    const XferState s = t.test(error);
    if (s != XferState::pending) return s;
    std::this_thread::yield();
  }
  return XferState::pending;
}

// Tests a send and its receive by turns until neither is pending (bounded); their end states.
std::pair<XferState, XferState> drive_both(ShmTransfer& s, ShmTransfer& r, std::string& es,
                                           std::string& er) {
  XferState ss = XferState::pending, rs = XferState::pending;
  for (int i = 0; i < 1000000 && (ss == XferState::pending || rs == XferState::pending); ++i) {
    if (ss == XferState::pending) ss = s.test(es);
    if (rs == XferState::pending) rs = r.test(er);
  }
  return {ss, rs};
}

struct Pair {
  explicit Pair(bool cma) : Pair(CopyPolicy{cma, cma}) {}
  explicit Pair(CopyPolicy policy) : geometry(default_geometry(2)) {
    ShmSegment seg = ShmSegment::create(channel_segment_bytes(geometry));
    const std::string name = seg.name();
    a = std::make_unique<NodeChannels>(std::move(seg), 0, geometry, true, policy);
    b = std::make_unique<NodeChannels>(ShmSegment::attach(name, channel_segment_bytes(geometry)), 1,
                                       geometry, false, policy);
    a->publish_self();
    b->publish_self();
    a->unlink();
  }
  // Probes single copy on both sides, then takes the kernel's copy as fast as memcpy and free of
  // a cost per call: the protocols a test expects must not depend on this host's probe.
  void probe() {
    for (NodeChannels* c : {a.get(), b.get()}) {
      c->probe_cma();
      c->set_cma_slowdown(1.0);
      c->set_cma_page_seconds(0);
    }
  }
  ChannelGeometry geometry;
  std::unique_ptr<NodeChannels> a, b;
  std::uint64_t next_msg = 0;  // message numbers of a pair only ever grow
};

std::vector<unsigned char> pattern(std::size_t n, int seed) {
  std::vector<unsigned char> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + seed + (i >> 10));
  return v;
}

// Sends `count` messages of `bytes` (numbers first, first + 1, ...) from `from` to `to`
// concurrently (two threads) and checks them; `hinted(m)`: message m asks for single copy.
void exchange_between(
    NodeChannels& from, NodeChannels& to, std::uint64_t first, std::size_t bytes, int count,
    const std::function<SingleCopy(int)>& hinted = [](int) { return SingleCopy::no; }) {
  std::vector<std::vector<unsigned char>> sent, got(static_cast<std::size_t>(count));
  for (int m = 0; m < count; ++m) sent.push_back(pattern(bytes, m));
  std::thread sender([&] {
    std::vector<ShmTransfer> ts;
    for (int m = 0; m < count; ++m) {
      ts.push_back(from.send(to.local_rank(), first + static_cast<std::uint64_t>(m),
                             sent[static_cast<std::size_t>(m)].data(), bytes, hinted(m)));
    }
    for (auto& t : ts) {
      std::string err;
      EXPECT_EQ(drive(t, err), XferState::done) << err;
    }
  });
  std::vector<ShmTransfer> rs;
  for (int m = 0; m < count; ++m) {
    got[static_cast<std::size_t>(m)].assign(bytes, 0);
    rs.push_back(to.recv(from.local_rank(), first + static_cast<std::uint64_t>(m),
                         got[static_cast<std::size_t>(m)].data(), bytes));
  }
  for (auto& r : rs) {
    std::string err;
    EXPECT_EQ(drive(r, err), XferState::done) << err;
  }
  sender.join();
  for (int m = 0; m < count; ++m) {
    EXPECT_EQ(got[static_cast<std::size_t>(m)], sent[static_cast<std::size_t>(m)])
        << "message " << m << " of " << bytes << " bytes, local rank " << from.local_rank()
        << " to " << to.local_rank();
  }
}

void exchange(
    Pair& pair, std::size_t bytes, int count,
    const std::function<SingleCopy(int)>& hinted = [](int) { return SingleCopy::no; }) {
  const std::uint64_t first = pair.next_msg;
  pair.next_msg += static_cast<std::uint64_t>(count);
  exchange_between(*pair.a, *pair.b, first, bytes, count, hinted);
}

}  // namespace

TEST(ShmSegment, CreatedPrivateAndUnlinked) {
  std::string name;
  {
    ShmSegment seg = ShmSegment::create(1 << 20);
    name = seg.name();
    EXPECT_EQ(name.rfind(kShmNamePrefix, 0), 0u);
    EXPECT_GE(name.size(), 30u);  // long random suffix
    struct stat st {};
    ASSERT_EQ(stat(("/dev/shm" + name).c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    ShmSegment other = ShmSegment::attach(name, 1 << 20);
    static_cast<char*>(seg.data())[12345] = 42;
    EXPECT_EQ(static_cast<char*>(other.data())[12345], 42);
    seg.unlink();
    EXPECT_FALSE(in_dev_shm(name));
    EXPECT_EQ(static_cast<char*>(other.data())[12345], 42);  // mappings outlive the name
  }
  EXPECT_FALSE(in_dev_shm(name));
}

TEST(ShmSegment, CreatorUnlinksOnDestruction) {
  std::string name;
  {
    ShmSegment seg = ShmSegment::create(4096);
    name = seg.name();
    EXPECT_TRUE(in_dev_shm(name));
  }
  EXPECT_FALSE(in_dev_shm(name));
}

// A process that attached may remove the name itself (the creator may be gone); the creator's
// own unlink afterwards is harmless, and an attacher never unlinks on destruction.
TEST(ShmSegment, AttacherMayUnlink) {
  ShmSegment seg = ShmSegment::create(4096);
  const std::string name = seg.name();
  { ShmSegment kept = ShmSegment::attach(name, 4096); }
  EXPECT_TRUE(in_dev_shm(name));
  ShmSegment other = ShmSegment::attach(name, 4096);
  other.unlink();
  EXPECT_FALSE(in_dev_shm(name));
  static_cast<char*>(seg.data())[7] = 9;
  EXPECT_EQ(static_cast<char*>(other.data())[7], 9);
  seg.unlink();
  EXPECT_FALSE(in_dev_shm(name));
}

// Moving a segment over another releases the one overwritten (its name unlinked, its mapping
// gone) and takes the other's name, mapping and duty to unlink; the moved-from one owns nothing.
TEST(ShmSegment, MoveAssignmentReleasesTheOverwrittenSegment) {
  ShmSegment a = ShmSegment::create(4096);
  ShmSegment b = ShmSegment::create(8192);
  const std::string name_a = a.name(), name_b = b.name();
  static_cast<char*>(b.data())[100] = 5;
  a = std::move(b);
  EXPECT_FALSE(in_dev_shm(name_a));
  EXPECT_TRUE(in_dev_shm(name_b));
  EXPECT_EQ(a.name(), name_b);
  EXPECT_EQ(a.size(), 8192u);
  EXPECT_EQ(static_cast<char*>(a.data())[100], 5);
  EXPECT_FALSE(static_cast<bool>(b));
  { ShmSegment gone = std::move(b); }  // destroying what was moved from unlinks nothing
  EXPECT_TRUE(in_dev_shm(name_b));
  ShmSegment c = std::move(a);
  EXPECT_TRUE(in_dev_shm(name_b));
  c = ShmSegment();
  EXPECT_FALSE(in_dev_shm(name_b));
}

TEST(ShmSegment, TooLargeIsAClearError) {
  try {
    ShmSegment::create(std::size_t{1} << 50);
    FAIL() << "a 1 PiB segment was created";
  } catch (const lanes::Error& e) {
    EXPECT_EQ(e.code(), lanes::Errc::resource);
    EXPECT_NE(std::string(e.what()).find("/dev/shm"), std::string::npos) << e.what();
  }
}

TEST(ShmSegment, AttachUnknownNameFails) {
  EXPECT_THROW(ShmSegment::attach("/lanes-does-not-exist", 4096), lanes::Error);
}

TEST(NodeChannels, GeometryShrinksChunksOnLargeNodes) {
  EXPECT_EQ(default_geometry(2).chunk, 256u * 1024);
  EXPECT_EQ(default_geometry(4).chunk, 64u * 1024);
  EXPECT_EQ(default_geometry(16).chunk, 4096u);
  EXPECT_EQ(default_geometry(16).slots, 8);
  EXPECT_LE(channel_segment_bytes(default_geometry(2)), std::size_t{17} << 20);
}

// The segment's memory per communicator and node stays within the budget up to 256 local ranks
// (it grew with n^2 slots of 4 KiB chunks before: about 4.6 GiB at 256), with at least two slots
// per pair and chunks no smaller than a few cache lines.
TEST(NodeChannels, SegmentStaysWithinItsBudgetUpTo256LocalRanks) {
  for (int n = 2; n <= 256; ++n) {
    const ChannelGeometry g = default_geometry(n);
    SCOPED_TRACE("local ranks " + std::to_string(n));
    EXPECT_LE(channel_segment_bytes(g), kChannelBudget);
    EXPECT_GE(g.slots, kMinSlots);
    EXPECT_GE(g.chunk, kMinChunk);
    EXPECT_EQ(g.chunk & (g.chunk - 1), 0u) << "chunk " << g.chunk;
  }
  EXPECT_LE(channel_segment_bytes(default_geometry(128)), std::size_t{64} << 20);
  EXPECT_LE(channel_segment_bytes(default_geometry(256)), std::size_t{64} << 20);
  EXPECT_EQ(default_geometry(256).slots, kMinSlots);
}

// The smallest geometry (256 local ranks: 2 slots of 128-byte chunks per pair) delivers every
// protocol between ranks at both ends of the segment, the ring of slots wrapping twice.
TEST(NodeChannels, LargeNodeGeometryDeliversBetweenDistantRanks) {
  const ChannelGeometry g = default_geometry(256);
  const std::size_t bytes = channel_segment_bytes(g);
  for (const bool cma : {false, true}) {
    SCOPED_TRACE(cma ? "single copy" : "staged");
    const CopyPolicy policy{cma, cma};
    ShmSegment seg = ShmSegment::create(bytes);
    const std::string name = seg.name();
    std::vector<std::unique_ptr<NodeChannels>> ranks;
    ranks.push_back(std::make_unique<NodeChannels>(std::move(seg), 0, g, true, policy));
    for (int local : {1, 128, 254, 255}) {
      ranks.push_back(
          std::make_unique<NodeChannels>(ShmSegment::attach(name, bytes), local, g, false, policy));
    }
    for (auto& r : ranks) r->publish_self();
    ranks[0]->unlink();
    ASSERT_EQ(ranks[0]->cma(), cma);
    std::uint64_t first = 0;
    for (const std::size_t size :
         {std::size_t{0}, g.chunk, g.chunk + 1, 3 * g.chunk + 5, std::size_t{64 * 1024 + 7}}) {
      for (auto& from : ranks) {
        for (auto& to : ranks) {
          if (from != to) exchange_between(*from, *to, first, size, 2 * g.slots + 1);
        }
      }
      first += 2 * static_cast<std::uint64_t>(g.slots) + 1;
    }
  }
}

TEST(NodeChannels, CmaProbeSucceedsWithinOneProcess) {
  Pair pair(true);
  pair.a->probe_cma();
  pair.b->probe_cma();
  EXPECT_TRUE(pair.a->cma());
  EXPECT_TRUE(pair.b->cma());
  // The probe also timed the kernel's copy against memcpy, and of one page: positive.
  EXPECT_GT(pair.a->cma_slowdown(), 0.0);
  EXPECT_GT(pair.b->cma_slowdown(), 0.0);
  EXPECT_GT(pair.a->cma_page_seconds(), 0.0);
  EXPECT_GT(pair.b->cma_page_seconds(), 0.0);
}

TEST(CmaSlowdown, TimesTheReadAgainstMemcpyAndFailsWithoutAPeer) {
  std::vector<char> source(1 << 20, 'x');
  EXPECT_GT(lanes::transport::cma_slowdown(getpid(), source.data(), source.data(), source.size()),
            0.0);
  EXPECT_GT(lanes::transport::cma_page_seconds(getpid(), source.data()), 0.0);
  // No such process: no ratio, no time.
  EXPECT_EQ(lanes::transport::cma_slowdown(-1, source.data(), source.data(), source.size()), 0.0);
  EXPECT_EQ(lanes::transport::cma_page_seconds(-1, source.data()), 0.0);
}

// A node where single copy works but is not the default: the sender chooses per message (a hint),
// the receiver follows whatever the sender chose, interleaved in the slots' ring.
TEST(NodeChannels, SenderChoosesTheProtocolPerMessage) {
  Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
  pair.probe();
  ASSERT_TRUE(pair.a->cma_possible());
  EXPECT_FALSE(pair.a->cma());
  const std::size_t large = pair.geometry.chunk * 3 + 5;
  std::vector<char> data(large);
  const auto mode = [&](std::size_t bytes, SingleCopy hint) {
    return pair.a->send(1, 0, data.data(), bytes, hint).single_mode();
  };
  EXPECT_EQ(mode(large, SingleCopy::shared), SingleCopy::shared);
  EXPECT_EQ(mode(large, SingleCopy::pulled), SingleCopy::pulled);
  EXPECT_EQ(mode(large, SingleCopy::exchange), SingleCopy::pulled);
  EXPECT_EQ(mode(large, SingleCopy::no), SingleCopy::no);
  // Hinted messages within the inline limit go single-copy too, from single_copy_min() on
  // (above kSingleCopyMin, where the kernel's copy is fast), an exchange's too.
  const std::size_t least = pair.a->single_copy_min();
  ASSERT_EQ(least, std::min(pair.geometry.chunk, kSingleCopyMin) + 1);
  // (A shared message that small is pulled: below kSharedPushMin.)
  static_assert(kSingleCopyMin < kSharedPushMin);
  for (const SingleCopy hint : {SingleCopy::shared, SingleCopy::pulled}) {
    EXPECT_EQ(mode(least, hint), SingleCopy::pulled);
    EXPECT_EQ(mode(least - 1, hint), SingleCopy::no);
  }
  EXPECT_EQ(mode(least, SingleCopy::exchange), SingleCopy::pulled);
  EXPECT_EQ(mode(least - 1, SingleCopy::exchange), SingleCopy::no);
  EXPECT_EQ(mode(least, SingleCopy::no), SingleCopy::no);
  const auto by_turns = [](int m) {
    return m % 3 == 0 ? SingleCopy::no : m % 3 == 1 ? SingleCopy::shared : SingleCopy::pulled;
  };
  for (std::size_t bytes : {large, pair.geometry.chunk, least, least - 1}) {
    exchange(pair, bytes, pair.geometry.slots * 2 + 1, by_turns);
    exchange(pair, bytes, 5, [](int) { return SingleCopy::shared; });
    exchange(pair, bytes, 5, [](int) { return SingleCopy::pulled; });
  }
  // Where processes share cores (single copy preferred), hinted messages go single-copy above
  // the chunk only, and shared: a sender never waits for its receiver to be scheduled to pull.
  Pair shared_cores(CopyPolicy{.single_possible = true, .prefer_single = true});
  shared_cores.probe();
  ASSERT_TRUE(shared_cores.a->cma());
  const std::size_t chunk = shared_cores.geometry.chunk;
  EXPECT_EQ(shared_cores.a->single_copy_min(), chunk + 1);
  EXPECT_EQ(shared_cores.a->send(1, 0, data.data(), chunk, SingleCopy::pulled).single_mode(),
            SingleCopy::no);
  for (const SingleCopy hint :
       {SingleCopy::no, SingleCopy::shared, SingleCopy::pulled, SingleCopy::exchange}) {
    EXPECT_EQ(shared_cores.a->send(1, 0, data.data(), chunk + 1, hint).single_mode(),
              SingleCopy::shared);
  }
  // ... except an exchange's, pulled from above a whole slot message up to the chunk.
  const std::size_t whole = std::min(chunk, kWholeMax);
  EXPECT_EQ(shared_cores.a->send(1, 0, data.data(), whole, SingleCopy::exchange).single_mode(),
            SingleCopy::no);
  EXPECT_EQ(shared_cores.a->send(1, 0, data.data(), whole + 1, SingleCopy::exchange).single_mode(),
            SingleCopy::pulled);
  EXPECT_EQ(shared_cores.a->send(1, 0, data.data(), chunk, SingleCopy::exchange).single_mode(),
            SingleCopy::pulled);
  for (std::size_t bytes : {whole + 1, chunk, chunk + 1}) {
    exchange(shared_cores, bytes, 5, [](int) { return SingleCopy::exchange; });
  }
  // Where single copy does not work, a hint changes nothing.
  Pair staged(false);
  EXPECT_FALSE(staged.a->send(1, 0, data.data(), large, SingleCopy::shared).single_copy());
  EXPECT_FALSE(staged.a->send(1, 0, data.data(), large, SingleCopy::pulled).single_copy());
  exchange(staged, large, 3, [](int) { return SingleCopy::shared; });
  exchange(staged, large, 3, [](int) { return SingleCopy::pulled; });
}

TEST(NodeChannels, SlowKernelCopyStagesMessagesUpTo64KiBOr256KiBOnSharedCores) {
  Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
  pair.probe();
  ASSERT_TRUE(pair.a->cma_possible());
  std::vector<char> data(kSlowSingleCopyStagedMax * 2);
  const auto mode = [&](std::size_t bytes, SingleCopy hint) {
    return pair.a->send(1, 0, data.data(), bytes, hint).single_mode();
  };
  const std::size_t small = kSlowSingleCopyStagedMax;
  // A fast kernel copy: hinted messages above the chunk go single copy.
  ASSERT_LT(pair.a->single_copy_min(), small);
  EXPECT_EQ(mode(small, SingleCopy::shared), SingleCopy::shared);
  EXPECT_EQ(mode(small, SingleCopy::exchange), SingleCopy::pulled);
  // A slow one: staged up to kSlowSingleCopyStagedMax, whatever the hint; single copy above.
  pair.a->set_cma_slowdown(kSlowSingleCopyRatio);
  for (const SingleCopy hint : {SingleCopy::shared, SingleCopy::pulled, SingleCopy::exchange}) {
    EXPECT_EQ(mode(small, hint), SingleCopy::no);
    EXPECT_NE(mode(small + 1, hint), SingleCopy::no);
  }
  EXPECT_EQ(mode(small + 1, SingleCopy::no), SingleCopy::no);
  // A kernel copy as fast as memcpy per byte whose every call costs kSlowSingleCopyPageSeconds:
  // the same.
  pair.a->set_cma_slowdown(1.0);
  pair.a->set_cma_page_seconds(kSlowSingleCopyPageSeconds);
  for (const SingleCopy hint : {SingleCopy::shared, SingleCopy::pulled, SingleCopy::exchange}) {
    EXPECT_EQ(mode(small, hint), SingleCopy::no);
    EXPECT_NE(mode(small + 1, hint), SingleCopy::no);
  }
  // Below it, single copy again.
  pair.a->set_cma_page_seconds(kSlowSingleCopyPageSeconds / 2);
  EXPECT_EQ(mode(small, SingleCopy::shared), SingleCopy::shared);
  pair.a->set_cma_slowdown(kSlowSingleCopyRatio);
  // Where processes share cores: single copy above the chunk while the kernel's copy is fast;
  // where it is slow, staged up to kSharedCoresSlowStagedMax, whatever the hint.
  Pair shared_cores(CopyPolicy{.single_possible = true, .prefer_single = true});
  shared_cores.probe();
  const std::size_t above_chunk = shared_cores.geometry.chunk + 1;
  std::vector<char> big(kSharedCoresSlowStagedMax + 1);
  const auto shared_mode = [&](std::size_t bytes, SingleCopy hint) {
    return shared_cores.a->send(1, 0, big.data(), bytes, hint).single_mode();
  };
  EXPECT_EQ(shared_mode(above_chunk, SingleCopy::shared), SingleCopy::shared);
  // (An alltoall's messages go single-copy from above kWholeMax, within the chunk too.)
  EXPECT_EQ(shared_mode(kWholeMax + 1, SingleCopy::exchange), SingleCopy::pulled);
  EXPECT_EQ(shared_mode(kSharedCoresSlowStagedMax, SingleCopy::exchange), SingleCopy::pulled);
  // (There the ratio alone decides.)
  shared_cores.a->set_cma_page_seconds(3 * kSlowSingleCopyPageSeconds);
  EXPECT_EQ(shared_mode(kWholeMax + 1, SingleCopy::exchange), SingleCopy::pulled);
  shared_cores.a->set_cma_slowdown(3 * kSlowSingleCopyRatio);
  EXPECT_EQ(shared_mode(kWholeMax + 1, SingleCopy::exchange), SingleCopy::no);
  for (const SingleCopy hint :
       {SingleCopy::no, SingleCopy::shared, SingleCopy::pulled, SingleCopy::exchange}) {
    EXPECT_EQ(shared_mode(kSharedCoresSlowStagedMax, hint), SingleCopy::no);
    EXPECT_EQ(shared_mode(kSharedCoresSlowStagedMax + 1, hint), SingleCopy::shared);
  }
  // A sender that feeds several peers leaves them all of it, whether processes share cores or not.
  EXPECT_EQ(shared_mode(kSharedCoresSlowStagedMax + 1, SingleCopy::fanout), SingleCopy::pulled);
  EXPECT_EQ(shared_mode(kSharedCoresSlowStagedMax, SingleCopy::fanout), SingleCopy::no);
  EXPECT_EQ(mode(small + 1, SingleCopy::fanout), SingleCopy::pulled);
  EXPECT_EQ(mode(small, SingleCopy::fanout), SingleCopy::no);
  for (std::size_t bytes : {kSharedCoresSlowStagedMax, kSharedCoresSlowStagedMax + 1}) {
    const std::uint64_t first = shared_cores.next_msg;
    shared_cores.next_msg += 4;
    exchange_between(*shared_cores.a, *shared_cores.b, first, bytes, 4,
                     [](int m) { return m % 2 ? SingleCopy::fanout : SingleCopy::shared; });
  }
  // Messages of both sizes and hints still arrive whole, the receiver unaware of the choice.
  for (std::size_t bytes : {small, small + 1}) {
    exchange(pair, bytes, 5, [](int m) { return m % 2 ? SingleCopy::pulled : SingleCopy::shared; });
  }
}

// A balanced sender (one local copy of its own besides the message) writes the share (1 - 1/s)/2
// where the kernel's copy takes s times memcpy's time, in whole pages, and lets the receiver pull
// everything where s <= 1 or is unknown; the receiver takes the split from the slot.
TEST(NodeChannels, BalancedSenderWritesTheShareThatEvensTheCopies) {
  Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
  pair.probe();
  ASSERT_TRUE(pair.a->cma_possible());
  // Below kSharedSplitMin: from kSharedSplitMin on both sides claim pieces instead (below).
  const std::size_t bytes = std::size_t{768} << 10;
  static_assert(std::size_t{768} << 10 < kSharedSplitMin);
  std::vector<char> data(bytes);
  const auto mode = [&](SingleCopy hint) {
    return pair.a->send(1, 0, data.data(), bytes, hint).single_mode();
  };
  for (const double unknown_or_fast : {0.0, 0.5, 1.0}) {
    pair.a->set_cma_slowdown(unknown_or_fast);
    EXPECT_EQ(pair.a->balanced_push_bytes(bytes), 0u) << unknown_or_fast;
    EXPECT_EQ(mode(SingleCopy::balanced), SingleCopy::pulled) << unknown_or_fast;
  }
  pair.a->set_cma_slowdown(3.0);
  EXPECT_EQ(pair.a->balanced_push_bytes(bytes), bytes / 3);  // 256 KiB: whole pages
  EXPECT_EQ(pair.a->balanced_push_bytes(bytes + 100), bytes / 3);
  EXPECT_EQ(mode(SingleCopy::balanced), SingleCopy::shared);
  EXPECT_GT(pair.a->push_bytes(bytes), pair.a->balanced_push_bytes(bytes));  // shared: about half
  // The shares differ per message, interleaved in the slots' ring, and messages arrive whole;
  // one below a page is pulled whole.
  for (std::size_t n : {bytes + 100, std::size_t{5000}, std::size_t{70000}}) {
    exchange(pair, n, pair.geometry.slots + 3, [](int m) {
      return m % 3 == 0   ? SingleCopy::balanced
             : m % 3 == 1 ? SingleCopy::shared
                          : SingleCopy::pulled;
    });
  }
  // Where processes share cores, balanced is shared like every other hint, half each.
  Pair shared_cores(CopyPolicy{.single_possible = true, .prefer_single = true});
  shared_cores.probe();
  shared_cores.a->set_cma_slowdown(1.5);
  EXPECT_EQ(shared_cores.a->send(1, 0, data.data(), bytes, SingleCopy::balanced).single_mode(),
            SingleCopy::shared);
}

// Where each process has a core, a shared or balanced message below kSharedPushMin goes pulled
// (the sender writes nothing); from that size on the sender writes its share. Where processes
// share cores, the sender always writes its half.
TEST(NodeChannels, SmallSharedMessagesArePulled) {
  Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
  pair.probe();
  ASSERT_TRUE(pair.a->cma_possible());
  pair.a->set_cma_slowdown(2.0);  // balanced: a quarter
  std::vector<char> data(kSharedPushMin);
  const auto mode = [&](std::size_t n, SingleCopy hint) {
    return pair.a->send(1, 0, data.data(), n, hint).single_mode();
  };
  const std::size_t below = kSharedPushMin - 1;
  EXPECT_EQ(pair.a->push_bytes(below), 0u);
  EXPECT_EQ(pair.a->balanced_push_bytes(below), 0u);
  EXPECT_EQ(mode(below, SingleCopy::shared), SingleCopy::pulled);
  EXPECT_EQ(mode(below, SingleCopy::balanced), SingleCopy::pulled);
  EXPECT_GT(pair.a->push_bytes(kSharedPushMin), 0u);
  EXPECT_GT(pair.a->balanced_push_bytes(kSharedPushMin), 0u);
  EXPECT_EQ(mode(kSharedPushMin, SingleCopy::shared), SingleCopy::shared);
  EXPECT_EQ(mode(kSharedPushMin, SingleCopy::balanced), SingleCopy::shared);
  // Both sides of the rule deliver every byte.
  for (std::size_t n : {below, kSharedPushMin}) {
    exchange(pair, n, 3,
             [](int m) { return m % 2 == 0 ? SingleCopy::shared : SingleCopy::balanced; });
  }
  Pair shared_cores(CopyPolicy{.single_possible = true, .prefer_single = true});
  shared_cores.probe();
  EXPECT_EQ(shared_cores.a->push_bytes(below), below / 2 / 4096 * 4096);
}

// From kSharedSplitMin bytes, where each process has a core, a shared message whose sender is
// busy (balanced) or whose receiver is goes by pieces that both sides claim; every byte arrives
// whichever side takes which, also when the receiver takes them all before the sender looks
// again. Where nobody is busy it keeps the halves fixed in advance.
TEST(NodeChannels, ClaimedPiecesDeliverEveryByte) {
  Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
  pair.probe();
  ASSERT_TRUE(pair.a->cma_possible());
  const std::size_t bytes = 2 * kSharedSplitMin + 12345;
  std::vector<char> data(bytes);
  EXPECT_EQ(pair.a->send(1, 0, data.data(), bytes, SingleCopy::balanced).single_mode(),
            SingleCopy::shared);
  for (int round = 0; round < 3; ++round) {
    for (const bool receiver_busy : {false, true}) {
      for (const SingleCopy hint : {SingleCopy::balanced, SingleCopy::shared}) {
        const std::uint64_t msg = pair.next_msg++;
        const std::vector<unsigned char> out = pattern(bytes, round * 4 + (receiver_busy ? 2 : 0));
        std::vector<unsigned char> in(bytes, 0);
        std::string es, er;
        ShmTransfer r = pair.b->recv(0, msg, in.data(), bytes, {}, receiver_busy);
        ShmTransfer snd = pair.a->send(1, msg, out.data(), bytes, hint);
        if (round == 0 && (hint == SingleCopy::balanced || receiver_busy)) {
          // Pieces: the sender posts and looks no further; the receiver takes them all.
          EXPECT_EQ(snd.test(es), XferState::pending);
          EXPECT_EQ(drive(r, er), XferState::done) << er;
          EXPECT_EQ(drive(snd, es), XferState::done) << es;
        } else {
          std::thread t([&] { EXPECT_EQ(drive(snd, es), XferState::done) << es; });
          EXPECT_EQ(drive(r, er), XferState::done) << er;
          t.join();
        }
        EXPECT_TRUE(in == out) << "round " << round << ", receiver busy " << receiver_busy;
      }
    }
  }
}

// A busy receiver that withdraws before the sender claimed its destination: the sender writes
// nothing and fails.
TEST(NodeChannels, ClaimedPiecesWithdrawnBeforeTheClaim) {
  Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
  pair.probe();
  const std::size_t bytes = kSharedSplitMin + 4096;
  const std::vector<unsigned char> out = pattern(bytes, 11);
  std::vector<unsigned char> in(bytes, 0xCA);
  std::string error;
  ShmTransfer r = pair.b->recv(0, 0, in.data(), bytes, {}, true);
  EXPECT_EQ(r.test(error), XferState::pending);  // publishes the destination
  r.withdraw(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  EXPECT_EQ(r.test(error), XferState::failed);
  ShmTransfer s = pair.a->send(1, 0, out.data(), bytes, SingleCopy::shared);
  EXPECT_EQ(drive(s, error), XferState::failed);
  EXPECT_NE(error.find("gave the message up"), std::string::npos) << error;
  EXPECT_EQ(std::count(in.begin(), in.end(), 0xCA), static_cast<std::ptrdiff_t>(bytes));
}

// A pulled message: the sender writes nothing into the receiver's buffer, and its send completes
// only once the receiver has read all of it (its buffer must stay valid until then).
TEST(NodeChannels, PulledSendEndsWhenTheReceiverHasReadIt) {
  Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
  pair.probe();
  ASSERT_TRUE(pair.a->cma_possible());
  const std::size_t bytes = 40000;
  const std::vector<unsigned char> out = pattern(bytes, 9);
  std::vector<unsigned char> in(bytes, 0xCA);
  std::string error;
  ShmTransfer s = pair.a->send(1, 0, out.data(), bytes, SingleCopy::pulled);
  ASSERT_EQ(s.single_mode(), SingleCopy::pulled);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(s.test(error), XferState::pending);
  EXPECT_EQ(std::count(in.begin(), in.end(), 0xCA), static_cast<std::ptrdiff_t>(bytes));
  ShmTransfer r = pair.b->recv(0, 0, in.data(), bytes);
  EXPECT_EQ(r.test(error), XferState::done) << error;
  EXPECT_EQ(in, out);
  EXPECT_EQ(s.test(error), XferState::done) << error;
}

class ChannelProtocols : public ::testing::TestWithParam<std::tuple<bool, std::size_t>> {};

TEST_P(ChannelProtocols, DeliverEveryByte) {
  const auto [cma, bytes] = GetParam();
  Pair pair(cma);
  ASSERT_EQ(pair.a->cma(), cma);
  exchange(pair, bytes, 3);
  // More messages than slots in flight at once.
  exchange(pair, bytes, pair.geometry.slots * 2 + 1);
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, ChannelProtocols,
    ::testing::Combine(::testing::Bool(),
                       ::testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{40},
                                         std::size_t{41}, kWholeMax, kWholeMax + 1,
                                         std::size_t{20000 + 3}, std::size_t{64 * 1024 + 7},
                                         std::size_t{200001}, std::size_t{256 * 1024},
                                         std::size_t{256 * 1024 + 1}, std::size_t{(1 << 20) + 3})));

// Staged messages: whole up to kWholeMax (or the chunk), in pieces that overlap the two copies
// beyond, every piece within the slot's two chunks, both sides cutting alike.
TEST(NodeChannels, StagingCutsMessagesIntoPiecesThatFitTheSlot) {
  for (const std::size_t chunk : {std::size_t{128}, std::size_t{4096}, std::size_t{16 * 1024},
                                  std::size_t{64 * 1024}, std::size_t{256 * 1024}}) {
    for (std::size_t bytes = 0; bytes <= 3 * chunk + 200; bytes += 1 + bytes / 64) {
      const Staging st = staging_of(bytes, chunk);
      SCOPED_TRACE("chunk " + std::to_string(chunk) + ", " + std::to_string(bytes) + " bytes");
      EXPECT_EQ(st.whole(), bytes <= std::min(chunk, kWholeMax));
      if (st.whole()) {
        EXPECT_EQ(st.piece, bytes);
        continue;
      }
      EXPECT_GE(st.ring, 2u);
      EXPECT_LE(st.piece * st.ring, 2 * chunk);
      EXPECT_EQ(st.piece % 64, 0u);
      const std::size_t pieces = (bytes + st.piece - 1) / st.piece;
      if (bytes > chunk) {
        EXPECT_EQ(st.piece, chunk);
      } else {
        // Within a chunk: at least two pieces, at most four, none below 8 KiB.
        EXPECT_GE(pieces, 2u);
        EXPECT_LE(pieces, 4u);
        EXPECT_GE(st.piece, 8u * 1024);
      }
    }
  }
}

TEST(NodeChannels, SizeMismatchFailsBothSides) {
  for (const auto& [cma, hint] : {std::pair{true, SingleCopy::no}, std::pair{false, SingleCopy::no},
                                  std::pair{true, SingleCopy::pulled}}) {
    Pair pair(cma);
    // Both above the inline limit: the sender waits for the receiver, which rejects the size.
    std::vector<char> out(2 * pair.geometry.chunk + 100000, 1), in(pair.geometry.chunk + 50000);
    ShmTransfer s = pair.a->send(1, 0, out.data(), out.size(), hint);
    ShmTransfer r = pair.b->recv(0, 0, in.data(), in.size());
    std::string es, er;
    const auto [ss, rs] = drive_both(s, r, es, er);
    EXPECT_EQ(rs, XferState::failed);
    EXPECT_NE(er.find(std::to_string(out.size()) + " bytes"), std::string::npos) << er;
    EXPECT_EQ(ss, XferState::failed) << "cma=" << cma;
  }
}

// A receive whose call failed takes back the destination it offered a single-copy sender: a
// canary written into the buffer afterwards survives the sender's attempt.
TEST(NodeChannels, WithdrawnReceiveIsNeverWritten) {
  Pair pair(true);
  pair.probe();
  ASSERT_TRUE(pair.a->cma_possible());
  const std::size_t bytes = 4 * pair.geometry.chunk + 5 * 4096;
  ASSERT_GT(pair.a->push_bytes(bytes), 0u);
  const std::vector<unsigned char> out = pattern(bytes, 3);
  std::vector<unsigned char> in(bytes, 0);
  std::string error;

  // Withdrawn before the sender claimed the destination: the sender writes nothing.
  ShmTransfer r = pair.b->recv(0, 0, in.data(), bytes);
  EXPECT_EQ(r.test(error), XferState::pending);  // publishes the destination
  r.withdraw(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  EXPECT_EQ(r.test(error), XferState::failed);
  std::fill(in.begin(), in.end(), 0xCA);
  ShmTransfer s = pair.a->send(1, 0, out.data(), bytes, SingleCopy::shared);
  ASSERT_TRUE(s.single_copy());
  EXPECT_EQ(drive(s, error), XferState::failed);
  EXPECT_NE(error.find("gave the message up"), std::string::npos) << error;
  EXPECT_EQ(std::count(in.begin(), in.end(), 0xCA), static_cast<std::ptrdiff_t>(bytes));
}

// Withdrawn after the sender claimed it: the withdrawal returns once the sender's write is over,
// and nothing is written after that.
TEST(NodeChannels, WithdrawalWaitsForAClaimedWrite) {
  Pair pair(true);
  pair.probe();
  const std::size_t bytes = 4 * pair.geometry.chunk + 5 * 4096;
  const std::size_t push = pair.a->push_bytes(bytes);
  ASSERT_GT(push, 0u);
  const std::vector<unsigned char> out = pattern(bytes, 5);
  std::vector<unsigned char> in(bytes, 0);
  std::string error;
  ShmTransfer r = pair.b->recv(0, 0, in.data(), bytes);
  EXPECT_EQ(r.test(error), XferState::pending);
  ShmTransfer s = pair.a->send(1, 0, out.data(), bytes, SingleCopy::shared);
  EXPECT_EQ(s.test(error), XferState::pending);  // claimed and pushed; waits for the receiver
  EXPECT_TRUE(std::equal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(push), in.begin()));
  r.withdraw(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  EXPECT_EQ(r.test(error), XferState::failed);
  std::fill(in.begin(), in.end(), 0xCA);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(s.test(error), XferState::pending);
  EXPECT_EQ(std::count(in.begin(), in.end(), 0xCA), static_cast<std::ptrdiff_t>(bytes));
}

// A receive with a sink hands every byte to it once, in order, in pieces of piece_bytes() (the
// last one shorter), and writes nothing into its destination unless the message went single-copy
// (which lands there first and is handed over from there); a sink that refuses fails both sides.
namespace {

struct Collected {
  std::vector<unsigned char> bytes;
  std::vector<std::size_t> pieces;
  bool refuse = false;
  static bool consume(void* context, std::uint32_t token, std::size_t offset, const char* piece,
                      std::size_t n) {
    auto* self = static_cast<Collected*>(context);
    EXPECT_EQ(token, 7u);
    EXPECT_EQ(offset, self->bytes.size());
    self->bytes.insert(self->bytes.end(), piece, piece + n);
    self->pieces.push_back(n);
    return !self->refuse;
  }
};

}  // namespace

TEST(NodeChannels, SinkConsumesEveryPieceInOrder) {
  for (const SingleCopy hint : {SingleCopy::no, SingleCopy::shared, SingleCopy::pulled}) {
    Pair pair(CopyPolicy{.single_possible = true, .prefer_single = false});
    pair.probe();
    for (const std::size_t bytes :
         {std::size_t{8}, kWholeMax, kWholeMax + 64, std::size_t{20000 + 8},
          pair.geometry.chunk * 3 + 24, std::size_t{(1 << 20) + 40}}) {
      SCOPED_TRACE(std::to_string(bytes) + " bytes, hint " + std::to_string(int(hint)));
      const std::vector<unsigned char> out = pattern(bytes, 3);
      std::vector<unsigned char> in(bytes, 0xCA);
      Collected got;
      const std::uint64_t msg = pair.next_msg++;
      std::thread sender([&] {
        ShmTransfer s = pair.a->send(1, msg, out.data(), bytes, hint);
        std::string err;
        EXPECT_EQ(drive(s, err), XferState::done) << err;
      });
      ShmTransfer r =
          pair.b->recv(0, msg, in.data(), bytes, PieceSink{&Collected::consume, &got, 7});
      EXPECT_TRUE(r.sunk());
      std::string err;
      EXPECT_EQ(drive(r, err), XferState::done) << err;
      sender.join();
      EXPECT_EQ(got.bytes, out);
      const std::size_t piece = pair.b->piece_bytes(bytes);
      const bool single = hint != SingleCopy::no && bytes >= pair.a->single_copy_min();
      if (single) {
        EXPECT_EQ(in, out);  // landed first, then handed over whole
        EXPECT_EQ(got.pieces, std::vector<std::size_t>{bytes});
      } else {
        EXPECT_EQ(std::count(in.begin(), in.end(), 0xCA), static_cast<std::ptrdiff_t>(bytes));
        for (std::size_t i = 0; i + 1 < got.pieces.size(); ++i) EXPECT_EQ(got.pieces[i], piece);
        EXPECT_LE(got.pieces.back(), piece);
      }
    }
  }
  // A sink that refuses a piece fails the receive, and the sender learns of it.
  Pair pair(false);
  const std::size_t bytes = pair.geometry.chunk * 3;
  const std::vector<unsigned char> out = pattern(bytes, 5);
  std::vector<unsigned char> in(bytes);
  Collected refusing;
  refusing.refuse = true;
  ShmTransfer s = pair.a->send(1, 0, out.data(), bytes);
  ShmTransfer r =
      pair.b->recv(0, 0, in.data(), bytes, PieceSink{&Collected::consume, &refusing, 7});
  std::string es, er;
  const auto [ss, rs] = drive_both(s, r, es, er);
  EXPECT_EQ(rs, XferState::failed);
  EXPECT_EQ(ss, XferState::failed);
  EXPECT_NE(es.find("rejected"), std::string::npos) << es;
}

// The shared heap: whole pages, neighbours merged when given back, only its own blocks taken back,
// nullptr when full; a peer's mapping (here this process's own, through /proc/self/fd) is the
// same memory, and a view naming another file maps nothing.
TEST(SharedHeap, AllocatesPagesAndMergesFreedNeighbours) {
  constexpr std::size_t kPage = SharedHeap::kPage;
  SharedHeap heap(16 * kPage);
  char* a = static_cast<char*>(heap.allocate(1));
  char* b = static_cast<char*>(heap.allocate(kPage + 1));
  char* c = static_cast<char*>(heap.allocate(0));
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(a) % kPage, 0u);
  EXPECT_EQ(b - a, static_cast<std::ptrdiff_t>(kPage));
  EXPECT_EQ(c - b, static_cast<std::ptrdiff_t>(2 * kPage));
  EXPECT_EQ(heap.allocated(), 4 * kPage);
  EXPECT_TRUE(heap.contains(b, 2 * kPage));
  EXPECT_FALSE(heap.contains(b, 16 * kPage));
  int outside = 0;
  EXPECT_FALSE(heap.contains(&outside, sizeof outside));
  EXPECT_FALSE(heap.release(&outside));
  EXPECT_FALSE(heap.release(b + 1));              // not the start of a block
  EXPECT_EQ(heap.allocate(13 * kPage), nullptr);  // 12 pages are left
  EXPECT_TRUE(heap.release(a));
  EXPECT_TRUE(heap.release(c));
  EXPECT_TRUE(heap.release(b));
  EXPECT_FALSE(heap.release(b));  // given back already
  EXPECT_EQ(heap.allocated(), 0u);
  char* whole = static_cast<char*>(heap.allocate(16 * kPage));  // every run merged again
  EXPECT_EQ(whole, a);
  EXPECT_TRUE(heap.release(whole));
}

TEST(SharedHeap, PeersMapTheSameMemory) {
  SharedHeap heap(std::size_t{1} << 20);
  auto* p = static_cast<unsigned char*>(heap.allocate(8192));
  ASSERT_NE(p, nullptr);
  PeerHeaps peers;
  const HeapView view = heap.view();
  char* mapped = peers.map(view);
  ASSERT_NE(mapped, nullptr);
  EXPECT_NE(static_cast<void*>(mapped),
            reinterpret_cast<void*>(view.base));  // a mapping of its own
  unsigned char* alias =
      reinterpret_cast<unsigned char*>(mapped) + (reinterpret_cast<std::uint64_t>(p) - view.base);
  alias[100] = 0x5A;
  EXPECT_EQ(p[100], 0x5A);
  EXPECT_EQ(peers.map(view), mapped);  // mapped once
  HeapView other = view;
  other.inode += 1;  // the fd of another file
  EXPECT_EQ(peers.map(other), nullptr);
  EXPECT_TRUE(heap.release(p));
}

// A message from the sender's heap goes single-copy even where the kernel's copy is off: its
// receiver reads it out of its mapping, and a sink takes it from there in one piece without
// the destination being written. Below kMappedMin, from ordinary memory, or before the node
// agreed that every heap is mapped, it goes staged.
TEST(NodeChannels, MessagesFromTheHeapAreReadInPlace) {
  Pair pair(CopyPolicy{.single_possible = false, .prefer_single = false});
  SharedHeap heap_a(std::size_t{8} << 20), heap_b(std::size_t{8} << 20);
  auto peers = std::make_shared<PeerHeaps>();
  pair.a->use_heaps(&heap_a, peers);
  pair.b->use_heaps(&heap_b, peers);
  pair.a->publish_self();  // again, now with the heaps
  pair.b->publish_self();
  pair.a->fix_peers();
  pair.b->fix_peers();
  ASSERT_TRUE(pair.a->map_peer_heaps());
  ASSERT_TRUE(pair.b->map_peer_heaps());
  ASSERT_FALSE(pair.a->cma_possible());
  const std::size_t bytes = 3 * pair.geometry.chunk + 40;
  auto* src = static_cast<unsigned char*>(heap_a.allocate(bytes));
  ASSERT_NE(src, nullptr);
  const std::vector<unsigned char> out = pattern(bytes, 9);
  std::copy(out.begin(), out.end(), src);
  const auto mode = [&](const void* data, std::size_t n) {
    return pair.a->send(1, 0, data, n).single_mode();
  };
  EXPECT_EQ(mode(src, bytes), SingleCopy::no);  // not agreed yet
  pair.a->set_heaps_mapped(true);
  pair.b->set_heaps_mapped(true);
  EXPECT_EQ(mode(src, bytes), SingleCopy::pulled);
  EXPECT_EQ(mode(src, kMappedMin), SingleCopy::pulled);
  EXPECT_EQ(mode(src, kMappedMin - 1), SingleCopy::no);
  EXPECT_EQ(mode(out.data(), bytes), SingleCopy::no);
  // A pipelined sender (nothing else to do) keeps large messages staged, so that it copies too.
  auto* large = static_cast<unsigned char*>(heap_a.allocate(kMappedPipelinedMin));
  ASSERT_NE(large, nullptr);
  EXPECT_EQ(pair.a->send(1, 0, large, kMappedPipelinedMin, SingleCopy::pipelined).single_mode(),
            SingleCopy::no);
  EXPECT_EQ(pair.a->send(1, 0, large, kMappedPipelinedMin - 1, SingleCopy::pipelined).single_mode(),
            SingleCopy::pulled);
  EXPECT_TRUE(heap_a.release(large));
  for (const bool sunk : {false, true}) {
    SCOPED_TRACE(sunk ? "sink" : "destination");
    std::vector<unsigned char> in(bytes, 0xCA);
    Collected got;
    const std::uint64_t msg = pair.next_msg++;
    ShmTransfer s = pair.a->send(1, msg, src, bytes);
    ShmTransfer r =
        sunk ? pair.b->recv(0, msg, in.data(), bytes, PieceSink{&Collected::consume, &got, 7})
             : pair.b->recv(0, msg, in.data(), bytes);
    std::string es, er;
    const auto [ss, rs] = drive_both(s, r, es, er);
    ASSERT_EQ(ss, XferState::done) << es;
    ASSERT_EQ(rs, XferState::done) << er;
    EXPECT_TRUE(s.single_copy());
    if (sunk) {
      EXPECT_EQ(got.bytes, out);
      EXPECT_EQ(got.pieces, std::vector<std::size_t>{bytes});
      EXPECT_EQ(std::count(in.begin(), in.end(), 0xCA), static_cast<std::ptrdiff_t>(bytes));
    } else {
      EXPECT_EQ(in, out);
    }
  }
  EXPECT_TRUE(heap_a.release(src));
}

// A receiver whose own heap is off (LANES_HEAP_SIZE=0, or the kernel refused it) still reads its
// peers' heaps in place, without the kernel's copy.
TEST(NodeChannels, AReceiverWithoutAHeapReadsPeersHeaps) {
  Pair pair(CopyPolicy{.single_possible = false, .prefer_single = false});
  SharedHeap heap_a(std::size_t{1} << 20);
  auto peers = std::make_shared<PeerHeaps>();
  pair.a->use_heaps(&heap_a, peers);
  pair.b->use_heaps(nullptr, peers);
  for (NodeChannels* c : {pair.a.get(), pair.b.get()}) {
    c->publish_self();
    c->fix_peers();
    ASSERT_TRUE(c->map_peer_heaps());
    c->set_heaps_mapped(true);
  }
  const std::size_t bytes = 64 * 1024;
  auto* src = static_cast<unsigned char*>(heap_a.allocate(bytes));
  ASSERT_NE(src, nullptr);
  const std::vector<unsigned char> out = pattern(bytes, 4);
  std::copy(out.begin(), out.end(), src);
  std::vector<unsigned char> in(bytes, 0xCA);
  ShmTransfer s = pair.a->send(1, 0, src, bytes);
  ShmTransfer r = pair.b->recv(0, 0, in.data(), bytes);
  std::string es, er;
  const auto [ss, rs] = drive_both(s, r, es, er);
  EXPECT_EQ(ss, XferState::done) << es;
  EXPECT_EQ(rs, XferState::done) << er;
  EXPECT_EQ(s.single_mode(), SingleCopy::pulled);
  EXPECT_EQ(in, out);
  EXPECT_FALSE(pair.b->source_mapped(in.data(), bytes));  // nothing of its own to offer
  EXPECT_TRUE(heap_a.release(src));
}

// Threads allocate and give back blocks at once: every block is whole pages of its own, and the
// heap is whole again at the end (the free runs merged back into one).
TEST(SharedHeap, ThreadsAllocateAndReleaseAtOnce) {
  constexpr std::size_t kPage = SharedHeap::kPage;
  SharedHeap heap(1024 * kPage);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&heap, &failures, t] {
      std::vector<std::pair<unsigned char*, std::size_t>> mine;
      for (int i = 0; i < 400; ++i) {
        const std::size_t bytes = (static_cast<std::size_t>(i * 7 + t) % 5 + 1) * kPage - 100;
        auto* p = static_cast<unsigned char*>(heap.allocate(bytes));
        if (p == nullptr) {
          ++failures;
          continue;
        }
        std::fill(p, p + bytes, static_cast<unsigned char>(t + 1));
        mine.emplace_back(p, bytes);
        if (mine.size() > 8) {  // give back the oldest, after checking nobody wrote into it
          auto [q, n] = mine.front();
          if (std::count(q, q + n, static_cast<unsigned char>(t + 1)) !=
              static_cast<std::ptrdiff_t>(n)) {
            ++failures;
          }
          if (!heap.release(q)) ++failures;
          mine.erase(mine.begin());
        }
      }
      for (auto [q, n] : mine) {
        if (!heap.release(q)) ++failures;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(heap.allocated(), 0u);
  void* whole = heap.allocate(1024 * kPage);
  EXPECT_NE(whole, nullptr);
  EXPECT_TRUE(heap.release(whole));
}
