// Damaged files: a 10^4-key bigint index (bulk_load, 4096-byte pages) is damaged one byte at
// a time — every byte of every page (header page, index root page, every B-tree page), xor
// 0xFF and +1 — and then opened and analyzed. Each damage must give a CorruptError whose
// exact message names the file and the page (or the header field), never a crash and never a
// silently different answer. Also: files cut at and between page boundaries, wrong magic,
// unknown format version, unknown page size, and valid-checksum pages of the wrong type.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "page/file_header.h"
#include "page/page_file.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;
constexpr uint32_t kPageSize = 4096;
constexpr int kKeys = 10000;
const char* const kIndex = "I_BIG";

Bytes file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

bool same_stats(const IndexStats& a, const IndexStats& b) {
  return a.root_page == b.root_page && a.depth == b.depth && a.leaf_buckets == b.leaf_buckets &&
         a.nodes == b.nodes && a.avg_node_length == b.avg_node_length &&
         a.total_dup == b.total_dup && a.max_dup == b.max_dup &&
         a.avg_key_length == b.avg_key_length && a.compression_ratio == b.compression_ratio &&
         a.avg_prefix_length == b.avg_prefix_length && a.avg_data_length == b.avg_data_length &&
         a.clustering_factor == b.clustering_factor && a.clustering_ratio == b.clustering_ratio &&
         std::equal(std::begin(a.fill_distribution), std::end(a.fill_distribution),
                    std::begin(b.fill_distribution)) &&
         a.index_pages == b.index_pages && a.bytes_per_entry == b.bytes_per_entry &&
         a.avg_leaf_fill == b.avg_leaf_fill;
}

