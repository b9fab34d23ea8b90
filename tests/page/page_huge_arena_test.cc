// HugeArena (page/huge_arena.h): sizes rounded to the base or huge page, 2 MiB alignment from
// 2 MiB up, zero-filled memory, and ownership moving with the object.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "page/huge_arena.h"

namespace pbtree {
namespace {

TEST(PageHugeArena, EmptyRequestMapsNothing) {
  HugeArena a(0);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
}

TEST(PageHugeArena, SmallRequestRoundsToTheBasePage) {
  HugeArena a(5000);
  EXPECT_EQ(a.size(), 8192u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % HugeArena::kSmallPage, 0u);
}

TEST(PageHugeArena, LargeRequestRoundsToTheHugePageAndIsAligned) {
  HugeArena a(HugeArena::kHugePage + 1);
  EXPECT_EQ(a.size(), 2 * HugeArena::kHugePage);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % HugeArena::kHugePage, 0u);
}

TEST(PageHugeArena, MemoryIsZeroFilledAndWritable) {
  HugeArena a(3 * HugeArena::kHugePage);
  uint64_t sum = 0;
  for (size_t i = 0; i < a.size(); i += 4096) sum += a.data()[i];
  EXPECT_EQ(sum, 0u);
  a.data()[a.size() - 1] = 0xAB;
  EXPECT_EQ(a.data()[a.size() - 1], 0xAB);
}

TEST(PageHugeArena, MoveTransfersTheMapping) {
  HugeArena a(HugeArena::kHugePage);
  uint8_t* p = a.data();
  p[0] = 7;
  HugeArena b(std::move(a));
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.data()[0], 7);
  HugeArena c;
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.size(), HugeArena::kHugePage);
  EXPECT_EQ(b.data(), nullptr);
}

}  // namespace
}  // namespace pbtree
