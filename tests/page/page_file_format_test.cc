// Tests of the header page and index root page codecs (page/file_header.h): exact bytes,
// round trips and the error messages for files that are not (valid) pbtree files.
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "file/index_root.h"
#include "page/file_header.h"

namespace pbtree {
namespace {

using Bytes = std::vector<uint8_t>;

TEST(PageFileFormat, HeaderPageBytes) {
  FileHeader h;
  h.page_size = 4096;
  h.page_count = 7;
  h.checkpoint = 0x0102030405060708ULL;
  Bytes page(4096, 0xEE);
  encode_header_page(h, page.data());
  EXPECT_EQ(
      Bytes(page.begin(), page.begin() + 56),
      (Bytes{1,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0,    0, 0, 0, 0, 0, 0x50, 0x42, 0x54,
             0x52, 0x45, 0x45, 0x0D, 0x0A, 1, 0, 0, 0, 0, 0x10, 0, 0, 7, 0, 0, 0,    1,    0,
             0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 8,    7, 6, 5, 4, 3, 2,    1}));
  EXPECT_EQ(page[4095], 0);
  FileHeader back = decode_header_prefix(page.data(), 56, "x");
  EXPECT_EQ(back.page_size, 4096u);
  EXPECT_EQ(back.page_count, 7u);
  EXPECT_EQ(back.checkpoint, 0x0102030405060708ULL);
}

std::string error_of(const Bytes& bytes) {
  try {
    decode_header_prefix(bytes.data(), bytes.size(), "f.pbt");
  } catch (const CorruptError& e) {
    return e.what();
  }
  return "no error";
}

Bytes good_header() {
  FileHeader h;
  h.page_size = 8192;
  h.page_count = 2;
  Bytes page(8192);
  encode_header_page(h, page.data());
  page.resize(56);
  return page;
}

TEST(PageFileFormat, WrongMagic) {
  Bytes b = good_header();
  b[16] = 'X';
  EXPECT_EQ(error_of(b), "f.pbt: not a pbtree file (wrong magic)");
}

TEST(PageFileFormat, UnknownFormatVersion) {
  Bytes b = good_header();
  b[24] = 7;
  EXPECT_EQ(error_of(b), "f.pbt: unknown format version 7 (this build reads 1)");
}

TEST(PageFileFormat, BadPageSize) {
  Bytes b = good_header();
  put_u32(b.data() + 28, 1000);
  EXPECT_EQ(error_of(b), "f.pbt: bad page size 1000 (expected 4096, 8192, 16384 or 32768)");
}

TEST(PageFileFormat, TooShortToBeAFile) {
  EXPECT_EQ(error_of(Bytes(10, 0)), "f.pbt: not a pbtree file (10 bytes, too short for a header)");
  Bytes b = good_header();
  b.resize(30);
  EXPECT_EQ(error_of(b), "f.pbt: truncated file (30 bytes)");
}

TEST(PageFileFormat, IndexRootPageRoundTrip) {
  std::vector<IndexInfo> slots(3);
  slots[0].def.name = "I_A";
  slots[0].def.type.type = ColumnType::Numeric;
  slots[0].def.type.precision = 12;
  slots[0].def.type.scale = 2;
  slots[0].def.format = KeyFormat::RescaledDouble;
  slots[0].def.unique = true;
  slots[0].root_page = 5;
  slots[2].def.name = "I_$c_9";
  slots[2].def.type.type = ColumnType::Varchar;
  slots[2].def.type.length = 300;
  slots[2].def.format = KeyFormat::Text;
  slots[2].def.descending = true;
  slots[2].root_page = 9;
  Bytes page(4096);
  encode_index_root_page(slots, page.data(), 4096);
  EXPECT_EQ(page[0], 6);
  EXPECT_EQ(get_u16(page.data() + 18), 3);
  EXPECT_EQ(Bytes(page.begin() + 20, page.begin() + 40),
            (Bytes{5, 0, 0, 0, 0, 0, 0, 0, 6, 12, 2, 8, 0, 0, 1, 3, 'I', '_', 'A', 0}));
  std::vector<IndexInfo> back = decode_index_root_page(page.data(), 4096, 10, "f.pbt");
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back[0].def.name, "I_A");
  EXPECT_EQ(back[0].def.type, slots[0].def.type);
  EXPECT_EQ(back[0].def.format, KeyFormat::RescaledDouble);
  EXPECT_TRUE(back[0].def.unique);
  EXPECT_EQ(back[1].root_page, 0u);
  EXPECT_EQ(back[2].def.name, "I_$c_9");
  EXPECT_EQ(back[2].id, 2u);
  EXPECT_EQ(back[2].def.type.length, 300);
  EXPECT_TRUE(back[2].def.descending);
}

TEST(PageFileFormat, IndexRootSlotErrors) {
  std::vector<IndexInfo> slots(1);
  slots[0].def.name = "I_A";
  slots[0].def.format = KeyFormat::Double;
  slots[0].root_page = 5;
  Bytes page(4096);
  encode_index_root_page(slots, page.data(), 4096);
  auto err = [&](Bytes p, uint32_t page_count) -> std::string {
    try {
      decode_index_root_page(p.data(), 4096, page_count, "f.pbt");
    } catch (const CorruptError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(err(page, 5), "f.pbt: page 1 (index root): slot 0: root page 5 outside [2, 5)");
  Bytes p = page;
  p[20 + 8] = 9;
  EXPECT_EQ(err(p, 10), "f.pbt: page 1 (index root): slot 0: unknown column type 9");
  p = page;
  p[20 + 11] = 2;
  EXPECT_EQ(err(p, 10), "f.pbt: page 1 (index root): slot 0: unknown key format 2");
  p = page;
  p[20 + 16] = '-';
  EXPECT_EQ(err(p, 10), "f.pbt: page 1 (index root): slot 0: malformed index name");
  p = page;
  put_u16(p.data() + 18, 1000);
  EXPECT_EQ(err(p, 10), "f.pbt: page 1 (index root): slot count 1000 exceeds 84");
}

TEST(PageFileFormat, MaxSlots) {
  EXPECT_EQ(max_index_slots(4096), 84u);
  EXPECT_EQ(max_index_slots(8192), 170u);
}

class PageFileOnDisk : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/pbtree-ff-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/f.pbt";
  }
  void TearDown() override {
    std::remove(path_.c_str());
    ::rmdir(dir_.c_str());
  }
  std::string open_error() {
    try {
      IndexFile::open(path_);
    } catch (const CorruptError& e) {
      return e.what();
    }
    return "no error";
  }
  std::string dir_, path_;
};

TEST_F(PageFileOnDisk, NewFileIsTwoPages) {
  auto f = IndexFile::open_or_create(path_, 4096);
  EXPECT_EQ(f->page_count(), 2u);
  EXPECT_TRUE(f->indexes().empty());
  std::ifstream in(path_, std::ios::binary | std::ios::ate);
  EXPECT_EQ(static_cast<long>(in.tellg()), 8192);
}

TEST_F(PageFileOnDisk, NotAPbtreeFile) {
  std::ofstream(path_) << "hello, this is a text file and not an index file at all....";
  EXPECT_EQ(open_error(), path_ + ": not a pbtree file (wrong magic)");
}

TEST_F(PageFileOnDisk, TruncatedFile) {
  IndexFile::open_or_create(path_, 4096);
  ASSERT_EQ(::truncate(path_.c_str(), 6000), 0);
  EXPECT_EQ(open_error(), path_ +
                              ": truncated file: the header counts 2 pages of 4096 bytes, the "
                              "file has 6000 bytes");
}

TEST_F(PageFileOnDisk, HeaderCountsMorePagesThanTheFileHas) {
  {
    auto f = IndexFile::open_or_create(path_, 4096);
    EntryBatch batch;
    batch.add(std::vector<uint8_t>{0xC0}, 1, 1);
    IndexDefinition def;
    def.name = "I";
    f->bulk_load(def, batch);
  }
  ASSERT_EQ(::truncate(path_.c_str(), 8192), 0);
  EXPECT_EQ(open_error(), path_ +
                              ": truncated file: the header counts 3 pages of 4096 bytes, the "
                              "file has 8192 bytes");
}

}  // namespace
}  // namespace pbtree
