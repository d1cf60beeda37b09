#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <lanes/error.hpp>
#include <string>
#include <utility>
#include <vector>

#include "algos/cost_model.hpp"
#include "algos/layout.hpp"
#include "algos/registry.hpp"
#include "algos/schedule.hpp"

using namespace lanes::algos;

TEST(CostModel, ParsesCalibrationText) {
  const MachineParams m = MachineParams::parse(
      "# measured\nalpha_shm 2e-6\nbeta_shm 1e-10\nalpha_rail 1e-5  # comment\nbeta_rail 8e-10\n"
      "rails 2\nnode_bytes_per_s 3e9\n");
  EXPECT_DOUBLE_EQ(m.alpha_shm, 2e-6);
  EXPECT_DOUBLE_EQ(m.beta_rail, 8e-10);
  EXPECT_EQ(m.rails, 2);
  EXPECT_DOUBLE_EQ(m.node_bytes_per_s, 3e9);
  const MachineParams again = MachineParams::parse(m.to_text());
  EXPECT_DOUBLE_EQ(again.alpha_rail, m.alpha_rail);
  EXPECT_EQ(again.rails, 2);
  EXPECT_TRUE(m.rails_measured);
}

// Only a `rails` line sets the rail count; the node's own count serves otherwise, also when
// comments or rail_rates mention rails.
TEST(CostModel, RailsMeasuredOnlyFromARailsLine) {
  EXPECT_FALSE(MachineParams::parse("").rails_measured);
  const MachineParams m =
      MachineParams::parse("# rails of the node\nrail_rates 1.2e8 6e7  # two rails\n");
  EXPECT_FALSE(m.rails_measured);
  EXPECT_TRUE(MachineParams::parse("rails 4\n").rails_measured);
}

TEST(CostModel, RejectsUnknownKeysByName) {
  try {
    MachineParams::parse("alpha_shm 1e-6\nbandwidth 5\n");
    FAIL();
  } catch (const lanes::Error& e) {
    EXPECT_NE(std::string(e.what()).find("bandwidth"), std::string::npos);
  }
  EXPECT_THROW(MachineParams::parse("alpha_rail fast\n"), lanes::Error);
}

