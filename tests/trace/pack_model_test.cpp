// The model the packer and the unpacker predict with (trace/packed/pack_model.h): what it answers is the packed
// format, so each rule is pinned here, at the bounds where its tables change shape.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "trace/packed/pack_model.h"

namespace gpumemtrace::packed {
namespace {

constexpr size_t kNone = PackModel::kNone;

// Allocates and frees `count` blocks of `size` at base, base + 4096, ...: the last freed is at place 0.
std::vector<uint64_t> free_blocks(PackModel& model, uint64_t base, uint64_t size, size_t count) {
  std::vector<uint64_t> addresses;
  for (size_t i = 0; i < count; ++i) {
    addresses.push_back(base + i * 4096);
    model.on_alloc(1, addresses.back(), size, kNone);
  }
  for (uint64_t address : addresses) model.on_free(address);
  return addresses;
}

TEST(PackModel, SymbolsAreCodedByFirstAppearance) {
  SymbolTable table;
  EXPECT_EQ(table.code_or_add(700), 0u);
  EXPECT_EQ(table.code_or_add(500), 0u);
  EXPECT_EQ(table.code_or_add(700), 1u);
  EXPECT_EQ(table.code_or_add(500), 2u);
  table.add(500);
  table.add(900);
  EXPECT_EQ(table.value_of(3), std::optional<uint64_t>(900));
  EXPECT_EQ(table.value_of(4), std::nullopt);
  EXPECT_EQ(table.value_of(0), std::nullopt);
}

TEST(PackModel, AClassKeepsItsLastSixtyFourFreedBlocks) {
  PackModel model;
  std::vector<uint64_t> freed = free_blocks(model, 1 << 20, 1000, 100);  // class 2: 513 to 1024 bytes
  for (size_t place = 0; place < PackModel::kFreedPerClass; ++place) {
    EXPECT_EQ(model.freed_place(600, freed[99 - place]), place);
    EXPECT_EQ(model.freed_at(1024, place), std::optional<uint64_t>(freed[99 - place]));
  }
  EXPECT_EQ(model.freed_place(1000, freed[35]), kNone);  // the 65th last, forgotten
  EXPECT_EQ(model.freed_at(1000, 64), std::nullopt);
  EXPECT_EQ(model.freed_place(1025, freed[99]), kNone);  // another class

  // Taking a block closes its place; the block dropped before does not come back at the end.
  model.on_alloc(1, freed[89], 1000, model.freed_place(1000, freed[89]));
  EXPECT_EQ(model.freed_place(1000, freed[88]), 10u);
  EXPECT_EQ(model.freed_at(1000, 62), std::optional<uint64_t>(freed[36]));
  EXPECT_EQ(model.freed_at(1000, 63), std::nullopt);
  EXPECT_EQ(model.freed_place(1000, freed[35]), kNone);

  // Many more frees: always the last 64, in order, whatever has been dropped on the way.
  std::vector<uint64_t> later = free_blocks(model, 1 << 30, 700, 301);
  for (size_t place = 0; place < PackModel::kFreedPerClass; ++place)
    EXPECT_EQ(model.freed_at(1000, place), std::optional<uint64_t>(later[300 - place]));
  EXPECT_EQ(model.freed_at(1000, 64), std::nullopt);
  EXPECT_EQ(model.freed_place(1000, later[236]), kNone);
}

TEST(PackModel, AFreeNamesItsPlaceAndTheLastLiveTakesItsSlot) {
  PackModel model;
  for (uint64_t address : {0xA000, 0xB000, 0xC000, 0xD000}) model.on_alloc(3, address, 256, kNone);
  EXPECT_EQ(model.live_at(0), std::optional<uint64_t>(0xD000));
  EXPECT_EQ(model.on_free(0xB000), 2u);
  // D moved into B's slot: from the top, C, D, A.
  EXPECT_EQ(model.live_at(0), std::optional<uint64_t>(0xC000));
  EXPECT_EQ(model.live_at(1), std::optional<uint64_t>(0xD000));
  EXPECT_EQ(model.live_at(2), std::optional<uint64_t>(0xA000));
  EXPECT_EQ(model.live_at(3), std::nullopt);
  EXPECT_EQ(model.on_free(0xB000), kNone);  // not live any more
  EXPECT_EQ(model.last_address(), 0xB000u);
  EXPECT_EQ(model.on_free(0xC000), 0u);
  EXPECT_EQ(model.freed_place(256, 0xC000), 0u);
  EXPECT_EQ(model.freed_place(256, 0xB000), 1u);
}

TEST(PackModel, AnAddressAllocatedAgainWithoutAFreeIsLiveOnce) {
  PackModel model;
  model.on_alloc(1, 0xA000, 512, kNone);
  model.on_alloc(1, 0xB000, 512, kNone);
  model.on_alloc(1, 0xA000, 1024, kNone);
  EXPECT_EQ(model.live_at(0), std::optional<uint64_t>(0xA000));
  EXPECT_EQ(model.live_at(1), std::optional<uint64_t>(0xB000));
  EXPECT_EQ(model.live_at(2), std::nullopt);
  EXPECT_EQ(model.on_free(0xA000), 0u);
  EXPECT_EQ(model.freed_place(1024, 0xA000), 0u);  // freed in the class of its later size
  EXPECT_EQ(model.freed_place(512, 0xA000), kNone);
}

TEST(PackModel, LargeStackIdsAndSizeClassesAreKeptToo) {
  PackModel model;
  const uint32_t stacks[] = {0, 70, 65535, 65536, 4'000'000'000u};
  for (uint32_t stack : stacks) EXPECT_EQ(model.last_size(stack), std::nullopt);
  for (uint32_t stack : stacks) model.on_alloc(stack, 0x100000 + stack, 1000 + stack, kNone);
  for (uint32_t stack : stacks) EXPECT_EQ(model.last_size(stack), std::optional<uint64_t>(1000 + stack));
  model.on_alloc(65536, 0x7000, 3, kNone);
  EXPECT_EQ(model.last_size(65536), std::optional<uint64_t>(3));

  const uint64_t sizes[] = {512ull * 65535, 512ull * 65536, 512ull * 65536 + 1, uint64_t{1} << 40};
  for (uint64_t size : sizes) free_blocks(model, size * 2, size, 2);
  for (uint64_t size : sizes) {
    EXPECT_EQ(model.freed_place(size, size * 2 + 4096), 0u) << size;
    EXPECT_EQ(model.freed_place(size, size * 2), 1u) << size;
    EXPECT_EQ(model.freed_at(size, 2), std::nullopt) << size;
  }
  EXPECT_EQ(model.fresh_address(), (uint64_t{1} << 41) + 4096 + (uint64_t{1} << 40));
}

}  // namespace
}  // namespace gpumemtrace::packed
