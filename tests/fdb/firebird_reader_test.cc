// Unit tests of the Firebird file reader (firebird/): RLE decompression, record layouts of
// system relations, header checks (ODS versions, page sizes) and checked page reads. Real
// databases are compared with fbstat by tests/firebird/compare_stat.sh (ctest
// firebird_stat_compare).
#include <gtest/gtest.h>
#include <pbtree/errors.h>

#include <cstring>
#include <string>
#include <vector>

#include "firebird/fdb_file.h"
#include "firebird/fdb_records.h"

namespace pbtree::firebird {
namespace {

std::vector<uint8_t> header_image(uint16_t page_size, uint16_t ods, uint16_t minor,
                                  uint32_t pages = 3) {
  std::vector<uint8_t> img(uint64_t{page_size} * pages, 0);
  img[0] = 1;
  std::memcpy(&img[16], &page_size, 2);
  std::memcpy(&img[18], &ods, 2);
  uint32_t pages_ppg = 1;
  std::memcpy(&img[20], &pages_ppg, 4);
  std::memcpy(&img[64], &minor, 2);
  for (uint32_t p = 1; p < pages; ++p) {
    img[uint64_t{p} * page_size] = 4;
    std::memcpy(&img[uint64_t{p} * page_size + 12], &p, 4);
  }
  return img;
}

std::string error_of(std::vector<uint8_t> img) {
  try {
    FdbFile::from_bytes("x.fdb", std::move(img));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

TEST(FdbFirebirdRle, LiteralAndRepeatRuns) {
  const std::vector<uint8_t> in = {3, 'a', 'b', 'c', static_cast<uint8_t>(-4), 'x', 1, 'z'};
  std::vector<uint8_t> out;
  ASSERT_TRUE(rle_unpack(in, out, 100));
  EXPECT_EQ(std::string(out.begin(), out.end()), "abcxxxxz");
}

TEST(FdbFirebirdRle, OverrunIsRefused) {
  const std::vector<uint8_t> in = {static_cast<uint8_t>(-100), 0};
  std::vector<uint8_t> out;
  EXPECT_FALSE(rle_unpack(in, out, 99));
}

TEST(FdbFirebirdRle, RepeatWithoutItsByteIsRefused) {
  const std::vector<uint8_t> in = {static_cast<uint8_t>(-3)};
  std::vector<uint8_t> out;
  EXPECT_FALSE(rle_unpack(in, out, 99));
}

TEST(FdbFirebirdRle, LiteralRunPastTheInputIsRefused) {
  const std::vector<uint8_t> in = {5, 'a', 'b'};
  std::vector<uint8_t> out;
  EXPECT_FALSE(rle_unpack(in, out, 99));
}

TEST(FdbFirebirdRle, Firebird5LongRunsTakeATwoOrFourByteCount) {
  const std::vector<uint8_t> in = {0xFF, 0x2C, 0x01, 'x', 0xFE, 0x00, 0x00, 0x01, 0x00, 0, 1, 'z'};
  std::vector<uint8_t> out;
  ASSERT_TRUE(rle_unpack(in, out, 100000, true));
  ASSERT_EQ(out.size(), 300u + 65536u + 1u);
  EXPECT_EQ(out[0], 'x');
  EXPECT_EQ(out[299], 'x');
  EXPECT_EQ(out[300], 0);
  EXPECT_EQ(out.back(), 'z');
}

TEST(FdbFirebirdRle, MinusOneIsAnOrdinaryRunBeforeOds13_1) {
  const std::vector<uint8_t> in = {0xFF, 'q'};
  std::vector<uint8_t> out;
  ASSERT_TRUE(rle_unpack(in, out, 10, false));
  EXPECT_EQ(std::string(out.begin(), out.end()), "q");
}

TEST(FdbFirebirdRle, LongRunWithoutItsCountIsRefused) {
  const std::vector<uint8_t> in = {0xFE, 0x01, 0x00};
  std::vector<uint8_t> out;
  EXPECT_FALSE(rle_unpack(in, out, 100, true));
}

TEST(FdbFirebirdRecordFormat, RdbPagesLayout) {
  RecordFormat f = RecordFormat::layout(
      {{Dtype::Long, 4}, {Dtype::Short, 2}, {Dtype::Long, 4}, {Dtype::Short, 2}});
  ASSERT_EQ(f.fields.size(), 4u);
  EXPECT_EQ(f.fields[0].offset, 4u);
  EXPECT_EQ(f.fields[1].offset, 8u);
  EXPECT_EQ(f.fields[2].offset, 12u);
  EXPECT_EQ(f.fields[3].offset, 16u);
  EXPECT_EQ(f.length, 18u);
}

TEST(FdbFirebirdRecordFormat, CharIsNotAlignedBlobAlignsToEight) {
  RecordFormat f =
      RecordFormat::layout({{Dtype::Text, 31}, {Dtype::Blob, 8}, {Dtype::Varying, 257}});
  EXPECT_EQ(f.fields[0].offset, 4u);
  EXPECT_EQ(f.fields[1].offset, 40u);
  EXPECT_EQ(f.fields[2].offset, 48u);
  EXPECT_EQ(f.length, 305u);
}

TEST(FdbFirebirdRecordFormat, ThirtyThreeFieldsTakeEightNullBytes) {
  std::vector<FieldDesc> fields(33, FieldDesc{Dtype::Text, 1});
  EXPECT_EQ(RecordFormat::layout(fields).fields[0].offset, 8u);
}

TEST(FdbFirebirdRecordView, NullBitAndTrimmedText) {
  RecordFormat f = RecordFormat::layout({{Dtype::Text, 5}, {Dtype::Short, 2}});
  std::vector<uint8_t> rec(f.length, 0);
  std::memcpy(&rec[4], "AB   ", 5);
  rec[0] = 0x02;  // field 1 is NULL
  RecordView r(f, rec);
  EXPECT_EQ(r.text(0), "AB");
  EXPECT_FALSE(r.is_null(0));
  EXPECT_TRUE(r.is_null(1));
  EXPECT_EQ(r.integer(1), 0);
}

TEST(FdbFirebirdHeader, Ods12AcceptedWithItsFields) {
  auto f = FdbFile::from_bytes("x.fdb", header_image(4096, 0x800C, 0));
  EXPECT_EQ(f->page_size(), 4096u);
  EXPECT_EQ(f->page_count(), 3u);
  EXPECT_EQ(f->header().pages_pointer_page, 1u);
}

TEST(FdbFirebirdHeader, Ods13_0IsReadAsFirebird4) {
  auto f = FdbFile::from_bytes("x.fdb", header_image(8192, 0x800D, 0));
  EXPECT_EQ(f->ods().describe(), "ODS 13.0 (Firebird 4.0)");
  EXPECT_EQ(f->ods().identifier_bytes, 252u);
  EXPECT_FALSE(f->ods().long_runs);
}

TEST(FdbFirebirdHeader, Ods13_1IsReadAsFirebird5WithLongRuns) {
  auto f = FdbFile::from_bytes("x.fdb", header_image(8192, 0x800D, 1));
  EXPECT_EQ(f->ods().describe(), "ODS 13.1 (Firebird 5.0)");
  EXPECT_TRUE(f->ods().long_runs);
  EXPECT_TRUE(f->ods().index_condition);
}

TEST(FdbFirebirdHeader, Ods11_2MinorVersionIsReadAtOffset62) {
  auto img = header_image(8192, 0x800B, 0);
  const uint16_t minor = 2;
  std::memcpy(&img[62], &minor, 2);
  auto f = FdbFile::from_bytes("x.fdb", img);
  EXPECT_EQ(f->ods().describe(), "ODS 11.2 (Firebird 2.5)");
  EXPECT_FALSE(f->ods().page_number_field);
}

TEST(FdbFirebirdHeader, Ods14IsRefusedNamingTheVersion) {
  EXPECT_EQ(error_of(header_image(8192, 0x800E, 0)),
            "x.fdb: ODS 14.0 (Firebird 6) is not read: pbtree reads ODS 11.0-11.2 (Firebird "
            "2.0-2.5), 12.0 (Firebird 3.0) and 13.0-13.1 (Firebird 4.0 and 5.0)");
}

TEST(FdbFirebirdHeader, RedDatabaseIsReadAsOds12AndNamed) {
  auto f = FdbFile::from_bytes("x.fdb", header_image(8192, 0xE00C, 3));
  EXPECT_EQ(f->header().product, "RedDatabase");
  EXPECT_EQ(f->header().ods_major, 12);
  EXPECT_EQ(f->header().ods_minor, 3);
  EXPECT_EQ(f->ods().describe(), "ODS 12.0 (Firebird 3.0)");
}

TEST(FdbFirebirdHeader, SecondaryFileOfAMultiFileDatabaseRefused) {
  auto img = header_image(4096, 0x800C, 0);
  img[40] = 2;  // hdr_sequence
  EXPECT_EQ(error_of(img),
            "x.fdb: a secondary file (file 2 of a multi-file database); open the database's "
            "first file: pbtree reads single-file databases only");
}

TEST(FdbFirebirdHeader, MultiFileDatabaseRefused) {
  auto img = header_image(4096, 0x800C, 0);
  img[24] = 9;  // hdr_next_page
  EXPECT_EQ(error_of(img),
            "x.fdb: a multi-file database (next header page 9); pbtree reads "
            "single-file databases only");
}

TEST(FdbFirebirdHeader, NotAHeaderPage) {
  auto img = header_image(4096, 0x800C, 0);
  img[0] = 7;
  EXPECT_EQ(error_of(img),
            "x.fdb: not a Firebird database (page 0 has page type 7, not 1 = header page)");
}

TEST(FdbFirebirdHeader, MissingFirebirdFlagIsInterBase) {
  EXPECT_EQ(error_of(header_image(4096, 0x000C, 0)),
            "x.fdb: an InterBase database (ODS 12); pbtree reads ODS 11.0-11.2 (Firebird "
            "2.0-2.5), 12.0 (Firebird 3.0) and 13.0-13.1 (Firebird 4.0 and 5.0)");
}

TEST(FdbFirebirdHeader, Ods10IsInterBase6OrFirebird1) {
  EXPECT_EQ(error_of(header_image(4096, 0x000A, 0)),
            "x.fdb: an InterBase 6 / Firebird 1.x database (ODS 10.0); pbtree reads ODS "
            "11.0-11.2 (Firebird 2.0-2.5), 12.0 (Firebird 3.0) and 13.0-13.1 (Firebird 4.0 "
            "and 5.0)");
}

TEST(FdbFirebirdHeader, ImplausibleOdsWordIsNotFirebird) {
  EXPECT_EQ(error_of(header_image(4096, 0x1234, 0)),
            "x.fdb: not a Firebird database (ODS version word 0x1234 lacks the Firebird flag "
            "0x8000)");
}

TEST(FdbFirebirdHeader, UnsupportedPageSize) {
  auto img = header_image(4096, 0x800C, 0);
  const uint16_t ps = 3000;
  std::memcpy(&img[16], &ps, 2);
  EXPECT_EQ(error_of(img),
            "x.fdb: page 0 (header): page size 3000 is not a Firebird page size (1024 .. 32768)");
}

TEST(FdbFirebirdHeader, ShortFile) {
  EXPECT_EQ(error_of(std::vector<uint8_t>(10, 0)),
            "x.fdb: not a Firebird database (10 bytes, shorter than a header page)");
}

TEST(FdbFirebirdHeader, EncryptedDatabaseRefused) {
  auto img = header_image(4096, 0x800C, 0);
  img[42] = 0x40;
  EXPECT_EQ(error_of(img),
            "x.fdb: an encrypted Firebird database, ODS 12.0 (Firebird 3.0); "
            "pbtree reads plain pages only");
}

TEST(FdbFirebirdHeader, EncryptedOds13DatabaseNamesItsPlugin) {
  auto img = header_image(4096, 0x800D, 1);
  img[42] = 0x40;
  std::memcpy(&img[84], "DbCrypt_example", 15);
  EXPECT_EQ(error_of(img),
            "x.fdb: an encrypted Firebird database (plugin DbCrypt_example), ODS "
            "13.1 (Firebird 5.0); pbtree reads plain pages only");
}

TEST(FdbFirebirdReadPage, PageChangedUnderTheReadIsNotCalledCorrupt) {
  const std::string path = ::testing::TempDir() + "/pbtree_live.fdb";
  auto img = header_image(4096, 0x800C, 0);
  std::FILE* out = std::fopen(path.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  std::fwrite(img.data(), 1, img.size(), out);
  std::fclose(out);
  auto f = FdbFile::open(path);
  // Another process writes: the header generation moves and page 2 becomes a data page.
  img[4] = 1;
  img[2 * 4096] = 5;
  out = std::fopen(path.c_str(), "wb");
  std::fwrite(img.data(), 1, img.size(), out);
  std::fclose(out);
  std::vector<uint8_t> page(4096);
  try {
    f->read_page(2, FdbPage::Pointer, page.data());
    FAIL() << "no error";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": page 2 changed while it was read (a data page where a pointer page was "
                  "expected): another process is writing the database; run again, or read a "
                  "copy made with nbackup or gbak");
  }
  std::remove(path.c_str());
}

TEST(FdbFirebirdReadPage, BeyondTheEnd) {
  auto f = FdbFile::from_bytes("x.fdb", header_image(4096, 0x800C, 0));
  std::vector<uint8_t> page(4096);
  try {
    f->read_page(9, FdbPage::Btree, page.data());
    FAIL() << "no error";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "x.fdb: page 9 (b-tree): beyond the end of the file (3 pages)");
  }
}

TEST(FdbFirebirdReadPage, WrongPageType) {
  auto f = FdbFile::from_bytes("x.fdb", header_image(4096, 0x800C, 0));
  std::vector<uint8_t> page(4096);
  try {
    f->read_page(2, FdbPage::Data, page.data());
    FAIL() << "no error";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "x.fdb: page 2 (pointer): expected a data page");
  }
}

TEST(FdbFirebirdReadPage, WrongSelfNumber) {
  auto img = header_image(4096, 0x800C, 0);
  img[2 * 4096 + 12] = 5;
  auto f = FdbFile::from_bytes("x.fdb", img);
  std::vector<uint8_t> page(4096);
  try {
    f->read_page(2, FdbPage::Pointer, page.data());
    FAIL() << "no error";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "x.fdb: page 2 (pointer): page number field says 5");
  }
}

TEST(FdbFirebirdScan, PointerPageOfAnotherRelationIsCorrupt) {
  auto img = header_image(4096, 0x800C, 0);
  img[4096 + 26] = 6;  // ppg_relation
  auto f = FdbFile::from_bytes("x.fdb", img);
  try {
    pages_relation_pointer_pages(*f);
    FAIL() << "no error";
  } catch (const CorruptError& e) {
    EXPECT_STREQ(e.what(), "x.fdb: page 1 (pointer): relation 6 where RDB$PAGES (0) was expected");
  }
}

TEST(FdbFirebirdScan, EmptyPointerPageGivesNoRecords) {
  auto f = FdbFile::from_bytes("x.fdb", header_image(4096, 0x800C, 0));
  size_t n = 0;
  scan_relation(*f, 0, pages_relation_pointer_pages(*f), 1000,
                [&](std::span<const uint8_t>) { ++n; });
  EXPECT_EQ(n, 0u);
}

}  // namespace
}  // namespace pbtree::firebird
