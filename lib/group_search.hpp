// LANES_HIERARCHY_GROUPS=search: the number of groups G of a hierarchical-<base> reduce (and of
// the hierarchical allreduce) measured rather than priced. Hasanov and Lastovetsky's transformation
// is never slower than its base in principle, since G = 1 is the base algorithm itself; the cost
// model's G is only as good as the model, and on links that let a short burst through at memory
// speed (token buckets) it took G = 2 for a 64 KB chain reduce that ran 1.52x slower than the plain
// chain.
//
// Per communicator and call class (collective and algorithm, vector size rounded down to a power
// of two, lanes, first rail), the first blocking calls try every G of hierarchical_group_choices in
// turn, one untimed round first (a G's first call meets cold caches, new connections and scratch)
// and then kRounds timed ones; the call that completes the trials allgathers every process's least
// time per G, and every process takes the G whose slowest process was fastest, unless the cost
// model's G comes within kMargin of it (then the model's: the default needs clear evidence to
// change): the same on every rank, from the same numbers. Every later call of the class takes
// it. The counters advance alike on every rank because the calls come in the same order
// everywhere. This class holds the bookkeeping; CommImpl runs the calls and the allgather.
//
// Measured on 4 emulated nodes of 2 processes (8 on 2 cores, two rails of 1 Gbit/s), every base
// against its transformation from 16 KB to 16 MB (bench/results.sh --only 4x2-hierarchy): with
// the timed rounds alone and no margin, the chain took G = 1 at 64 KB (0.98x the base, where the
// model's G = 2 took 1.52x) and G = 4 from 1 MB (0.60-0.64x, where the model's G = 1 is the base
// itself), but Rabenseifner's took G = 4 at 4 MB on trials 1 % apart and ran 1.11x the base.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <tuple>
#include <vector>

namespace lanes::detail {

class GroupSearch {
 public:
  static constexpr int kWarmRounds = 1;    // untimed trials of each G first
  static constexpr int kRounds = 2;        // timed trials of each G; the least time counts
  static constexpr double kMargin = 0.05;  // how much faster than the model's G another must be

  struct Key {
    int coll = 0;  // algos::Collective
    std::string algorithm;
    std::size_t bytes_class = 0;  // the vector's size rounded down to a power of two
    int lanes = 0;
    int first_rail = 0;
    auto operator<=>(const Key&) const = default;
  };
  static Key key_of(int coll, const std::string& algorithm, std::size_t bytes, int lanes,
                    int first_rail);

  // The G that `key` settled on; 0 while it is searched or before its first call.
  int settled(const Key& key) const;
  // The G this call tries, starting `key`'s search over `choices` (ascending, G = 1 first) on its
  // first call. With a single choice the search is over at once: it settles on it.
  int next_trial(const Key& key, const std::vector<int>& choices);
  // Records the time of the trial next_trial gave last; true when that was the last trial (the
  // caller then agrees with the others: best_times, then settle).
  bool record(const Key& key, double seconds);
  // This process's least time of each choice, in the order of choices(key).
  std::vector<double> best_times(const Key& key) const;
  const std::vector<int>& choices(const Key& key) const;
  // Settles `key` from every process's best_times, one process after another in `all`: the choice
  // whose greatest time is least (the earlier one on a tie), unless `model` (the cost model's G)
  // is a choice whose greatest time is within kMargin of that. Returns the G.
  int settle(const Key& key, std::span<const double> all, int model);
  // The slowest process's time of each choice, as settle found them (for LANES_INFO).
  const std::vector<double>& slowest(const Key& key) const;

 private:
  struct Entry {
    std::vector<int> choices;
    std::vector<double> best;     // this process, per choice
    std::vector<double> slowest;  // every process's greatest, per choice, once settled
    int trials = 0;               // trials started
    int current = -1;             // the choice of the trial in flight
    int groups = 0;               // settled G
  };
  Entry& entry(const Key& key);
  const Entry* find(const Key& key) const;
  std::map<Key, Entry> entries_;
};

}  // namespace lanes::detail
