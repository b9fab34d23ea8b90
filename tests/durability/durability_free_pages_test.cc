// Persistent free space (page/file_header.h free pages, file/index_file.cc FileAllocator):
// pages freed by deletes and merges join a chain of free pages at the next checkpoint, the
// header keeps its head and count, and allocation reuses them in later sessions, through the
// API and through `pbtree insert` / `pbtree delete`. Corrupt free pages are CorruptErrors.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "page/file_header.h"
#include "page/page_file.h"
#include "tests/support/btree_tree_fixture.h"
#include "tests/support/cli_test_util.h"

namespace pbtree {
namespace {

using testing::TempPath;

IndexDefinition bigint_index() {
  IndexDefinition d;
  d.name = "K";
  d.type = TypeSpec::parse("bigint");
  d.format = default_key_format(d.type);
  return d;
}

std::vector<uint8_t> key_of(int64_t v) {
  static const IndexDefinition d = bigint_index();
  KeyBuffer kb;
  build_key(d.type, d.format, Value::exact(v), d.descending, kb);
  return std::vector<uint8_t>(kb.data, kb.data + kb.length);
}

// Keys per round: 5000 (the suite runs in Debug and under ASan), or PBTREE_FREE_SPACE_KEYS
// (the figure is 10^5).
int64_t env_keys() {
  const char* v = std::getenv("PBTREE_FREE_SPACE_KEYS");
  return v != nullptr && *v != '\0' ? std::strtoll(v, nullptr, 10) : 5000;
}

std::vector<int64_t> shuffled(int64_t n, uint64_t seed) {
  std::vector<int64_t> keys(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) keys[static_cast<size_t>(i)] = i * 7;
  std::mt19937_64 rng(seed);
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}

TEST(DurabilityFreeList, TenRoundsOfInsertAndDeleteKeepTheFileSize) {
  TempPath tmp;
  const int64_t n = env_keys();
  const uint64_t seed = 4242;
  std::printf("free space test: seed %llu, %lld keys per round, 4 KiB pages\n",
              static_cast<unsigned long long>(seed), static_cast<long long>(n));
  {
    auto f = IndexFile::open_or_create(tmp.path(), 4096);
    f->create_index(bigint_index());
  }
  std::vector<uint64_t> full_sizes, empty_frees;
  for (int round = 1; round <= 10; ++round) {
    {
      auto f = IndexFile::open(tmp.path(), {.writable = true});
      f->set_cache_frames(4096);
      BTree& t = btree_of(*f, "K");
      for (int64_t k : shuffled(n, seed + round)) t.insert(key_of(k), static_cast<uint64_t>(k));
      f->commit();
    }
    full_sizes.push_back(std::filesystem::file_size(tmp.path()));
    {
      auto f = IndexFile::open(tmp.path(), {.writable = true});
      f->set_cache_frames(4096);
      BTree& t = btree_of(*f, "K");
      for (int64_t k : shuffled(n, seed + 100 + round))
        t.remove(key_of(k), static_cast<uint64_t>(k));
      f->commit();
      EXPECT_EQ(t.verify().entries, 0u);
      // Everything but the header, the index root page and the (empty) root leaf is free.
      EXPECT_EQ(f->free_page_count(), f->page_count() - 3) << "round " << round;
      EXPECT_EQ(f->free_list().size(), f->page_count() - 3u);
      empty_frees.push_back(f->free_page_count());
    }
    std::printf(
        "free space test: round %d: %llu bytes after the inserts, %llu free pages after "
        "the deletes\n",
        round, static_cast<unsigned long long>(full_sizes.back()),
        static_cast<unsigned long long>(empty_frees.back()));
  }
  EXPECT_LE(full_sizes.back() * 10, full_sizes.front() * 11);  // within 10% of round 1
  if (n == 5000) {
    EXPECT_EQ(full_sizes.front(), 24u * 4096);  // 24 pages: 2 fixed, 22 b-tree
    EXPECT_EQ(full_sizes.back(), 25u * 4096);   // one more page (another insert order)
    EXPECT_EQ(empty_frees.front(), 21u);
    EXPECT_EQ(empty_frees.back(), 22u);
  }
}

// A file with index K (bigint, 4 KiB pages) of keys 0..1999 bulk-built, then keys 0..1499
// deleted in a second session: the freed pages are on the free list.
void make_file_with_free_pages(const std::string& path) {
  {
    auto f = IndexFile::open_or_create(path, 4096);
    EntryBatch batch;
    for (int64_t k = 0; k < 2000; ++k) batch.add(key_of(k), static_cast<uint64_t>(k), k);
    f->bulk_load(bigint_index(), batch);
  }
  auto f = IndexFile::open(path, {.writable = true});
  f->set_cache_frames(64);
  for (int64_t k = 0; k < 1500; ++k) btree_of(*f, "K").remove(key_of(k), static_cast<uint64_t>(k));
  f->commit();
}

TEST(DurabilityFreeList, FreedPagesAreReusedInTheNextSession) {
  TempPath tmp;
  make_file_with_free_pages(tmp.path());
  uint32_t pages = 0, frees = 0;
  {
    auto f = IndexFile::open(tmp.path());
    pages = f->page_count();
    frees = f->free_page_count();
    EXPECT_EQ(f->free_list().size(), frees);
    std::vector<uint8_t> page(4096);
    read_file_page(*f, 0, page.data());
    EXPECT_EQ(get_u32(page.data() + 40), f->free_list().front());  // head
    EXPECT_EQ(get_u32(page.data() + 44), frees);                   // count
  }
  EXPECT_EQ(pages, 9u);  // 2 fixed, 6 leaves + root bulk-built, then 4 leaves freed
  EXPECT_EQ(frees, 4u);
  {
    auto f = IndexFile::open(tmp.path(), {.writable = true});
    f->set_cache_frames(64);
    for (int64_t k = 0; k < 1500; ++k)
      btree_of(*f, "K").insert(key_of(k), static_cast<uint64_t>(k));
    f->commit();
    EXPECT_EQ(btree_of(*f, "K").verify().entries, 2000u);
    // The keys come back in ascending order into the first leaf: middle splits leave
    // half-full leaves, 8 new leaves in all; 4 are the free pages (without them: 17).
    EXPECT_EQ(f->page_count(), 13u);
    EXPECT_EQ(f->free_page_count(), 0u);
    EXPECT_TRUE(f->free_list().empty());
  }
}

TEST(DurabilityFreeList, HeaderFieldsAndChecks) {
  FileHeader h;
  h.page_size = 4096;
  h.page_count = 20;
  h.free_list_head = 7;
  h.free_page_count = 3;
  std::vector<uint8_t> page(4096);
  encode_header_page(h, page.data());
  EXPECT_EQ(std::vector<uint8_t>(page.begin() + 40, page.begin() + 48),
            (std::vector<uint8_t>{7, 0, 0, 0, 3, 0, 0, 0}));
  FileHeader d = decode_header_prefix(page.data(), kHeaderPrefixSize, "x");
  EXPECT_EQ(d.free_list_head, 7u);
  EXPECT_EQ(d.free_page_count, 3u);
  auto message = [&](uint32_t head, uint32_t count) {
    put_u32(page.data() + 40, head);
    put_u32(page.data() + 44, count);
    try {
      decode_header_prefix(page.data(), kHeaderPrefixSize, "x");
    } catch (const CorruptError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(20, 3), "x: free-list head 20 outside [2, 20)");
  EXPECT_EQ(message(1, 3), "x: free-list head 1 outside [2, 20)");
  EXPECT_EQ(message(0, 3), "x: free-list head 0 with 3 free pages (page count 20)");
  EXPECT_EQ(message(5, 0), "x: free-list head 5 with 0 free pages (page count 20)");
  EXPECT_EQ(message(5, 19), "x: free-list head 5 with 19 free pages (page count 20)");
  EXPECT_EQ(message(5, 18), "no error");
}

TEST(DurabilityFreeList, FreePageBytesAndChecks) {
  std::vector<uint8_t> page(4096, 0xAA);
  encode_free_page(9, page.data(), 4096);
  EXPECT_EQ(std::vector<uint8_t>(page.begin(), page.begin() + 24),
            (std::vector<uint8_t>{9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  //
                                  9, 0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(std::count(page.begin() + 20, page.end(), 0), 4096 - 20);
  EXPECT_EQ(decode_free_page(page.data(), 4, 4096, 10, "x"), 9u);
  auto message = [&](std::vector<uint8_t> p, uint32_t page_no) {
    try {
      decode_free_page(p.data(), page_no, 4096, 10, "x");
    } catch (const CorruptError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(page, 9), "x: page 9 (free): next free page 9 outside [2, 10)");
  std::vector<uint8_t> p = page;
  put_u32(p.data() + 16, 10);
  EXPECT_EQ(message(p, 4), "x: page 4 (free): next free page 10 outside [2, 10)");
  p = page;
  p[0] = static_cast<uint8_t>(PageType::Btree);
  EXPECT_EQ(message(p, 4), "x: page 4: expected a free page, found a b-tree page");
  p = page;
  p[100] = 1;
  EXPECT_EQ(message(p, 4), "x: page 4 (free): nonzero byte at offset 100");
}

// Rewrites page `page_no` of the closed file `path` (checksum stamped) after `change`.
template <typename Change>
void rewrite_page(const std::string& path, uint32_t page_no, Change change) {
  PageFile file = PageFile::open(path, true);
  file.set_page_size(4096);
  std::vector<uint8_t> page(4096);
  file.read(page_no, page.data());
  change(page.data());
  file.write(page_no, page.data());
  file.sync();
}

// The error of inserting keys 0..1499 again (they need the free pages).
std::string refill_error(const std::string& path) {
  try {
    auto f = IndexFile::open(path, {.writable = true});
    f->set_cache_frames(64);
    for (int64_t k = 0; k < 1500; ++k)
      btree_of(*f, "K").insert(key_of(k), static_cast<uint64_t>(k));
    f->commit();
  } catch (const CorruptError& e) {
    return e.what();
  }
  return "no error";
}

TEST(DurabilityFreeList, CorruptFreePagesAreCorruptErrors) {
  TempPath tmp;
  make_file_with_free_pages(tmp.path());
  const std::string saved = tmp.path() + ".saved";
  std::filesystem::copy_file(tmp.path(), saved);
  uint32_t head = 0, second = 0;
  {
    auto f = IndexFile::open(tmp.path());
    head = f->free_list()[0];
    second = f->free_list()[1];
  }
  auto restore = [&] {
    std::filesystem::copy_file(saved, tmp.path(),
                               std::filesystem::copy_options::overwrite_existing);
  };
  const std::string p = tmp.path();
  // A flipped byte: the checksum.
  {
    int fd = ::open(p.c_str(), O_RDWR);
    uint8_t b = 0x5A;
    ASSERT_EQ(::pwrite(fd, &b, 1, static_cast<off_t>(head) * 4096 + 300), 1);
    ::close(fd);
  }
  EXPECT_EQ(refill_error(p), fmt::format("{}: page {} (free): checksum mismatch", p, head));
  // A b-tree page where the list leads.
  restore();
  rewrite_page(p, head, [](uint8_t* d) { d[0] = static_cast<uint8_t>(PageType::Btree); });
  EXPECT_EQ(refill_error(p),
            fmt::format("{}: page {}: expected a free page, found a b-tree page", p, head));
  // A next pointer outside the file.
  restore();
  rewrite_page(p, head, [](uint8_t* d) { put_u32(d + 16, 999); });
  EXPECT_EQ(refill_error(p),
            fmt::format("{}: page {} (free): next free page 999 outside [2, 9)", p, head));
  // A loop: the second page points back at the head; the count bounds the walk.
  restore();
  rewrite_page(p, second, [&](uint8_t* d) { put_u32(d + 16, head); });
  {
    auto f = IndexFile::open(p);
    try {
      f->free_list();
      FAIL() << "no exception";
    } catch (const CorruptError& e) {
      EXPECT_EQ(std::string(e.what()),
                fmt::format("{}: the free list goes on past the header's 4 free pages (page {})", p,
                            head));
    }
  }
  // Allocation takes the head, the second page, then the head again, which is a b-tree
  // page by then.
  EXPECT_EQ(refill_error(p),
            fmt::format("{}: page {}: expected a free page, found a b-tree page", p, head));
  std::filesystem::remove(saved);
}

TEST(DurabilityFreeList, CliDeleteThenInsertReusesFreedPages) {
  using tools::testing::run;
  tools::testing::ScratchDir dir("free-pages-cli");
  const std::string db = dir.file("t.pbt");
  // 900-byte values differing in their first bytes (so prefix compression saves little): 3
  // per 4 KiB leaf, so a few deletes empty whole leaves.
  auto value = [](int i) { return fmt::format("{:03d}", i) + std::string(897, 'A'); };
  std::string csv;
  for (int i = 0; i < 30; ++i) csv += value(i) + "\n";
  const std::string in = dir.write("v.csv", csv);
  ASSERT_EQ(run({"load", db, "--index", "V", "--type", "varchar(1000)", "--page-size", "4096",
                 "--input", in})
                .code,
            0);
  auto counts = [&] {
    auto f = IndexFile::open(db);
    return std::pair<uint32_t, uint32_t>(f->page_count(), f->free_page_count());
  };
  const auto before = counts();
  for (int i = 0; i < 12; ++i) {
    auto r = run({"delete", db, "--index", "V", value(i), std::to_string(i)});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const auto deleted = counts();
  EXPECT_EQ(before, (std::pair<uint32_t, uint32_t>(17, 0)));
  EXPECT_EQ(deleted, (std::pair<uint32_t, uint32_t>(17, 6)));
  auto v = run({"verify", db});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
  for (int i = 0; i < 12; ++i) {
    auto r = run({"insert", db, "--index", "V", value(i), std::to_string(i)});
    ASSERT_EQ(r.code, 0) << r.err;
  }
  const auto refilled = counts();
  std::printf(
      "free pages via the CLI: %u pages, %u free after 12 deletes, %u pages and %u free "
      "after 12 inserts\n",
      deleted.first, deleted.second, refilled.first, refilled.second);
  // The 12 entries come back into the first leaves (middle splits): 9 new pages needed,
  // 6 of them the free pages (without them the file would have 26 pages).
  EXPECT_EQ(refilled, (std::pair<uint32_t, uint32_t>(20, 0)));
  v = run({"verify", db});
  EXPECT_EQ(v.code, 0) << v.out << v.err;
}

}  // namespace
}  // namespace pbtree
