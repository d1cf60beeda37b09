// The v-variants (scatterv, gatherv, allgatherv, alltoallv): every algorithm through the
// simulator over layouts, lane counts, roots, block sizes (zero, equal, ragged) and
// displacements (in rank order, reversed with gaps, shuffled), local algorithms built without
// the sizes other ranks pass, volumes, and broken schedules the simulator must reject.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "algos/layout.hpp"
#include "algos/simulator.hpp"
#include "algos/vcollectives.hpp"

namespace lanes::algos {
namespace {

std::vector<Layout> layouts_for(int p, int lanes) {
  std::vector<Layout> out;
  std::set<int> sizes;
  for (int n : {1, 2, 3, p}) sizes.insert(std::min(n, p));
  for (int n : sizes) out.push_back(Layout::blocks(p, n, lanes));
  if (p >= 4) {
    // Irregular, and ranks dealt over the nodes (node-consecutive ranks are not neighbours).
    std::vector<int> irregular{3, 1};
    for (int placed = 4; placed < p; placed += 2) irregular.push_back(std::min(2, p - placed));
    out.push_back(Layout::from_node_sizes(irregular, lanes));
    std::vector<int> dealt;
    for (int r = 0; r < p; ++r) dealt.push_back(r % 3);
    out.push_back(Layout::from_node_labels(dealt, lanes));
  }
  return out;
}

enum class Sizes { zero, equal, ragged, one };
enum class Places { in_order, reversed_with_gaps, shuffled };

std::vector<std::size_t> sizes_of(Sizes kind, int p, std::mt19937& rng) {
  std::vector<std::size_t> out(static_cast<std::size_t>(p), 0);
  for (int i = 0; i < p; ++i) {
    switch (kind) {
      case Sizes::zero:
        break;
      case Sizes::equal:
        out[static_cast<std::size_t>(i)] = 13;
        break;
      case Sizes::ragged:  // zeros among them
        out[static_cast<std::size_t>(i)] = rng() % 3 == 0 ? 0 : 1 + rng() % 700;
        break;
      case Sizes::one:
        out[static_cast<std::size_t>(i)] = i == p / 2 ? 5000 : 0;
        break;
    }
  }
  return out;
}

// Blocks of the given sizes placed in one buffer.
std::vector<Block> place(const std::vector<std::size_t>& sizes, Places how, std::mt19937& rng) {
  const std::size_t p = sizes.size();
  std::vector<std::size_t> order(p);
  std::iota(order.begin(), order.end(), 0);
  if (how == Places::reversed_with_gaps) std::reverse(order.begin(), order.end());
  if (how == Places::shuffled) std::shuffle(order.begin(), order.end(), rng);
  std::vector<Block> out(p);
  std::size_t at = 0;
  for (const std::size_t i : order) {
    if (how != Places::in_order) at += 3;  // a gap before every block
    out[i] = {at, sizes[i]};
    at += sizes[i];
  }
  return out;
}

// What every rank passes, for one call.
std::vector<VArgs> spec(VCollective coll, int p, int root, Sizes kind, Places how,
                        std::mt19937& rng) {
  std::vector<VArgs> args(static_cast<std::size_t>(p));
  if (coll == VCollective::alltoallv) {
    // sizes[i][j]: from rank i to rank j.
    std::vector<std::vector<std::size_t>> sizes;
    for (int i = 0; i < p; ++i) sizes.push_back(sizes_of(kind, p, rng));
    for (int r = 0; r < p; ++r) {
      std::vector<std::size_t> in(static_cast<std::size_t>(p));
      for (int i = 0; i < p; ++i) in[static_cast<std::size_t>(i)] = sizes[i][r];
      args[r].send = place(sizes[r], how, rng);
      args[r].recv = place(in, how, rng);
    }
    return args;
  }
  const std::vector<std::size_t> sizes = sizes_of(kind, p, rng);
  for (int r = 0; r < p; ++r) {
    // Every rank its own displacements (they count at the root only for scatterv and gatherv).
    args[r].blocks = place(sizes, how, rng);
  }
  (void)root;
  return args;
}

std::size_t total_moved_lower_bound(VCollective coll, const std::vector<VArgs>& args, int root) {
  const auto p = args.size();
  std::size_t n = 0;
  for (std::size_t i = 0; i < p; ++i) {
    switch (coll) {
      case VCollective::scatterv:
      case VCollective::gatherv:
        if (static_cast<int>(i) != root) n += args[i].blocks[i].bytes;
        break;
      case VCollective::allgatherv:
        n += (p - 1) * args[i].blocks[i].bytes;
        break;
      case VCollective::alltoallv:
        for (std::size_t j = 0; j < p; ++j) {
          if (j != i) n += args[i].send[j].bytes;
        }
        break;
    }
  }
  return n;
}

TEST(VRegistry, EveryVCollectiveHasATreeOrPairwiseFormAndALinearOne) {
  std::set<std::string> seen;
  for (const VAlgorithm& a : all_valgorithms()) {
    EXPECT_TRUE(seen.insert(std::string(to_string(a.coll)) + "/" + std::string(a.name)).second)
        << a.name;
    EXPECT_EQ(find_valgorithm(a.coll, a.name), &a);
    EXPECT_FALSE(a.summary.empty());
  }
  for (const VCollective c : kVCollectives)
    EXPECT_GE(valgorithms_for(c).size(), 2u) << to_string(c);
  EXPECT_NE(find_valgorithm(VCollective::alltoallv, "windowed"), nullptr);
  EXPECT_EQ(find_valgorithm(VCollective::scatterv, "no-such"), nullptr);
}

TEST(VAlgorithms, CorrectEverywhere) {
  std::mt19937 rng(12345);
  int cases = 0;
  for (const VAlgorithm& algo : all_valgorithms()) {
    for (int p = 1; p <= 11; ++p) {
      for (int lanes : {1, 2}) {
        for (const Layout& layout : layouts_for(p, lanes)) {
          for (int root = 0; root < p; ++root) {
            if (!is_rooted(algo.coll) && root > 0) break;
            for (Sizes kind : {Sizes::zero, Sizes::equal, Sizes::ragged, Sizes::one}) {
              for (Places how : {Places::in_order, Places::reversed_with_gaps, Places::shuffled}) {
                const std::vector<VArgs> args = spec(algo.coll, p, root, kind, how, rng);
                const SimResult res = simulate_v(algo, layout, root, args);
                ++cases;
                ASSERT_TRUE(res.ok)
                    << to_string(algo.coll) << " " << algo.name << " on " << layout.describe()
                    << ", root " << root << ", sizes " << static_cast<int>(kind) << ", places "
                    << static_cast<int>(how) << ": " << res.error;
                const std::size_t least = total_moved_lower_bound(algo.coll, args, root);
                EXPECT_GE(res.bytes_moved, least) << algo.name;
                if (algo.name == "linear" || algo.coll == VCollective::alltoallv) {
                  EXPECT_EQ(res.bytes_moved, least) << algo.name << ": every block moves once";
                }
                if (kind == Sizes::zero && algo.name == "binomial") {
                  EXPECT_EQ(res.messages, 0u) << algo.name;
                }
                if (algo.name != "binomial") {
                  // Empty blocks still travel (a size that disagrees fails, never waits).
                  const std::size_t pairs = static_cast<std::size_t>(p) * (p - 1);
                  EXPECT_EQ(res.messages,
                            is_rooted(algo.coll) ? static_cast<std::size_t>(p - 1) : pairs)
                      << algo.name;
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 5000);
}

// Sampled at larger sizes: every algorithm, ragged blocks, shuffled places.
TEST(VAlgorithms, CorrectAtSampledLargerSizes) {
  std::mt19937 rng(777);
  for (const VAlgorithm& algo : all_valgorithms()) {
    for (int p : {16, 33, 64}) {
      const Layout layout = Layout::blocks(p, 4, 2);
      for (int root : {0, p - 1, p / 3}) {
        if (!is_rooted(algo.coll) && root > 0) break;
        const std::vector<VArgs> args =
            spec(algo.coll, p, root, Sizes::ragged, Places::shuffled, rng);
        const SimResult res = simulate_v(algo, layout, root, args);
        ASSERT_TRUE(res.ok) << algo.name << " p " << p << ": " << res.error;
      }
    }
  }
}

// The binomial forms take ceil(log2 p) rounds; the linear ones one.
TEST(VAlgorithms, RoundsAsClaimed) {
  std::mt19937 rng(5);
  for (int p : {2, 5, 8, 13}) {
    const Layout layout = Layout::blocks(p, 2, 1);
    for (const VAlgorithm& algo : all_valgorithms()) {
      const std::vector<VArgs> args = spec(algo.coll, p, 0, Sizes::equal, Places::in_order, rng);
      const SimResult res = simulate_v(algo, layout, 0, args);
      ASSERT_TRUE(res.ok) << res.error;
      int log2p = 0;
      while ((1 << log2p) < p) ++log2p;
      if (algo.name == "linear") {
        EXPECT_EQ(res.max_rounds, 1);
      }
      if (algo.name == "binomial") {
        EXPECT_EQ(res.max_rounds, log2p);
      }
      if (algo.name == "ring" || algo.name == "pairwise") {
        EXPECT_EQ(res.max_rounds, p - 1);
      }
    }
  }
}

// A schedule that puts one block at the wrong place, or writes a byte outside every block, or
// arguments whose sizes disagree, fail the simulation.
Schedule build_scatterv_off_by_one(const Layout& layout, const VArgs& args) {
  Schedule s = valgorithm_scatterv_linear.build(layout, args);
  for (Op& op : s.ops) {
    if (op.kind == OpKind::send) {
      op.src.offset += 1;
      break;
    }
  }
  return s;
}

Schedule build_gatherv_writes_a_gap(const Layout& layout, const VArgs& args) {
  Schedule s = valgorithm_gatherv_linear.build(layout, args);
  if (args.rank == args.root) {
    for (Op& op : s.ops) {
      if (op.kind == OpKind::recv && op.dst.offset > 0) {
        op.dst.offset -= 1;  // into the gap before its block
        break;
      }
    }
  }
  return s;
}

TEST(VSimulator, RejectsBrokenSchedulesAndArguments) {
  std::mt19937 rng(9);
  const Layout layout = Layout::blocks(4, 2, 1);
  const VAlgorithm off_by_one{"off-by-one", VCollective::scatterv, build_scatterv_off_by_one, true,
                              "broken"};
  auto args = spec(VCollective::scatterv, 4, 0, Sizes::equal, Places::reversed_with_gaps, rng);
  SimResult res = simulate_v(off_by_one, layout, 0, args);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("should be"), std::string::npos) << res.error;

  const VAlgorithm gap{"gap", VCollective::gatherv, build_gatherv_writes_a_gap, true, "broken"};
  args = spec(VCollective::gatherv, 4, 0, Sizes::equal, Places::reversed_with_gaps, rng);
  res = simulate_v(gap, layout, 0, args);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("outside every block"), std::string::npos) << res.error;

  args = spec(VCollective::alltoallv, 4, 0, Sizes::equal, Places::in_order, rng);
  args[2].recv[1].bytes += 1;  // rank 1 sends rank 2 fewer bytes than it expects
  res = simulate_v(valgorithm_alltoallv_pairwise, layout, 0, args);
  EXPECT_FALSE(res.ok);

  args = spec(VCollective::allgatherv, 4, 0, Sizes::equal, Places::in_order, rng);
  args[3].blocks[0] = args[3].blocks[1];  // two blocks in one place
  res = simulate_v(valgorithm_allgatherv_ring, layout, 0, args);
  EXPECT_FALSE(res.ok);
  EXPECT_NE(res.error.find("overlap"), std::string::npos) << res.error;
}

}  // namespace
}  // namespace lanes::algos