// Opens `path` and analyzes the index; returns "" and sets `stats`, or the error message.
// Anything but a CorruptError is returned as "unexpected exception: ...".
std::string open_and_analyze(const std::string& path, IndexStats* stats) {
  try {
    auto f = IndexFile::open(path);
    auto indexes = f->indexes();
    if (indexes.size() != 1 || indexes[0].def.name != kIndex) return "unexpected index list";
    *stats = f->analyze(kIndex);
    return "";
  } catch (const CorruptError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
}

// One 10^4-key file for the whole suite, plus its pristine bytes and statistics.
class FileCorruptFile : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char tmpl[] = "/tmp/pbtree-corrupt-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp");
    dir_ = new std::string(tmpl);
    pristine_path_ = new std::string(*dir_ + "/pristine.pbt");
    {
      auto f = IndexFile::open_or_create(*pristine_path_, kPageSize);
      IndexDefinition def;
      def.name = kIndex;
      def.type.type = ColumnType::Bigint;
      def.format = KeyFormat::RescaledDouble;
      EntryBatch batch;
      for (int i = 0; i < kKeys; ++i) {
        KeyBuffer key;
        build_key(def.type, def.format, Value::exact(__int128{i} * 1000003 - 5000000000LL), false,
                  key);
        batch.add(key.bytes(), static_cast<uint64_t>(i) * 3 + 1, static_cast<uint64_t>(i));
      }
      f->bulk_load(def, batch);
    }
    pristine_ = new Bytes(file_bytes(*pristine_path_));
    stats_ = new IndexStats;
    std::string error = open_and_analyze(*pristine_path_, stats_);
    if (!error.empty()) throw std::runtime_error("pristine file: " + error);
  }
  static void TearDownTestSuite() {
    std::remove(pristine_path_->c_str());
    ::rmdir(dir_->c_str());
    delete dir_;
    delete pristine_path_;
    delete pristine_;
    delete stats_;
  }

  void SetUp() override {
    path_ = *dir_ + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".pbt";
    write_bytes(path_, *pristine_);
  }
  void TearDown() override { std::remove(path_.c_str()); }

  uint32_t pages() const { return static_cast<uint32_t>(pristine_->size() / kPageSize); }

  // Rewrites page `page_no` of the test file after `edit`, with a valid checksum.
  void rewrite_page(uint32_t page_no, const std::function<void(uint8_t*)>& edit) {
    PageFile file = PageFile::open(path_, true);
    file.set_page_size(kPageSize);
    Bytes page(kPageSize);
    file.read_raw(uint64_t{page_no} * kPageSize, page.data(), kPageSize);
    edit(page.data());
    file.write(page_no, page.data());
  }

  // The exact message a damaged byte must give: header fields read before the checksum is
  // checked have their own messages; everything else is a checksum mismatch of that page.
  std::string expected_damage_message(uint32_t page_no, uint32_t pos, uint8_t damaged) const {
    const uint8_t* page = pristine_->data() + uint64_t{page_no} * kPageSize;
    Bytes header(page, page + kHeaderPrefixSize);
    if (page_no == kHeaderPage && pos < kHeaderPrefixSize) header[pos] = damaged;
    if (page_no == kHeaderPage && pos >= 16 && pos < 24) {
      return path_ + ": not a pbtree file (wrong magic)";
    }
    if (page_no == kHeaderPage && pos == 0) {
      return fmt::format("{}: page 0: expected a header page, found a {} page", path_,
                         page_type_name(damaged));
    }
    if (page_no == kHeaderPage && pos >= 24 && pos < 28) {
      return fmt::format("{}: unknown format version {} (this build reads 1)", path_,
                         get_u32(header.data() + 24));
    }
    if (page_no == kHeaderPage && pos >= 28 && pos < 32) {
      return fmt::format("{}: bad page size {} (expected 4096, 8192, 16384 or 32768)", path_,
                         get_u32(header.data() + 28));
    }
    if (page_no == kHeaderPage && pos >= 36 && pos < 40) {
      return fmt::format("{}: index root page {} (expected 1)", path_, get_u32(header.data() + 36));
    }
    if (page_no == kHeaderPage && pos >= 40 && pos < 48) {
      const uint32_t head = get_u32(header.data() + 40), count = get_u32(header.data() + 44);
      const uint32_t page_count = get_u32(header.data() + 32);
      if (head != 0 && (head < 2 || head >= page_count)) {
        return fmt::format("{}: free-list head {} outside [2, {})", path_, head, page_count);
      }
      if ((head == 0) != (count == 0) || count > page_count - 2) {
        return fmt::format("{}: free-list head {} with {} free pages (page count {})", path_, head,
                           count, page_count);
      }
    }
    uint8_t type = pos == 0 ? damaged : page[0];
    return fmt::format("{}: page {} ({}): checksum mismatch", path_, page_no, page_type_name(type));
  }

  // Damages each byte of page `page_no` for which `full(pos)` or `!full(pos)` holds in turn
  // (with `damage`), restoring it afterwards. Positions where `full(pos)` is true are checked by
  // IndexFile::open + indexes() + analyze(); the others by IndexFile::read_page on a file
  // opened once (the same PageFile::read checksum path that analyze takes, without re-reading
  // the rest of the tree: that keeps the 10^5 positions fast under ASan). Returns the number
  // of positions whose outcome was wrong (first few reported).
  int damage_every_byte(uint32_t page_no, uint8_t (*damage)(uint8_t),
                        const std::function<bool(uint32_t)>& full) {
    int fd = ::open(path_.c_str(), O_RDWR);
    if (fd < 0) throw std::runtime_error("open " + path_);
    auto opened = IndexFile::open(path_);
    Bytes page(kPageSize);
    int wrong = 0;
    for (uint32_t pos = 0; pos < kPageSize; ++pos) {
      off_t at = static_cast<off_t>(uint64_t{page_no} * kPageSize + pos);
      uint8_t original = (*pristine_)[static_cast<size_t>(at)];
      uint8_t damaged = damage(original);
      if (::pwrite(fd, &damaged, 1, at) != 1) throw std::runtime_error("pwrite");
      IndexStats stats;
      std::string error;
      if (full(pos)) {
        error = open_and_analyze(path_, &stats);
      } else {
        try {
          read_file_page(*opened, page_no, page.data());
          error = "page read without error";
        } catch (const CorruptError& e) {
          error = e.what();
        } catch (const std::exception& e) {
          error = std::string("unexpected exception: ") + e.what();
        }
      }
      std::string expected = expected_damage_message(page_no, pos, damaged);
      bool ok = error.empty() ? same_stats(stats, *stats_) : error == expected;
      if (!ok && ++wrong <= 5) {
        ADD_FAILURE() << "page " << page_no << " byte " << pos << ": got '"
                      << (error.empty() ? "different statistics" : error) << "', expected '"
                      << expected << "'";
      }
      if (::pwrite(fd, &original, 1, at) != 1) throw std::runtime_error("pwrite");
    }
    ::close(fd);
    return wrong;
  }

  static std::string* dir_;
  static std::string* pristine_path_;
  static Bytes* pristine_;
  static IndexStats* stats_;
  std::string path_;
};

std::string* FileCorruptFile::dir_ = nullptr;
std::string* FileCorruptFile::pristine_path_ = nullptr;
Bytes* FileCorruptFile::pristine_ = nullptr;
IndexStats* FileCorruptFile::stats_ = nullptr;

uint8_t xor_ff(uint8_t b) {
  return b ^ 0xFF;
}
uint8_t plus_one(uint8_t b) {
  return static_cast<uint8_t>(b + 1);
}
bool every_position(uint32_t) {
  return true;
}
// Full open + analyze on B-tree pages: the 39-byte B-tree header, the first node bytes, and
// every 256th byte after; every other byte goes through read_page.
bool sampled_position(uint32_t pos) {
  return pos < 48 || pos % 256 == 0;
}

