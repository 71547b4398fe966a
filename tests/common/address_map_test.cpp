// AddressMap against std::unordered_map under random inserts, lookups and erases (backward-shift deletion is
// where open addressing goes wrong).
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "common/address_map.h"

namespace gpumemtrace {
namespace {

TEST(AddressMap, AgreesWithUnorderedMapUnderChurn) {
  AddressMap<uint64_t> map;
  std::unordered_map<uint64_t, uint64_t> reference;
  std::mt19937_64 random(42);
  for (int i = 0; i < 200'000; ++i) {
    // Clustered, aligned keys like device addresses, and the two keys a table might mistake for "free".
    uint64_t pick = random() % 4098;
    uint64_t key = pick == 4097 ? UINT64_MAX : pick * 512;
    uint64_t op = random() % 6;
    if (op < 2) {
      uint64_t value = 0;
      bool erased = map.erase(key, &value);
      auto it = reference.find(key);
      ASSERT_EQ(erased, it != reference.end()) << "key " << key;
      if (erased) {
        EXPECT_EQ(value, it->second);
        reference.erase(it);
      }
    } else if (op == 2) {  // try_emplace leaves a value that is there, else inserts
      auto [value, added] = map.try_emplace(key, uint64_t(i));
      auto [it, reference_added] = reference.try_emplace(key, uint64_t(i));
      ASSERT_EQ(added, reference_added) << "key " << key;
      EXPECT_EQ(*value, it->second);
    } else {
      bool added = map.insert_or_assign(key, uint64_t(i));
      EXPECT_EQ(added, reference.insert_or_assign(key, uint64_t(i)).second);
    }
    ASSERT_EQ(map.size(), reference.size());
  }
  for (const auto& [key, value] : reference) {
    const uint64_t* found = map.find(key);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, value);
  }
  size_t visited = 0;
  map.for_each([&](uint64_t key, uint64_t value) {
    EXPECT_EQ(reference.at(key), value);
    ++visited;
  });
  EXPECT_EQ(visited, reference.size());
}

}  // namespace
}  // namespace gpumemtrace