namespace {

std::string calibration_error(const std::string& text) {
  try {
    MachineParams::parse(text, "LANES_CALIBRATION file 'x.cal'");
  } catch (const lanes::Error& e) {
    EXPECT_EQ(e.code(), lanes::Errc::invalid_argument);
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(CostModel, CalibrationValuesAreCheckedByKey) {
  // Each rejected line (after a valid first line) and what the message must say about it.
  const std::vector<std::pair<std::string, std::string>> rejected = {
      {"rails -1", "line 2: rails: '-1' is not a whole number from 1 to 2147483647"},
      {"rails 0", "rails: '0' is not a whole number from 1 to 2147483647"},
      {"rails 1e10", "rails: '1e10' is not a whole number from 1 to 2147483647"},
      {"rails 2147483648", "rails: '2147483648' is not a whole number"},
      {"rails 2.5", "rails: '2.5' is not a whole number"},
      {"rails true", "rails: 'true' is not a finite number"},
      {"rails 2 3", "rails: expected one value, found 2"},
      {"rails", "rails: no value"},
      {"rails 0x2", "rails: '0x2' is not a finite number"},
      {"rails +2", "rails: '+2' is not a finite number"},
      {"stripe_min_bytes -1", "stripe_min_bytes: '-1' is not a whole number of bytes below 2^64"},
      {"stripe_min_bytes 1.5", "stripe_min_bytes: '1.5' is not a whole number of bytes"},
      {"stripe_min_bytes 1e20", "stripe_min_bytes: '1e20' is not a whole number of bytes"},
      {"sends_overlap 2", "sends_overlap: expected 0 or 1, not '2'"},
      {"sends_overlap true", "sends_overlap: expected 0 or 1, not 'true'"},
      {"sends_overlap 0.5", "sends_overlap: expected 0 or 1"},
      {"alpha_shm -1e-6", "alpha_shm: '-1e-6' is negative"},
      {"beta_rail inf", "beta_rail: 'inf' is not a finite number"},
      {"gamma nan", "gamma: 'nan' is not a finite number"},
      {"alpha_rail 1e400", "alpha_rail: '1e400' is not a finite number"},
      {"alpha_rail 5e-6x", "alpha_rail: '5e-6x' is not a finite number"},
      {"alpha_rail 5e-6 7", "alpha_rail: expected one value, found 2"},
      {"node_bytes_per_s true", "node_bytes_per_s: 'true' is not a finite number"},
      {"rail_rates 1e9 0", "rail_rates: '0' is not a positive rate"},
      {"rail_rates 1e9 -5", "rail_rates: '-5' is not a positive rate"},
      {"rail_rates 1e9 fast", "rail_rates: 'fast' is not a finite number"},
      {"rail_rates", "rail_rates: no value"},
  };
  for (const auto& [line, why] : rejected) {
    const std::string e = calibration_error("alpha_shm 1e-6\n" + line + "\n");
    EXPECT_NE(e.find("LANES_CALIBRATION file 'x.cal': "), std::string::npos) << line << ": " << e;
    EXPECT_NE(e.find(why), std::string::npos) << line << ": " << e;
  }
  // Without a file name the message still says where it comes from.
  try {
    MachineParams::parse("rails 1.5\n");
    FAIL();
  } catch (const lanes::Error& e) {
    EXPECT_NE(std::string(e.what()).find("calibration: line 1: rails"), std::string::npos);
  }
}

TEST(CostModel, CalibrationAcceptsWholeNumbersInAnySpelling) {
  const MachineParams m = MachineParams::parse(
      "rails 4e0   # whole\nstripe_min_bytes 1.04858e+06\nsends_overlap 0\nalpha_shm 0\n"
      "beta_rail 8.33e-10\nrail_rates 1e8 5e7 2.5e7 1e8\ngamma 2.5E-10\nhandoff 5e-6\n");
  EXPECT_EQ(m.rails, 4);
  EXPECT_EQ(m.stripe_min_bytes, 1048580.0);
  EXPECT_FALSE(m.sends_overlap);
  EXPECT_EQ(m.alpha_shm, 0.0);
  EXPECT_DOUBLE_EQ(m.beta_rail, 8.33e-10);
  EXPECT_EQ(m.rail_rates, (std::vector<double>{1e8, 5e7, 2.5e7, 1e8}));
  EXPECT_DOUBLE_EQ(m.gamma, 2.5e-10);
  EXPECT_DOUBLE_EQ(m.handoff, 5e-6);
  EXPECT_EQ(MachineParams::parse("rails 2147483647\n").rails, 2147483647);
  EXPECT_EQ(MachineParams::parse("stripe_min_bytes 65536\n").stripe_min_bytes, 65536.0);
  // What to_text writes reads back, stripe_min_bytes and sends_overlap included.
  MachineParams written;
  written.rails = 3;
  written.stripe_min_bytes = 1 << 20;
  written.sends_overlap = false;
  written.rail_rates = {1.25e9, 1.25e9, 6.25e8};
  written.handoff = 7e-6;
  const MachineParams again = MachineParams::parse(written.to_text());
  EXPECT_EQ(again.rails, 3);
  EXPECT_NEAR(again.stripe_min_bytes, 1 << 20, 10);
  EXPECT_FALSE(again.sends_overlap);
  EXPECT_EQ(again.rail_rates, written.rail_rates);
  EXPECT_DOUBLE_EQ(again.handoff, 7e-6);
}

TEST(CostModel, RailsShareBandwidth) {
  MachineParams m;
  m.rails = 2;
  CostInput in;
  in.lanes = 2;
  in.ppn = 2;  // every rank drives one lane
  const double one = rail_time(1e6, 1, in, m);
  const double two = rail_time(1e6, 2, in, m);   // two flows on two rails: no slowdown
  const double four = rail_time(1e6, 4, in, m);  // two flows per rail
  EXPECT_DOUBLE_EQ(one, two);
  EXPECT_NEAR(four - m.alpha_rail, 2 * (one - m.alpha_rail), 1e-12);
  EXPECT_DOUBLE_EQ(rail_time(1e6, 1, in, m, Spread::one_lane), one);
  in.lanes = 1;  // one lane: every flow on one rail
  EXPECT_NEAR(rail_time(1e6, 2, in, m) - m.alpha_rail, 2 * (one - m.alpha_rail), 1e-12);
}

TEST(CostModel, OneRankPerNodeStripesOverItsRails) {
  // A transfer over r rails costs alpha + beta * m / r.
  MachineParams m = MachineParams::parse("rails 4\nalpha_rail 1e-5\nbeta_rail 1e-9\n");
  CostInput in;
  in.lanes = 4;
  in.ppn = 1;
  EXPECT_NEAR(rail_time(1e6, 1, in, m), 1e-5 + 1e-3 / 4, 1e-12);
  EXPECT_NEAR(rail_time(1e6, 1, in, m, Spread::one_lane), 1e-5 + 1e-3, 1e-12);
  EXPECT_NEAR(rail_time(1e6, 2, in, m), 1e-5 + 1e-3 / 2, 1e-12);  // two flows share the rails
  in.ppn = 2;  // each rank drives two of the four lanes
  EXPECT_NEAR(rail_time(1e6, 1, in, m), 1e-5 + 1e-3 / 2, 1e-12);
  EXPECT_NEAR(rail_time(1e6, 1, in, m, Spread::node), 1e-5 + 1e-3 / 4, 1e-12);
  // Below the striping threshold a message stays on one rail.
  in.ppn = 1;
  ASSERT_GT(m.stripe_threshold(), 1000);
  EXPECT_NEAR(rail_time(1000, 1, in, m), 1e-5 + 1e-6, 1e-12);
  m.stripe_min_bytes = 500;
  EXPECT_NEAR(rail_time(1000, 1, in, m), 1e-5 + 1e-6 / 4, 1e-12);
}

TEST(CostModel, UnequalRailsAddTheirRates) {
  const MachineParams m = MachineParams::parse("rails 2\nalpha_rail 0\nrail_rates 1e8 5e7\n");
  EXPECT_DOUBLE_EQ(m.rail_rate(1), 5e7);
  EXPECT_EQ(m.rail_weights(2), (std::vector<std::uint32_t>{1000, 500}));
  CostInput in;
  in.lanes = 2;
  EXPECT_NEAR(rail_time(1.5e8, 1, in, m), 1.0, 1e-9);  // 1.5e8 bytes at 1.5e8 bytes/s
  in.lanes = 1;
  EXPECT_NEAR(rail_time(1.5e8, 1, in, m), 1.5, 1e-9);
  EXPECT_THROW(MachineParams::parse("rail_rates 1e8 -3\n"), lanes::Error);
  const MachineParams again = MachineParams::parse(m.to_text());
  EXPECT_EQ(again.rail_rates, m.rail_rates);
}

TEST(CostModel, EveryCollectiveHasPredictions) {
  CostInput in;
  in.nodes = 4;
  in.ppn = 2;
  in.lanes = 2;
  in.bytes = 1 << 20;
  MachineParams m;
  m.rails = 2;
  for (Collective c :
       {Collective::bcast, Collective::scatter, Collective::alltoall, Collective::allgather}) {
    const auto ranking = predict(c, in, m);
    ASSERT_FALSE(ranking.empty()) << to_string(c);
    for (std::size_t i = 1; i < ranking.size(); ++i) {
      EXPECT_LE(ranking[i - 1].seconds, ranking[i].seconds);
    }
    for (const auto& r : ranking) EXPECT_GT(r.seconds, 0) << r.algorithm;
  }
}

TEST(CostModel, AnswersAtHundredThousandNodes) {
  CostInput in;
  in.nodes = 100000;
  in.ppn = 32;
  in.lanes = 2;
  in.bytes = 1 << 20;
  MachineParams m;
  m.rails = 2;
  for (Collective c :
       {Collective::bcast, Collective::scatter, Collective::alltoall, Collective::allgather}) {
    const auto ranking = predict(c, in, m);
    ASSERT_FALSE(ranking.empty()) << to_string(c);
    EXPECT_TRUE(std::isfinite(ranking.front().seconds));
  }
}

TEST(CostModel, MoreBytesNeverCheaper) {
  MachineParams m;
  for (const Algorithm& a : all_algorithms()) {
    if (a.cost == nullptr) continue;
    CostInput small, big;
    small.nodes = big.nodes = 8;
    small.ppn = big.ppn = 4;
    small.bytes = 1000;
    big.bytes = 1000000;
    EXPECT_LE(a.cost(small, m), a.cost(big, m)) << to_string(a.coll) << " " << a.name;
  }
}

namespace {

// Default parameters with `rails` rails, and a shape using `lanes` lanes.
MachineParams rails_machine(int rails) {
  MachineParams m;
  m.rails = rails;
  return m;
}

CostInput shape(long long nodes, long long ppn, int lanes, std::size_t bytes) {
  CostInput in;
  in.nodes = nodes;
  in.ppn = ppn;
  in.lanes = lanes;
  in.bytes = bytes;
  return in;
}

double cost_of(Collective coll, const char* name, const CostInput& in, const MachineParams& m) {
  const Algorithm* algo = find_algorithm(coll, name);
  if (algo == nullptr || algo->cost == nullptr) {
    ADD_FAILURE() << "no cost for " << to_string(coll) << " " << name;
    return 0;
  }
  return algo->cost(in, m);
}

// Every message costs 1 and no byte costs anything: a cost then counts rounds.
MachineParams alpha_only() {
  MachineParams m;
  m.alpha_shm = m.alpha_rail = 1;
  m.beta_shm = m.beta_rail = 0;
  m.gamma = 0;
  return m;
}

}  // namespace

TEST(CostModel, EveryAlgorithmHasACost) {
  for (const Algorithm& a : all_algorithms()) {
    EXPECT_NE(a.cost, nullptr) << to_string(a.coll) << " " << a.name;
  }
}

TEST(CostModel, CostsArePositiveFiniteAndGrowWithBytes) {
  const std::size_t sizes[] = {1, 1000, 1 << 20, 1 << 26};
  for (long long nodes : {1LL, 2LL, 16LL, 10000LL}) {
    for (long long ppn : {1LL, 2LL, 32LL}) {
      for (int lanes : {1, 2}) {
        const MachineParams m = rails_machine(2);
        for (const Algorithm& a : all_algorithms()) {
          double previous = 0;
          for (std::size_t bytes : sizes) {
            const CostInput in = shape(nodes, ppn, lanes, bytes);
            const double t = a.cost(in, m);
            const std::string what = std::string(to_string(a.coll)) + " " + std::string(a.name) +
                                     " on " + std::to_string(nodes) + " x " + std::to_string(ppn) +
                                     ", k " + std::to_string(lanes) + ", " + std::to_string(bytes) +
                                     " bytes";
            EXPECT_TRUE(std::isfinite(t)) << what;
            if (in.p() > 1) {
              EXPECT_GT(t, 0) << what;
            } else {
              EXPECT_GE(t, 0) << what;
            }
            EXPECT_GE(t, previous) << what;
            previous = t;
          }
        }
      }
    }
  }
}

// With alpha = 1 and beta = 0 a cost counts the rounds the algorithm's builder reports (the
// linear algorithms excepted: their one round holds p - 1 start-ups at the root; the pipeline,
// whose rounds hold n - 1 start-ups of a carrier handing a segment out on its node; and the
// full-lane allreduce and reduce, whose node phases are one round of n - 1 messages each, and the
// pairwise reduce-scatter, one round of p - 1; the hierarchical barrier adds a quarter start-up
// per further token its node leader takes in).
TEST(CostModel, AlphaOnlyCostsCountTheScheduleRounds) {
  const MachineParams m = alpha_only();
  for (int nodes = 1; nodes <= 5; ++nodes) {
    for (int ppn = 1; ppn <= 5; ++ppn) {
      for (int lanes = 1; lanes <= 3; ++lanes) {
        const Layout layout =
            Layout::from_node_sizes(std::vector<int>(static_cast<std::size_t>(nodes), ppn), lanes);
        const CostInput in = shape(nodes, ppn, lanes, 64);
        for (const Algorithm& a : all_algorithms()) {
          if (a.name == "linear" || (a.name == "pipeline" && ppn > 1)) continue;
          // Direct node phases, and one round of p - 1 messages.
          if (is_reduction(a.coll) && a.name == "full-lane") continue;
          if (a.coll == Collective::reduce_scatter_block && a.name == "pairwise") continue;
          if (a.applicable != nullptr && !a.applicable(layout)) continue;
          int rounds = 0;
          for (int rank = 0; rank < layout.size; ++rank) {
            CollArgs args;
            args.coll = a.coll;
            args.rank = rank;
            args.bytes =
                a.coll == Collective::bcast ? 64 * static_cast<std::size_t>(layout.size) : 64;
            args.elem = is_reduction(a.coll) ? 8 : 1;
            rounds = std::max(rounds, a.build(layout, args).rounds);
          }
          const double fan_in =
              a.coll == Collective::barrier && a.name == "hierarchical" ? (ppn - 1) / 4.0 : 0.0;
          EXPECT_DOUBLE_EQ(a.cost(in, m), rounds + fan_in)
              << to_string(a.coll) << " " << a.name << " on " << layout.describe();
        }
      }
    }
  }
}

TEST(CostModel, KportedTakesCeilLogKPlusOneRounds) {
  const MachineParams m = alpha_only();
  for (long long nodes : {1LL, 2LL, 7LL, 16LL, 10000LL}) {
    for (long long ppn : {1LL, 3LL, 32LL}) {
      for (int k = 1; k <= 4; ++k) {
        const CostInput in = shape(nodes, ppn, k, 1 << 20);
        const int rounds = ceil_log(in.p(), k + 1);
        EXPECT_DOUBLE_EQ(cost_of(Collective::bcast, "kported", in, m), rounds);
        EXPECT_DOUBLE_EQ(cost_of(Collective::scatter, "kported", in, m), rounds);
      }
    }
  }
  // Fewer rounds than binomial with two ports: 10000 x 32 ranks in 12 rounds instead of 19.
  const CostInput in = shape(10000, 32, 2, 1 << 20);
  EXPECT_DOUBLE_EQ(cost_of(Collective::bcast, "kported", in, m), 12);
  EXPECT_DOUBLE_EQ(cost_of(Collective::bcast, "binomial", in, m), 19);
}

// Large messages on several nodes with k >= 2 rails and n >= k: full-lane moves a 1/n share per
// rank between nodes with all n ranks driving the rails. binomial moves the whole message per
// round from the node's only rank off the node, over all of its lanes: the same rate, so the two
// cost about the same for bcast. For scatter with n = k, full-lane beats linear, whose root sends
// every block over the one lane it drives, on a few nodes (with more ranks per node, full-lane's
// on-node scatter of N blocks per rank costs more than the lanes save at these sizes; on many
// nodes, its binomial scatter over the nodes pays for the subtree roots' sends sharing lanes).
TEST(CostModel, FullLaneKeepsUpWithBinomialForLargeMessages) {
  for (int k : {2, 4}) {
    const MachineParams m = rails_machine(k);
    for (long long nodes : {2LL, 4LL, 16LL, 10000LL}) {
      for (long long ppn : {2LL, 8LL, 32LL}) {
        if (ppn < k) continue;
        const CostInput bcast = shape(nodes, ppn, k, 16 << 20);
        EXPECT_LE(cost_of(Collective::bcast, "full-lane", bcast, m),
                  1.01 * cost_of(Collective::bcast, "binomial", bcast, m))
            << nodes << " x " << ppn << ", k " << k;
        const CostInput scatter = shape(nodes, ppn, k, 1 << 20);
        if (ppn != k || nodes > 4) continue;
        EXPECT_LT(cost_of(Collective::scatter, "full-lane", scatter, m),
                  cost_of(Collective::scatter, "linear", scatter, m))
            << nodes << " x " << ppn << ", k " << k;
      }
    }
  }
  // N = 16, n = 8, k = 2, rails 2, 16 MiB bcast: full-lane beats kported, whose concurrent copies
  // share one rank's lane.
  const CostInput in = shape(16, 8, 2, 16 << 20);
  const MachineParams m = rails_machine(2);
  EXPECT_LT(cost_of(Collective::bcast, "full-lane", in, m),
            cost_of(Collective::bcast, "kported", in, m));
}

TEST(CostModel, BandwidthSavingNeverCostsMore) {
  for (long long nodes : {1LL, 2LL, 3LL, 16LL, 10000LL}) {
    for (long long ppn : {1LL, 2LL, 3LL, 6LL, 8LL, 32LL}) {
      for (int k : {1, 2}) {
        for (int rails : {1, 2}) {
          for (std::size_t bytes : {std::size_t{1}, std::size_t{1} << 10, std::size_t{1} << 24}) {
            const CostInput in = shape(nodes, ppn, k, bytes);
            const MachineParams m = rails_machine(rails);
            EXPECT_LE(cost_of(Collective::bcast, "scatter-ring-bwsave", in, m),
                      cost_of(Collective::bcast, "scatter-ring", in, m))
                << nodes << " x " << ppn << ", k " << k << ", rails " << rails << ", " << bytes;
          }
        }
      }
    }
  }
  // Saves when a node's first rank holds several blocks from the scatter: N = 16, n = 8, 16 MiB.
  const CostInput in = shape(16, 8, 2, 16 << 20);
  EXPECT_LT(cost_of(Collective::bcast, "scatter-ring-bwsave", in, rails_machine(2)),
            cost_of(Collective::bcast, "scatter-ring", in, rails_machine(2)));
}

// Small messages (1 KiB): a tree that sends the whole message a few times beats scattering p
// blocks and gathering them again.
TEST(CostModel, SmallBcastFavoursTrees) {
  for (long long nodes : {1LL, 2LL, 16LL, 10000LL}) {
    for (long long ppn : {1LL, 2LL, 8LL, 32LL}) {
      for (int k : {1, 2}) {
        const CostInput in = shape(nodes, ppn, k, 1024);
        if (in.p() == 1) continue;
        const MachineParams m = rails_machine(2);
        const double tree = std::min(cost_of(Collective::bcast, "binomial", in, m),
                                     cost_of(Collective::bcast, "kported", in, m));
        for (const char* name : {"scatter-allgather", "scatter-ring", "scatter-ring-bwsave"}) {
          EXPECT_LT(tree, cost_of(Collective::bcast, name, in, m))
              << name << " on " << nodes << " x " << ppn << ", k " << k;
        }
      }
    }
  }
  // N = 16, n = 8, k = 2, rails 2: binomial and kported each cheaper than scatter-ring.
  const CostInput in = shape(16, 8, 2, 1024);
  const MachineParams m = rails_machine(2);
  EXPECT_LT(cost_of(Collective::bcast, "binomial", in, m),
            cost_of(Collective::bcast, "scatter-ring", in, m));
  EXPECT_LT(cost_of(Collective::bcast, "kported", in, m),
            cost_of(Collective::bcast, "binomial", in, m));
}

TEST(CostModel, PredictsEveryBcastAtTenThousandNodes) {
  CostInput in = shape(10000, 32, 2, 1 << 20);
  const MachineParams m = rails_machine(2);
  const auto ranking = predict(Collective::bcast, in, m);
  EXPECT_EQ(ranking.size(), algorithms_for(Collective::bcast).size());
  EXPECT_EQ(ranking.size(), 9u);
  for (const Algorithm* a : algorithms_for(Collective::bcast)) {
    EXPECT_TRUE(std::any_of(ranking.begin(), ranking.end(), [&](const Prediction& p) {
      return p.algorithm == a->name;
    })) << a->name;
  }
  for (const auto& p : ranking) EXPECT_TRUE(std::isfinite(p.seconds) && p.seconds > 0);
  // Irregular layouts leave out full-lane, which needs every node to hold n ranks.
  in.regular = false;
  const auto irregular = predict(Collective::bcast, in, m);
  EXPECT_EQ(irregular.size(), 8u);
  for (const auto& p : irregular) EXPECT_NE(p.algorithm, "full-lane");
}

// Reductions: every algorithm priced at 10000 x 32 ranks (the hierarchical ones search the
// divisors of p for their group count), finite and positive.
TEST(CostModel, PredictsEveryReductionAtTenThousandNodes) {
  const CostInput in = shape(10000, 32, 2, 1 << 20);
  const MachineParams m = rails_machine(2);
  for (Collective c :
       {Collective::reduce, Collective::allreduce, Collective::reduce_scatter_block}) {
    const auto ranking = predict(c, in, m);
    EXPECT_EQ(ranking.size(), algorithms_for(c).size()) << to_string(c);
    for (const auto& p : ranking) {
      EXPECT_TRUE(std::isfinite(p.seconds) && p.seconds > 0) << to_string(c) << " " << p.algorithm;
    }
  }
}

// Long vectors: Rabenseifner's reduce-scatter moves about 2 m per rank where the trees move
// m log2 p; short ones: the trees' log2 p start-ups win.
TEST(CostModel, LongReductionsFavourRabenseifner) {
  const MachineParams m = rails_machine(2);
  const CostInput big = shape(16, 8, 2, 16 << 20);
  EXPECT_LT(cost_of(Collective::reduce, "rabenseifner", big, m),
            cost_of(Collective::reduce, "binomial", big, m));
  const CostInput small = shape(16, 8, 2, 8);
  EXPECT_LT(cost_of(Collective::reduce, "binomial", small, m),
            cost_of(Collective::reduce, "rabenseifner", small, m));
  // The pipelined chain hides its p - 1 hops behind its segments only for long vectors.
  EXPECT_LT(cost_of(Collective::reduce, "chain", big, m),
            cost_of(Collective::reduce, "binomial", big, m));
  EXPECT_GT(cost_of(Collective::reduce, "chain", small, m),
            cost_of(Collective::reduce, "binomial", small, m));
}

TEST(CostModel, LongAllreducesFavourRabenseifner) {
  const MachineParams m = rails_machine(2);
  const CostInput big = shape(16, 8, 2, 16 << 20);
  EXPECT_LT(cost_of(Collective::allreduce, "rabenseifner", big, m),
            cost_of(Collective::allreduce, "recursive-doubling", big, m));
  EXPECT_LT(cost_of(Collective::allreduce, "rabenseifner", big, m),
            cost_of(Collective::allreduce, "ring", big, m));
  const CostInput small = shape(16, 8, 2, 8);
  EXPECT_LT(cost_of(Collective::allreduce, "recursive-doubling", small, m),
            cost_of(Collective::allreduce, "rabenseifner", small, m));
}

// The hierarchical linear reduce on one node of 64 ranks: G = 8 groups, (8 - 1) + (8 - 1)
// start-ups where the flat tree has 63.
TEST(CostModel, HierarchicalLinearHasTwiceSqrtPStartups) {
  const MachineParams m = alpha_only();
  const CostInput in = shape(1, 64, 1, 8);
  EXPECT_DOUBLE_EQ(cost_of(Collective::reduce, "linear", in, m), 63);
  EXPECT_DOUBLE_EQ(cost_of(Collective::reduce, "hierarchical-linear", in, m), 14);
}

namespace {

// The 2 x 2 emulated cluster's calibration (two rails of 1 Gbit/s shaped with 80 KiB buckets),
// with the burst that lanes-calibrate measured there or without it.
MachineParams shaped_rails(double burst) {
  return MachineParams::parse(
      "alpha_shm 9.89e-07\nbeta_shm 8.216e-11\nalpha_rail 5.819e-06\nbeta_rail 8.334e-09\n"
      "rails 2\nrail_rates 1.2e+08 1.199e+08\ngamma 6.767e-11\nrail_burst_bytes " +
      std::to_string(burst) + "\n");
}

}  // namespace

TEST(CostModel, ParsesAndWritesTheRailBurst) {
  EXPECT_EQ(MachineParams::parse("").rail_burst_bytes, 0.0);
  EXPECT_DOUBLE_EQ(shaped_rails(69191).rail_burst_bytes, 69191.0);
  EXPECT_DOUBLE_EQ(MachineParams::parse(shaped_rails(69191).to_text()).rail_burst_bytes, 69191.0);
  // No burst writes no line.
  EXPECT_EQ(MachineParams().to_text().find("rail_burst_bytes"), std::string::npos);
  EXPECT_NE(calibration_error("rail_burst_bytes -1\n").find("rail_burst_bytes"), std::string::npos);
}

TEST(CostModel, NodeVolumeIsWhatTheBusiestNodeMustSend) {
  const CostInput in = shape(2, 2, 2, 1000);  // 2 nodes x 2 ranks, 1000 bytes
  EXPECT_EQ(node_volume(Collective::bcast, in), 1000.0);
  EXPECT_EQ(node_volume(Collective::allreduce, in), 1000.0);
  EXPECT_EQ(node_volume(Collective::scatter, in), 2000.0);   // two blocks leave the root's node
  EXPECT_EQ(node_volume(Collective::alltoall, in), 4000.0);  // 2 ranks x 2 blocks each
  EXPECT_EQ(node_volume(Collective::allgather, in), 2000.0);
  EXPECT_EQ(node_volume(Collective::barrier, in), 0.0);
  EXPECT_EQ(node_volume(Collective::bcast, shape(1, 4, 1, 1000)), 0.0);
}

// A call is inside the bursts when its bytes are at most an eighth of the buckets of the lanes
// it may use; never on one node, never without a burst.
TEST(CostModel, WithinBurstCountsTheLanesBuckets) {
  const MachineParams m = shaped_rails(80000);
  EXPECT_TRUE(within_burst(20000, shape(2, 2, 2, 1), m));  // 2 lanes: 20000 bytes
  EXPECT_FALSE(within_burst(20001, shape(2, 2, 2, 1), m));
  EXPECT_TRUE(within_burst(10000, shape(2, 2, 1, 1), m));  // 1 lane: 10000
  EXPECT_FALSE(within_burst(10001, shape(2, 2, 1, 1), m));
  EXPECT_FALSE(within_burst(1, shape(1, 4, 2, 1), m));
  EXPECT_FALSE(within_burst(1, shape(2, 2, 2, 1), shaped_rails(0)));
}

// On shaped rails a small broadcast's bytes ride the buckets, so splitting it over the node's
// ranks saves no time on the wire and costs a hop on each node: 4000 bytes on 2 x 2 took 23 us
// with full-lane and 10 us with binomial, hierarchical or pipeline, whose choice the model made
// with the burst (without it, full-lane). Calls too large for the buckets are priced as before.
TEST(CostModel, SmallCallsInsideTheBurstAvoidNodeSplits) {
  const CostInput small = shape(2, 2, 2, 4000);
  EXPECT_EQ(predict(Collective::bcast, small, shaped_rails(0)).front().algorithm, "full-lane");
  const auto shaped = predict(Collective::bcast, small, shaped_rails(69191));
  EXPECT_NE(shaped.front().algorithm, "full-lane");
  EXPECT_LT(shaped.front().seconds, cost_of(Collective::bcast, "full-lane", small,
                                            within_burst_params(shaped_rails(69191))));
  for (Collective c : {Collective::bcast, Collective::scatter, Collective::alltoall,
                       Collective::allreduce, Collective::reduce}) {
    const CostInput large = shape(2, 2, 2, 4000000);
    const auto with = predict(c, large, shaped_rails(69191));
    const auto without = predict(c, large, shaped_rails(0));
    ASSERT_EQ(with.size(), without.size());
    for (std::size_t i = 0; i < with.size(); ++i) {
      EXPECT_EQ(with[i].algorithm, without[i].algorithm);
      EXPECT_DOUBLE_EQ(with[i].seconds, without[i].seconds);
    }
  }
}

// A NIC serializes every byte at its rate: its times, give or take 5 %, show no burst. A token
// bucket of B bytes in front of a faster link passes B bytes at that link's rate and the rest at
// the shaped rate: the estimate is B less what B takes on the faster link, in beta's bytes
// (the testbed: 80 KiB buckets, 67-69 KB measured).
TEST(CostModel, BurstFromTimesOfPausedMessages) {
  const double alpha = 10e-6, beta = 8.33e-9;  // 1 Gbit/s
  std::vector<std::pair<double, double>> nic, bucket;
  const double b = 80 * 1024, fast = 7e8;
  int i = 0;
  for (double s = 16 * 1024; s <= 1 << 20; s *= 2, ++i) {
    nic.emplace_back(s, alpha + s * beta * (i % 2 == 0 ? 0.95 : 1.05));
    bucket.emplace_back(s, alpha + std::min(s, b) / fast + std::max(0.0, s - b) * beta);
  }
  EXPECT_EQ(burst_bytes_from(nic, alpha, beta), 0.0);
  const double estimate = burst_bytes_from(bucket, alpha, beta);
  EXPECT_NEAR(estimate, b - b / fast / beta, 1.0);
  EXPECT_GT(estimate, 0.75 * b);
  EXPECT_EQ(burst_bytes_from(bucket, alpha, 0), 0.0);  // no rate measured
}
