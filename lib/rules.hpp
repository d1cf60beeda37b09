// Selection rules from a JSON file (LANES_RULES): which algorithm to use for which collective,
// message size and communicator size, checked before the cost model is asked.
//
//   {"rules": [
//     {"collective": "bcast", "max_bytes": 65536, "algorithm": "binomial"},
//     {"collective": "bcast", "min_bytes": 65536, "min_ranks": 8, "algorithm": "full-lane"}
//   ]}
//
// Bytes are as in the call (bcast: the message; others: one block); min_* are inclusive,
// max_* exclusive; the first matching rule wins.
#pragma once

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "algos/schedule.hpp"

namespace lanes::detail {

struct Rule {
  algos::Collective coll = algos::Collective::bcast;
  std::size_t min_bytes = 0;
  std::size_t max_bytes = std::numeric_limits<std::size_t>::max();
  int min_ranks = 0;
  int max_ranks = std::numeric_limits<int>::max();
  std::string algorithm;
};

class Rules {
 public:
  // Throws lanes::Error(invalid_argument) naming the rule and field that is wrong, including
  // unknown collectives and algorithm names.
  static Rules parse(const std::string& json);
  std::optional<std::string> match(algos::Collective coll, std::size_t bytes, int ranks) const;
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<Rule> rules_;
};

}  // namespace lanes::detail
