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
  // Throws lanes::Error(invalid_argument) naming `source` (the file), the rule and the field
  // that is wrong, including unknown collectives and algorithm names. Byte and rank bounds are
  // whole numbers (65536, 65536.0 or 6.5536e4; not -1, 1.5, true or "64"), bytes up to
  // SIZE_MAX, ranks up to INT_MAX, and a rule's range must not be empty.
  static Rules parse(const std::string& json, const std::string& source = "LANES_RULES");
  std::optional<std::string> match(algos::Collective coll, std::size_t bytes, int ranks) const;
  bool empty() const { return rules_.empty(); }

 private:
  std::vector<Rule> rules_;
};

}  // namespace lanes::detail
