// New communicators from a communicator: split (colors and keys) and group (a rank list).
#include "lib/comm_impl.hpp"

#include <algorithm>
#include <lanes/error.hpp>

#include "lib/runtime_impl.hpp"

namespace lanes::detail {

// ---------------------------------------------------------------------------------------------
std::shared_ptr<CommImpl> CommImpl::member_comm(const std::vector<int>& members, int new_rank,
                                                std::uint32_t id, int& leader_new_rank) {
  std::vector<int> labels, world;
  for (const int m : members) {
    labels.push_back(layout_.node_of[static_cast<std::size_t>(m)]);
    world.push_back(world_rank_of_[static_cast<std::size_t>(m)]);
  }
  algos::Layout sub = algos::Layout::from_node_labels(labels, layout_.num_lanes);
  sub.num_rails = layout_.num_rails;
  sub.rail_numa = layout_.rail_numa;
  sub.rail_weights = layout_.rail_weights;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const auto m = static_cast<std::size_t>(members[i]);
    sub.lane_of[i] = layout_.lane_of[m];  // the same primary rail as before
    sub.numa_of[i] = layout_.numa_of[m];
  }
  sub.spread_lanes();  // a node with fewer members: each drives more lanes
  leader_new_rank =
      sub.node_ranks[static_cast<std::size_t>(sub.node_of[static_cast<std::size_t>(new_rank)])]
          .front();
  return std::make_shared<CommImpl>(runtime_, std::move(sub), new_rank, std::move(world), id);
}

std::shared_ptr<CommImpl> CommImpl::split(int color, int key) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  struct Entry {
    std::int32_t color;
    std::int32_t key;
    std::uint32_t next_id;
  };
  const Entry mine{color, key, runtime_->next_comm_id()};
  std::vector<Entry> all(static_cast<std::size_t>(size()));
  exchange(&mine, all.data(), sizeof mine);
  std::uint32_t id = 0;
  for (const Entry& e : all) id = std::max(id, e.next_id);
  runtime_->claim_comm_id(id);

  std::shared_ptr<CommImpl> comm;
  int leader_parent_rank = rank_;
  if (color >= 0) {
    std::vector<int> members;
    for (int r = 0; r < size(); ++r) {
      if (all[static_cast<std::size_t>(r)].color == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(), [&](int a, int b) {
      return all[static_cast<std::size_t>(a)].key < all[static_cast<std::size_t>(b)].key;
    });
    const int new_rank =
        static_cast<int>(std::find(members.begin(), members.end(), rank_) - members.begin());
    int leader_new = 0;
    comm = member_comm(members, new_rank, id, leader_new);
    leader_parent_rank = members[static_cast<std::size_t>(leader_new)];
  }
  // Every member of this communicator takes part in the same exchange rounds.
  const ExchangeFn over_parent = [this](const void* m, void* a, std::size_t b) {
    exchange(m, a, b);
  };
  if (comm) {
    comm->open_node_channels(over_parent, size(), leader_parent_rank, copy_policy(), false);
    runtime_->track(comm);
  } else {
    CommImpl none(runtime_, algos::Layout::blocks(1, 1, 1), 0, {world_rank_of_[0]}, id);
    none.open_node_channels(over_parent, size(), 0, transport::CopyPolicy{}, false);
  }
  return comm;
}

std::shared_ptr<CommImpl> CommImpl::group(std::span<const int> ranks, const ExchangeFn& exchange) {
  const RuntimeImpl::Entry entry(*runtime_);
  check_usable();
  std::vector<int> members(ranks.begin(), ranks.end());
  std::vector<char> seen(static_cast<std::size_t>(size()), 0);
  int new_rank = -1;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const int r = members[i];
    if (r < 0 || r >= size() || seen[static_cast<std::size_t>(r)] != 0) {
      throw Error(Errc::invalid_argument,
                  "group(): rank " + std::to_string(r) + " is " +
                      (r < 0 || r >= size() ? "not a rank of a communicator of " +
                                                  std::to_string(size()) + " processes"
                                            : "listed twice"));
    }
    seen[static_cast<std::size_t>(r)] = 1;
    if (r == rank_) new_rank = static_cast<int>(i);
  }
  if (new_rank < 0) {
    throw Error(Errc::invalid_argument, "group(): the calling process (rank " +
                                            std::to_string(rank_) + ") is not among the ranks");
  }
  // An id no member uses yet: each member's next id exceeds every id it holds.
  const std::uint32_t mine = runtime_->next_comm_id();
  std::vector<std::uint32_t> ids(members.size());
  exchange(&mine, ids.data(), sizeof mine);
  const std::uint32_t id = *std::max_element(ids.begin(), ids.end());
  runtime_->claim_comm_id(id);
  int leader_new = 0;
  std::shared_ptr<CommImpl> comm = member_comm(members, new_rank, id, leader_new);
  comm->open_node_channels(exchange, static_cast<int>(members.size()), leader_new, copy_policy(),
                           false);
  runtime_->track(comm);
  return comm;
}

}  // namespace lanes::detail
