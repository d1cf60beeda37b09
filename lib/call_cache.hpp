// What preparing a call decides once per call shape: the algorithm and its schedule. Programs
// repeat a few shapes; a hit costs a few comparisons instead of the selection's string work and
// the schedule cache's map lookup. The newest shapes come first; the oldest leaves when full.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace lanes::detail {

struct PreparedSchedule;

// Everything the choice of algorithm and the schedule depend on, besides CallOptions::algorithm.
struct CallShape {
  int coll = 0;
  int root = 0;  // rooted collectives
  std::size_t block = 0;
  int lanes = 0;
  int first_rail = 0;
  std::size_t elem = 1;  // reductions
  int user = 0;          // 0: no user operation, 1: a commutative one, 2: a non-commutative one
  bool operator==(const CallShape&) const = default;
};

struct CallDecision {
  std::string algorithm;
  std::shared_ptr<const PreparedSchedule> schedule;  // null: nothing to move
};

class CallCache {
 public:
  // The decision for `shape` with CallOptions::algorithm `requested`, or null.
  const CallDecision* find(const CallShape& shape, std::string_view requested) {
    for (std::size_t i = 0; i < size_; ++i) {
      if (entries_[i].shape == shape && entries_[i].requested == requested) {
        return &entries_[i].decision;
      }
    }
    return nullptr;
  }

  // Enters a decision first; the last one leaves when the cache is full.
  void add(const CallShape& shape, std::string_view requested, CallDecision decision) {
    if (size_ < kCapacity) ++size_;
    std::move_backward(entries_.begin(), entries_.begin() + static_cast<std::ptrdiff_t>(size_ - 1),
                       entries_.begin() + static_cast<std::ptrdiff_t>(size_));
    entries_[0] = Entry{shape, std::string(requested), std::move(decision)};
  }

  void clear() {
    entries_ = {};
    size_ = 0;
  }

 private:
  static constexpr std::size_t kCapacity = 16;
  struct Entry {
    CallShape shape;
    std::string requested;
    CallDecision decision;
  };
  std::array<Entry, kCapacity> entries_;
  std::size_t size_ = 0;
};

}  // namespace lanes::detail
