#include "lib/group_search.hpp"

#include <algorithm>
#include <bit>
#include <lanes/error.hpp>
#include <limits>

namespace lanes::detail {

GroupSearch::Key GroupSearch::key_of(int coll, const std::string& algorithm, std::size_t bytes,
                                     int lanes, int first_rail) {
  return Key{coll, algorithm, std::bit_floor(bytes), lanes, first_rail};
}

GroupSearch::Entry& GroupSearch::entry(const Key& key) {
  return entries_[key];
}

const GroupSearch::Entry* GroupSearch::find(const Key& key) const {
  const auto it = entries_.find(key);
  return it == entries_.end() ? nullptr : &it->second;
}

int GroupSearch::settled(const Key& key) const {
  const Entry* e = find(key);
  return e != nullptr ? e->groups : 0;
}

int GroupSearch::next_trial(const Key& key, const std::vector<int>& choices) {
  Entry& e = entry(key);
  if (e.groups != 0) return e.groups;
  if (e.choices.empty()) {
    if (choices.empty()) throw Error(Errc::internal, "group search without choices");
    e.choices = choices;
    e.best.assign(choices.size(), std::numeric_limits<double>::infinity());
    if (choices.size() == 1) {
      e.groups = choices.front();
      return e.groups;
    }
  }
  // Round robin: every G once, then every G again, so that slow moments of the machine spread
  // over all of them.
  e.current = e.trials % static_cast<int>(e.choices.size());
  ++e.trials;
  return e.choices[static_cast<std::size_t>(e.current)];
}

bool GroupSearch::record(const Key& key, double seconds) {
  Entry& e = entry(key);
  if (e.groups != 0 || e.current < 0) return false;
  const int n = static_cast<int>(e.choices.size());
  if (e.trials > kWarmRounds * n) {
    double& best = e.best[static_cast<std::size_t>(e.current)];
    best = std::min(best, seconds);
  }
  e.current = -1;
  return e.trials >= (kWarmRounds + kRounds) * n;
}

std::vector<double> GroupSearch::best_times(const Key& key) const {
  const Entry* e = find(key);
  return e != nullptr ? e->best : std::vector<double>{};
}

const std::vector<int>& GroupSearch::choices(const Key& key) const {
  static const std::vector<int> none;
  const Entry* e = find(key);
  return e != nullptr ? e->choices : none;
}

int GroupSearch::settle(const Key& key, std::span<const double> all, int model) {
  Entry& e = entry(key);
  const std::size_t n = e.choices.size();
  if (n == 0 || all.empty() || all.size() % n != 0) {
    throw Error(Errc::internal, "group search: " + std::to_string(all.size()) + " times for " +
                                    std::to_string(n) + " choices");
  }
  e.slowest.assign(n, 0.0);
  for (std::size_t i = 0; i < all.size(); ++i) {
    e.slowest[i % n] = std::max(e.slowest[i % n], all[i]);
  }
  std::size_t pick = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (e.slowest[i] < e.slowest[pick]) pick = i;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (e.choices[i] == model && e.slowest[i] <= (1 + kMargin) * e.slowest[pick]) pick = i;
  }
  e.groups = e.choices[pick];
  return e.groups;
}

const std::vector<double>& GroupSearch::slowest(const Key& key) const {
  static const std::vector<double> none;
  const Entry* e = find(key);
  return e != nullptr ? e->slowest : none;
}

}  // namespace lanes::detail
