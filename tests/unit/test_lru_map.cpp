// lib/lru_map.hpp: the bounded caches keyed by call shape.
#include "lib/lru_map.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

using lanes::detail::LruMap;

namespace {

// The value under `key`, or "absent".
template <class Map>
std::string value_of(Map& m, int key) {
  auto* v = m.find(key);
  if (v == nullptr) return "absent";
  if constexpr (std::is_same_v<std::remove_pointer_t<decltype(v)>, std::string>) {
    return *v;
  } else {
    return std::to_string(*v);
  }
}

}  // namespace

TEST(LruMap, ForgetsTheLeastRecentlyUsedWhenFull) {
  LruMap<int, std::string> m(3);
  m.put(1, "one");
  m.put(2, "two");
  m.put(3, "three");
  EXPECT_EQ(value_of(m, 1), "one");  // 1 is now the most recent; 2 the least
  m.put(4, "four");
  EXPECT_EQ(m.size(), 3u);
  EXPECT_EQ(value_of(m, 2), "absent");
  EXPECT_EQ(value_of(m, 1), "one");
  EXPECT_EQ(value_of(m, 3), "three");
  EXPECT_EQ(value_of(m, 4), "four");
}

TEST(LruMap, PutReplacesAndRefreshes) {
  LruMap<int, int> m(2);
  m.put(1, 10);
  m.put(2, 20);
  EXPECT_EQ(m.put(1, 11), 11);  // replaced, and 1 now the most recent
  m.put(3, 30);
  EXPECT_EQ(value_of(m, 2), "absent");
  EXPECT_EQ(value_of(m, 1), "11");
  EXPECT_EQ(value_of(m, 3), "30");
  m.clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(value_of(m, 1), "absent");
}

// A program cycling through more shapes than the bound keeps the shapes it repeats.
TEST(LruMap, KeepsARepeatedEntryAmongManyOthers) {
  LruMap<int, int> m(256);
  m.put(-1, 7);
  for (int i = 0; i < 10000; ++i) {
    m.put(i, i);
    ASSERT_EQ(value_of(m, -1), "7") << "after " << i << " other entries";
  }
  EXPECT_EQ(m.size(), 256u);
  // -1 and the 255 newest: 9745..9999.
  EXPECT_EQ(value_of(m, 9745), "9745");
  EXPECT_EQ(value_of(m, 9744), "absent");
}
