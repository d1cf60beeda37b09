// On-node copy bandwidth, 4 KiB to 64 MiB: memcpy next to the paths lanes moves on-node data
// through. cma: one process_vm_readv of this process's own memory. channel: one message
// through a node segment's channel between two local ranks that live in this thread (the
// sender's and the receiver's steps polled in turn), single-copy (cma) or streamed through the
// slot's chunk buffers (staged); messages up to the chunk size are copied inline either way.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "transport/shm/channels.hpp"
#include "transport/shm/cma.hpp"
#include "transport/shm/segment.hpp"

namespace {

using namespace lanes::transport;

constexpr long kMin = 4 << 10;
constexpr long kMax = 64 << 20;

struct Buffers {
  explicit Buffers(std::size_t n) : src(n, std::byte{1}), dst(n, std::byte{0}) {}
  std::vector<std::byte> src, dst;
};

void bm_memcpy(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Buffers b(n);
  for (auto _ : state) {
    std::memcpy(b.dst.data(), b.src.data(), n);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(bm_memcpy)->Name("copy/memcpy")->RangeMultiplier(4)->Range(kMin, kMax);

void bm_cma(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Buffers b(n);
  std::string error;
  for (auto _ : state) {
    if (!cma_read(getpid(), b.dst.data(), b.src.data(), n, error)) {
      state.SkipWithError(("process_vm_readv: " + error).c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(bm_cma)->Name("copy/cma-read")->RangeMultiplier(4)->Range(kMin, kMax);

// Local ranks 0 and 1 of one node segment, both in this process.
class ChannelPair {
 public:
  explicit ChannelPair(bool cma) : geometry_(default_geometry(2)) {
    ShmSegment seg = ShmSegment::create(channel_segment_bytes(geometry_));
    const std::string name = seg.name();
    a_ = std::make_unique<NodeChannels>(std::move(seg), 0, geometry_, true, CopyPolicy{cma, cma});
    b_ = std::make_unique<NodeChannels>(ShmSegment::attach(name, channel_segment_bytes(geometry_)),
                                        1, geometry_, false, CopyPolicy{cma, cma});
    a_->publish_self();
    b_->publish_self();
    a_->unlink();
    if (cma) {
      a_->probe_cma();
      b_->probe_cma();
    }
  }
  bool cma() const { return a_->cma(); }
  // One message from rank 0 to rank 1; false (with `error`) if it failed.
  bool transfer(const void* src, void* dst, std::size_t n, std::string& error) {
    ShmTransfer s = a_->send(1, msg_, src, n);
    ShmTransfer r = b_->recv(0, msg_, dst, n);
    ++msg_;
    XferState ss = XferState::pending, rs = XferState::pending;
    while (ss == XferState::pending || rs == XferState::pending) {
      if (ss == XferState::pending) ss = s.test(error);
      if (rs == XferState::pending) rs = r.test(error);
    }
    return ss == XferState::done && rs == XferState::done;
  }

 private:
  ChannelGeometry geometry_;
  std::unique_ptr<NodeChannels> a_, b_;
  std::uint64_t msg_ = 0;
};

void bm_channel(benchmark::State& state, bool cma) {
  const auto n = static_cast<std::size_t>(state.range(0));
  Buffers b(n);
  ChannelPair pair(cma);
  if (pair.cma() != cma) {
    state.SkipWithError("process_vm_readv/writev not permitted here");
    return;
  }
  std::string error;
  for (auto _ : state) {
    if (!pair.transfer(b.src.data(), b.dst.data(), n, error)) {
      state.SkipWithError(error.c_str());
      break;
    }
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK_CAPTURE(bm_channel, cma, true)
    ->Name("copy/channel-cma")
    ->RangeMultiplier(4)
    ->Range(kMin, kMax);
BENCHMARK_CAPTURE(bm_channel, staged, false)
    ->Name("copy/channel-staged")
    ->RangeMultiplier(4)
    ->Range(kMin, kMax);

}  // namespace
