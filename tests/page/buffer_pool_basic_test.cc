// BufferPool: pins, CLOCK eviction with write-back, flush, exhaustion errors, create() without
// reads, versions, and a B-tree far larger than the pool.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

// Keys of the large-tree test: 10^5, or PBTREE_POOL_KEYS.
uint64_t env_keys() {
  const char* v = std::getenv("PBTREE_POOL_KEYS");
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : 100000;
}

void fill_page(uint8_t* page, uint8_t byte, uint32_t page_size) {
  std::memset(page + kPageHeaderSize, byte, page_size - kPageHeaderSize);
  page[0] = static_cast<uint8_t>(PageType::Free);
}

TEST(PageBufferPoolBasic, DirtyPagesAreWrittenBackOnEviction) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  BufferPool pool(file, 8, &check_btree_frame);
  for (uint32_t p = 0; p < 20; ++p) {
    PageRef ref = pool.create(p);
    std::unique_lock l(ref.latch());
    fill_page(ref.data(), static_cast<uint8_t>(p + 1), 4096);
    ref.mark_dirty();
  }
  EXPECT_EQ(pool.stats().evictions, 12u);
  EXPECT_EQ(pool.stats().writes, 12u);
  // Evicted pages come back from the file intact.
  for (uint32_t p = 0; p < 20; ++p) {
    PageRef ref = pool.pin(p, static_cast<uint8_t>(PageType::Free));
    EXPECT_EQ(ref.data()[100], p + 1);
  }
  EXPECT_EQ(pool.pinned_frames(), 0u);
}

// A b-tree page read from the file whose btr_length passes the page end is refused on pin,
// before any node is decoded in place.
TEST(PageBufferPoolBasic, BtreePageWithLengthBeyondThePageIsCorrupt) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  std::vector<uint8_t> page(4096, 0);
  page[0] = static_cast<uint8_t>(PageType::Btree);
  put_u16(page.data() + 30, 4097);  // btr_length
  file.write(2, page.data());
  BufferPool pool(file, 8, &check_btree_frame);
  try {
    pool.pin(2);
    FAIL() << "no error";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "page 2 (b-tree): btr_length 4097 outside [40, 4096] (jump size 0)");
  }
  EXPECT_EQ(pool.pinned_frames(), 0u);
}

TEST(PageBufferPoolBasic, FlushWritesEveryDirtyPageOnce) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  BufferPool pool(file, 16, &check_btree_frame);
  for (uint32_t p = 0; p < 5; ++p) {
    PageRef ref = pool.create(p);
    std::unique_lock l(ref.latch());
    fill_page(ref.data(), 0x5A, 4096);
    ref.mark_dirty();
  }
  pool.flush();
  EXPECT_EQ(pool.stats().writes, 5u);
  pool.flush();
  EXPECT_EQ(pool.stats().writes, 5u);
  EXPECT_EQ(file.file_size(), 5u * 4096);
  std::vector<uint8_t> page(4096);
  file.read(3, page.data(), static_cast<uint8_t>(PageType::Free));
  EXPECT_EQ(page[4000], 0x5A);
}

TEST(PageBufferPoolBasic, AllFramesPinnedIsAClearError) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  BufferPool pool(file, 8, &check_btree_frame);
  std::vector<PageRef> held;
  for (uint32_t p = 0; p < 8; ++p) held.push_back(pool.create(p));
  try {
    pool.create(8);
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "buffer pool exhausted: all 8 frames pinned");
  }
  held.pop_back();
  EXPECT_EQ(pool.create(8).page_no(), 8u);
}

TEST(PageBufferPoolBasic, TooFewFramesIsRefused) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  EXPECT_THROW(BufferPool(file, 7), UsageError);
}

TEST(PageBufferPoolBasic, ReadingAPageBeyondTheFileFails) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  BufferPool pool(file, 8, &check_btree_frame);
  EXPECT_THROW(pool.pin(3), CorruptError);
  EXPECT_EQ(pool.pinned_frames(), 0u);
}

TEST(PageBufferPoolBasic, HitsDoNotReadAgain) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  BufferPool pool(file, 8, &check_btree_frame);
  {
    PageRef ref = pool.create(0);
    std::unique_lock l(ref.latch());
    fill_page(ref.data(), 1, 4096);
    ref.mark_dirty();
  }
  pool.flush();
  ASSERT_TRUE(pool.discard(0));
  { PageRef a = pool.pin(0); }
  { PageRef b = pool.pin(0); }
  EXPECT_EQ(pool.stats().misses, 1u);
  EXPECT_EQ(pool.stats().hits, 1u);
}

TEST(PageBufferPoolBasic, MarkDirtyBumpsVersion) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), 4096);
  BufferPool pool(file, 8, &check_btree_frame);
  PageRef ref = pool.create(0);
  uint64_t v = ref.version();
  ref.mark_dirty();
  EXPECT_EQ(ref.version(), v + 1);
}

TEST(PageBufferPoolBasic, DefaultBudgetIs64MiB) {
  EXPECT_EQ(BufferPool::frames_for(BufferPool::kDefaultBytes, 8192), 8192u);
  EXPECT_EQ(BufferPool::frames_for(1000, 8192), BufferPool::kMinFrames);
}

TEST(PageBufferPoolBasic, MemoryBudgetCountsAQuarterPagePerFrameForTheDirectory) {
  // 8 KiB pages cost 10 KiB each: 100 frames in 1,000 KiB; never fewer than kMinFrames.
  EXPECT_EQ(BufferPool::frames_within(1000 * 1024, 8192), 100u);
  EXPECT_EQ(BufferPool::frames_within(size_t{512} << 20, 4096), 104857u);
  EXPECT_EQ(BufferPool::frames_within(1000, 8192), BufferPool::kMinFrames);
}

TEST(PageBufferPoolBasic, LargeTreeInA64PagePool) {
  // 10^5 keys need ~170 pages of 4 KiB; the pool holds 64. Lookups must read pages one by
  // one: 10^5 random lookups. PBTREE_POOL_KEYS=10000000 makes it the 10^7-key run.
  testing::TreeEnv env(false, false, 4096, 64);
  const uint64_t n = env_keys();
  for (uint64_t i = 0; i < n; ++i) env.tree->insert(testing::be_key(i), i);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    uint64_t v = rng() % n;
    ASSERT_EQ(env.tree->find(testing::be_key(v)), std::vector<uint64_t>{v});
  }
  EXPECT_GT(env.pool.stats().misses, 500u);
  EXPECT_EQ(env.pool.pinned_frames(), 0u);
}

}  // namespace
}  // namespace pbtree