TEST_F(FileCorruptFile, FixtureHasThirtyThreePagesAndTenThousandEntries) {
  EXPECT_EQ(pristine_->size(), uint64_t{pages()} * kPageSize);
  EXPECT_EQ(pages(), 33u);
  EXPECT_EQ(stats_->nodes, 10000u);
  EXPECT_EQ(stats_->depth, 2u);
  EXPECT_EQ(stats_->index_pages, 31u);
}

TEST_F(FileCorruptFile, EveryByteOfHeaderPageXorFF) {
  EXPECT_EQ(damage_every_byte(kHeaderPage, xor_ff, every_position), 0);
}

TEST_F(FileCorruptFile, EveryByteOfHeaderPagePlusOne) {
  EXPECT_EQ(damage_every_byte(kHeaderPage, plus_one, every_position), 0);
}

TEST_F(FileCorruptFile, EveryByteOfIndexRootPageXorFF) {
  EXPECT_EQ(damage_every_byte(kIndexRootPage, xor_ff, every_position), 0);
}

TEST_F(FileCorruptFile, EveryByteOfIndexRootPagePlusOne) {
  EXPECT_EQ(damage_every_byte(kIndexRootPage, plus_one, every_position), 0);
}

TEST_F(FileCorruptFile, EveryByteOfEveryBtreePageXorFF) {
  int wrong = 0;
  for (uint32_t p = 2; p < pages(); ++p) wrong += damage_every_byte(p, xor_ff, sampled_position);
  EXPECT_EQ(wrong, 0);
}

TEST_F(FileCorruptFile, TruncatedAtAndBetweenPageBoundaries) {
  std::vector<uint64_t> lengths = {0, 10, 30, 55, 2048, 4095};
  for (uint64_t k = 1; k < pages(); ++k) {
    lengths.push_back(k * kPageSize);
    lengths.push_back(k * kPageSize + 2048);
  }
  lengths.push_back(uint64_t{pages()} * kPageSize - 1);
  for (uint64_t length : lengths) {
    write_bytes(path_, Bytes(pristine_->begin(), pristine_->begin() + static_cast<long>(length)));
    std::string expected;
    if (length < 24) {
      expected =
          fmt::format("{}: not a pbtree file ({} bytes, too short for a header)", path_, length);
    } else if (length < kHeaderPrefixSize) {
      expected = fmt::format("{}: truncated file ({} bytes)", path_, length);
    } else if (length < kPageSize) {
      expected =
          fmt::format("{}: truncated file: page 0 lies beyond the end ({} bytes)", path_, length);
    } else {
      expected = fmt::format(
          "{}: truncated file: the header counts 33 pages of 4096 bytes, the file has {} bytes",
          path_, length);
    }
    IndexStats stats;
    EXPECT_EQ(open_and_analyze(path_, &stats), expected) << "length " << length;
  }
}

TEST_F(FileCorruptFile, WrongMagic) {
  rewrite_page(kHeaderPage, [](uint8_t* page) { page[16] = 'X'; });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats), path_ + ": not a pbtree file (wrong magic)");
}

TEST_F(FileCorruptFile, UnknownFormatVersion) {
  rewrite_page(kHeaderPage, [](uint8_t* page) { put_u32(page + 24, 7); });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats),
            path_ + ": unknown format version 7 (this build reads 1)");
}

TEST_F(FileCorruptFile, UnknownPageSize) {
  rewrite_page(kHeaderPage, [](uint8_t* page) { put_u32(page + 28, 1000); });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats),
            path_ + ": bad page size 1000 (expected 4096, 8192, 16384 or 32768)");
}

// A valid page size that is not the file's: the 8192-byte page 0 fails its checksum.
TEST_F(FileCorruptFile, OtherValidPageSize) {
  rewrite_page(kHeaderPage, [](uint8_t* page) { put_u32(page + 28, 8192); });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats), path_ + ": page 0 (header): checksum mismatch");
}

TEST_F(FileCorruptFile, HeaderPageOfWrongType) {
  rewrite_page(kHeaderPage, [](uint8_t* page) { page[0] = 7; });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats),
            path_ + ": page 0: expected a header page, found a b-tree page");
}

TEST_F(FileCorruptFile, IndexRootPageOfWrongType) {
  rewrite_page(kIndexRootPage, [](uint8_t* page) { page[0] = 7; });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats),
            path_ + ": page 1: expected a index root page, found a b-tree page");
}

TEST_F(FileCorruptFile, LeafPageOfWrongType) {
  ASSERT_EQ((*pristine_)[3 * kPageSize + 33], 0);  // btr_level: page 3 is a leaf
  rewrite_page(3, [](uint8_t* page) { page[0] = 6; });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats),
            path_ + ": page 3: expected a b-tree page, found a index root page");
}

