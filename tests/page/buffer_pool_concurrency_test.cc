// BufferPool under concurrency: lock-free pins of cached pages racing with CLOCK eviction and
// write-back in an 8-frame pool over 40 pages, two reader threads and one writer thread (run
// under ThreadSanitizer by .ci/run). PBTREE_POOL_PINS sets the pins per thread (default 10000).
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "tests/support/btree_tree_fixture.h"

namespace pbtree {
namespace {

using testing::TempPath;

constexpr uint32_t kPages = 40;
constexpr uint32_t kPageSize = 4096;

uint64_t env_pins() {
  const char* v = std::getenv("PBTREE_POOL_PINS");
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : 10000;
}

// Page layout of this test: a free page whose body holds its page number (u32 at the body's
// start) and one generation byte repeated over the rest.
void write_body(uint8_t* page, uint32_t page_no, uint8_t gen) {
  page[0] = static_cast<uint8_t>(PageType::Free);
  put_u32(page + kPageHeaderSize, page_no);
  std::memset(page + kPageHeaderSize + 4, gen, kPageSize - kPageHeaderSize - 4);
}

// True if the page holds page_no and one generation byte throughout; *gen gets that byte.
bool body_ok(const uint8_t* page, uint32_t page_no, uint8_t* gen) {
  if (get_u32(page + kPageHeaderSize) != page_no) return false;
  const uint8_t g = page[kPageHeaderSize + 4];
  for (uint32_t i = kPageHeaderSize + 4; i < kPageSize; i += 97) {
    if (page[i] != g) return false;
  }
  if (page[kPageSize - 1] != g) return false;
  *gen = g;
  return true;
}

TEST(PageBufferPoolConcurrency, PinsRaceEvictionAndWriteBackWithoutTornPages) {
  TempPath tmp;
  PageFile file = PageFile::create(tmp.path(), kPageSize);
  {
    std::vector<uint8_t> page(kPageSize, 0);
    for (uint32_t p = 0; p < kPages; ++p) {
      write_body(page.data(), p, 0);
      file.write(p, page.data());
    }
  }
  BufferPool pool(file, 8);
  const uint64_t pins = env_pins();
  const auto type = static_cast<uint8_t>(PageType::Free);
  std::vector<uint8_t> last_gen(kPages, 0);  // the writer's, read after join
  std::atomic<uint64_t> bad{0};

  auto reader = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (uint64_t i = 0; i < pins; ++i) {
      const auto p = static_cast<uint32_t>(rng() % kPages);
      PageRef ref = pool.pin(p, type);
      std::shared_lock latch(ref.latch());
      uint8_t g = 0;
      if (ref.page_no() != p || !body_ok(ref.data(), p, &g)) bad.fetch_add(1);
    }
  };
  auto writer = [&] {
    std::mt19937_64 rng(3);
    for (uint64_t i = 0; i < pins; ++i) {
      const auto p = static_cast<uint32_t>(rng() % kPages);
      PageRef ref = pool.pin(p, type);
      std::unique_lock latch(ref.latch());
      uint8_t g = 0;
      if (!body_ok(ref.data(), p, &g) || g != last_gen[p]) bad.fetch_add(1);
      last_gen[p] = static_cast<uint8_t>(g + 1);
      write_body(ref.data(), p, last_gen[p]);
      ref.mark_dirty();
    }
  };
  std::thread r1(reader, 1), r2(reader, 2), w(writer);
  r1.join();
  r2.join();
  w.join();

  EXPECT_EQ(bad.load(), 0u);
  EXPECT_EQ(pool.pinned_frames(), 0u);
  EXPECT_GT(pool.stats().evictions, 0u);
  for (uint32_t p = 0; p < kPages; ++p) {
    PageRef ref = pool.pin(p, type);
    uint8_t g = 0;
    ASSERT_TRUE(body_ok(ref.data(), p, &g)) << "page " << p;
    EXPECT_EQ(g, last_gen[p]) << "page " << p;
  }
}

}  // namespace
}  // namespace pbtree
