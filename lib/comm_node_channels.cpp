// A communicator's node channels: set-up of the node segment, message numbers per local peer.
#include "lib/comm_impl.hpp"

#include <algorithm>
#include <vector>

#include "lib/agreement.hpp"
#include "lib/runtime_impl.hpp"

namespace lanes::detail {

namespace {

// The median of the positive values (the lower one of an even count), 0 when there is none.
double median_of_positive(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !(v > 0); });
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Node shared memory: the node's first rank creates the segment and lays out the channels; the
// name travels through `exchange`; everyone maps it and says so; then every local rank removes
// the name (or removes it when the set-up fails), so nothing stays in /dev/shm whatever happens
// later, even when the first rank dies in between.
void CommImpl::open_node_channels(const ExchangeFn& exchange, int exchange_size,
                                  int exchange_rank_of_leader, transport::CopyPolicy policy,
                                  bool probe_cma) {
  const int n = layout_.node_size_of(rank_);
  const bool shared = n > 1;
  const bool leader = shared && local_rank() == 0;
  const transport::ChannelGeometry geometry = transport::default_geometry(n);
  const std::size_t bytes = transport::channel_segment_bytes(geometry);
  copy_policy_ = policy;
  const auto size = static_cast<std::size_t>(exchange_size);

  // Every round carries each member's outcome: a leader that cannot create its segment (a full
  // /dev/shm) or a member that cannot attach makes every member throw, none waits.
  char mine[kOutcomeBytes];
  std::optional<Failure> failure = attempt([&] {
    if (!leader) return;
    channels_ = std::make_unique<transport::NodeChannels>(transport::ShmSegment::create(bytes), 0,
                                                          geometry, true, policy);
  });
  put_outcome(mine, failure, channels_ ? channels_->name() : std::string());
  std::vector<char> names(kOutcomeBytes * size);
  exchange(mine, names.data(), kOutcomeBytes);
  throw_if_any_failed(names.data(), exchange_size, -1, "creating its node's shared-memory segment");
  failure = attempt([&] {
    if (shared && !leader) {
      const std::string name =
          payload_of(&names[kOutcomeBytes * static_cast<std::size_t>(exchange_rank_of_leader)]);
      channels_ = std::make_unique<transport::NodeChannels>(
          transport::ShmSegment::attach(name, bytes), local_rank(), geometry, false, policy);
    }
    if (channels_) {
      channels_->use_heaps(runtime_->shared_heap().get(), runtime_->peer_heaps());
      channels_->publish_self();
    }
  });
  put_outcome(mine, failure);
  try {
    exchange(mine, names.data(), kOutcomeBytes);
    throw_if_any_failed(names.data(), exchange_size, -1,
                        "attaching its node's shared-memory segment");
  } catch (...) {
    if (channels_) channels_->unlink();  // a peer failed in the set-up: leave /dev/shm clean
    throw;
  }
  // Every local rank removes the name (the first one does it): one that dies here does not
  // leave the segment behind.
  if (channels_) {
    channels_->unlink();
    channels_->fix_peers();
  }
  // Messages read peers' heaps only where every member mapped every heap of its node.
  const std::uint8_t mapped = channels_ == nullptr || channels_->map_peer_heaps() ? 1 : 0;
  std::vector<std::uint8_t> all_mapped(size);
  exchange(&mapped, all_mapped.data(), sizeof mapped);
  if (channels_) {
    channels_->set_heaps_mapped(
        std::all_of(all_mapped.begin(), all_mapped.end(), [](std::uint8_t m) { return m != 0; }));
  }
  if (probe_cma) {
    // Each process times the kernel's copy (its ratio to memcpy's, and one page's time); all
    // take the medians of what they measured, so that the model, which reads them, chooses
    // alike everywhere.
    struct Measured {
      double slowdown = 0, page_seconds = 0;
    } measured;
    if (channels_) {
      channels_->probe_cma();
      measured = {channels_->cma_slowdown(), channels_->cma_page_seconds()};
    }
    std::vector<Measured> all(size);
    exchange(&measured, all.data(), sizeof measured);
    std::vector<double> ratios, pages;
    for (const Measured& m : all) {
      ratios.push_back(m.slowdown);
      pages.push_back(m.page_seconds);
    }
    // A ratio the configuration gives (LANES_CMA_SLOWDOWN) stands instead of the probe's, alone:
    // the page's time then counts for nothing.
    const double pinned = policy.cma_slowdown;
    if (channels_) {
      channels_->set_cma_slowdown(pinned > 0 ? pinned : median_of_positive(ratios));
      channels_->set_cma_page_seconds(pinned > 0 ? 0 : median_of_positive(pages));
    }
  }
  arm_revocation();
}

std::uint64_t CommImpl::claim_node_sends(int local_peer, std::uint32_t count) {
  auto& c = node_sent_[static_cast<std::size_t>(local_peer)];
  const std::uint64_t base = c;
  c += count;
  return base;
}

std::uint64_t CommImpl::claim_node_recvs(int local_peer, std::uint32_t count) {
  auto& c = node_recvd_[static_cast<std::size_t>(local_peer)];
  const std::uint64_t base = c;
  c += count;
  return base;
}

}  // namespace lanes::detail
