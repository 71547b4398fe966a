// The line cache: hits only for the exact (code, line table, first line, instruction), and under concurrent use a hit
// is never a torn or foreign value.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "interpose/stacks/python/python_line_cache.h"

namespace gpumemtrace::interpose::python {
namespace {

TEST(LineCache, HitsOnlyTheExactKey) {
  auto cache = std::make_unique<LineCache>();
  int32_t line = 0;
  const LineKey key{0x1000, 0x2000, 10, 7};
  EXPECT_FALSE(cache->lookup(key, &line));
  cache->store(key, 42);
  ASSERT_TRUE(cache->lookup(key, &line));
  EXPECT_EQ(line, 42);
  EXPECT_FALSE(cache->lookup({0x1000, 0x2000, 10, 8}, &line));
  EXPECT_FALSE(cache->lookup({0x1000, 0x3000, 10, 7}, &line));  // a code object reborn at the same address
  EXPECT_FALSE(cache->lookup({0x1000, 0x2000, 11, 7}, &line));  // ... with its line table there too
  EXPECT_FALSE(cache->lookup({0x1010, 0x2000, 10, 7}, &line));
  cache->clear();
  EXPECT_FALSE(cache->lookup(key, &line));
}

TEST(LineCache, ConcurrentHitsAreConsistent) {
  auto cache = std::make_unique<LineCache>();
  // Many keys into few slots: writers overwrite each other all the time.
  auto line_for = [](uintptr_t code, int32_t lasti) { return static_cast<int32_t>(code * 31 + lasti * 7); };
  std::atomic<long> wrong{0}, hits{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200000; ++i) {
        uintptr_t code = 0x10000 + 16 * static_cast<uintptr_t>((i * 7 + t) % 20000);
        int32_t lasti = (i + t) % 50;
        int32_t line;
        if (cache->lookup({code, code + 8, 1, lasti}, &line)) {
          hits.fetch_add(1, std::memory_order_relaxed);
          if (line != line_for(code, lasti)) wrong.fetch_add(1, std::memory_order_relaxed);
        } else {
          cache->store({code, code + 8, 1, lasti}, line_for(code, lasti));
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GT(hits.load(), 0);
}

}  // namespace
}  // namespace gpumemtrace::interpose::python
