// A map of bounded size that forgets its least recently used entry when full, for caches keyed
// by call shape: a program with more shapes than the bound keeps its busiest ones instead of
// losing every entry at once. Each use stamps its entry; only an insertion into a full map looks
// for the oldest stamp (a linear scan, rare next to the schedule build that precedes it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

namespace lanes::detail {

template <class Key, class Value>
class LruMap {
 public:
  explicit LruMap(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value of `key`, now the most recently used; null when absent.
  Value* find(const Key& key) {
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    it->second.used = ++clock_;
    return &it->second.value;
  }

  // Enters (or replaces) `key` as the most recently used; the least recently used entry leaves
  // when the map is full. Returns the stored value.
  Value& put(const Key& key, Value value) {
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      if (entries_.size() == capacity_) {
        auto oldest = entries_.begin();
        for (auto e = entries_.begin(); e != entries_.end(); ++e) {
          if (e->second.used < oldest->second.used) oldest = e;
        }
        entries_.erase(oldest);
      }
      it = entries_.emplace(key, Entry{}).first;
    }
    it->second.value = std::move(value);
    it->second.used = ++clock_;
    return it->second.value;
  }

  std::size_t size() const { return entries_.size(); }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    Value value{};
    std::uint64_t used = 0;
  };
  std::size_t capacity_;
  std::uint64_t clock_ = 0;
  std::map<Key, Entry> entries_;
};

}  // namespace lanes::detail