TEST_F(FileCorruptFile, RootPageOfWrongType) {
  uint32_t root = stats_->root_page;
  ASSERT_EQ(root, 4u);
  rewrite_page(root, [](uint8_t* page) { page[0] = 9; });
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats),
            path_ + ": page 4: expected a b-tree page, found a free page");
}

// A page written at the wrong place (valid checksum, own number 3) is caught by its number.
TEST_F(FileCorruptFile, MisdirectedPageWrite) {
  Bytes bytes = *pristine_;
  std::copy(bytes.begin() + 3 * kPageSize, bytes.begin() + 4 * kPageSize,
            bytes.begin() + 4 * kPageSize);
  write_bytes(path_, bytes);
  IndexStats stats;
  EXPECT_EQ(open_and_analyze(path_, &stats), path_ + ": page 4 (b-tree): page carries number 3");
}

// Scans every entry of the index; returns "" or the CorruptError message.
std::string scan_all(const std::string& path, uint64_t* entries) {
  try {
    auto f = IndexFile::open(path);
    *entries = 0;
    for (Cursor c = btree_of(*f, kIndex).scan(); c.valid(); c.next()) ++*entries;
    return "";
  } catch (const CorruptError& e) {
    return e.what();
  }
}

// A leaf whose right sibling points back to itself (valid checksum): the scan stops with an
// error instead of looping.
TEST_F(FileCorruptFile, RightSiblingLoopingBackStopsTheScan) {
  ASSERT_EQ((*pristine_)[3 * kPageSize + 33], 0);  // page 3 is a leaf
  rewrite_page(3, [](uint8_t* page) { put_u32(page + 16, 3); });
  uint64_t entries = 0;
  EXPECT_EQ(scan_all(path_, &entries),
            "page 3 (b-tree): first key sorts below the last key of the left sibling");
}

// The same scan backwards (last entry first).
std::string scan_all_backward(const std::string& path, uint64_t* entries) {
  try {
    auto f = IndexFile::open(path);
    *entries = 0;
    ScanRange r;
    r.backward = true;
    for (Cursor c = btree_of(*f, kIndex).scan(std::move(r)); c.valid(); c.next()) ++*entries;
    return "";
  } catch (const CorruptError& e) {
    return e.what();
  }
}

// A leaf whose left sibling is itself: a backward scan stops with an error (it crashed).
TEST_F(FileCorruptFile, LeftSiblingPointingAtItselfStopsABackwardScan) {
  ASSERT_EQ((*pristine_)[3 * kPageSize + 33], 0);                  // page 3 is a leaf
  ASSERT_NE(get_u32(pristine_->data() + 3 * kPageSize + 20), 0u);  // with a left sibling
  rewrite_page(3, [](uint8_t* page) { put_u32(page + 20, 3); });
  uint64_t entries = 0;
  EXPECT_EQ(scan_all_backward(path_, &entries), "page 3 (b-tree): left sibling is the page itself");
}

// A leaf whose left sibling does not link back (its right sibling is another page): a backward
// scan re-seeks, counting each move left, and stops with an error once the moves exceed the
// file's page count.
TEST_F(FileCorruptFile, LeftSiblingNotLinkingBackStopsABackwardScan) {
  // A leaf with a left sibling other than page 2; its left link is pointed at leaf 2, whose
  // right sibling is another page.
  const uint32_t pages = static_cast<uint32_t>(pristine_->size() / kPageSize);
  uint32_t leaf = 0;
  for (uint32_t p = 3; p < pages && leaf == 0; ++p) {
    const uint8_t* d = pristine_->data() + size_t{p} * kPageSize;
    if (d[0] == 7 && d[33] == 0 && get_u32(d + 20) != 0 && get_u32(d + 20) != 2) leaf = p;
  }
  ASSERT_NE(leaf, 0u);
  ASSERT_EQ((*pristine_)[2 * kPageSize + 33], 0);  // page 2 is a leaf
  rewrite_page(leaf, [](uint8_t* page) { put_u32(page + 20, 2); });
  uint64_t entries = 0;
  EXPECT_EQ(scan_all_backward(path_, &entries),
            fmt::format("page {} (b-tree): the left sibling chain loops back or does not link back",
                        leaf));
}

// The pristine file scans all its entries backwards too.
TEST_F(FileCorruptFile, PristineFileScansEveryEntryBackward) {
  uint64_t entries = 0;
  EXPECT_EQ(scan_all_backward(*pristine_path_, &entries), "");
  EXPECT_EQ(entries, static_cast<uint64_t>(kKeys));
}

// The pristine file scans all its entries.
TEST_F(FileCorruptFile, PristineFileScansEveryEntry) {
  uint64_t entries = 0;
  EXPECT_EQ(scan_all(*pristine_path_, &entries), "");
  EXPECT_EQ(entries, static_cast<uint64_t>(kKeys));
}

}  // namespace
}  // namespace pbtree
