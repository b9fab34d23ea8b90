// Unit tests of blobs read by their ids (read_fdb_blob, firebird/fdb_records.h): a hand-built
// ODS 12 image whose RDB$INDICES (relation 4) data page holds blobs of levels 0, 1 and 2,
// segmented and stream; damaged blobs give one-line CorruptErrors that name the page. The
// source texts of a real Firebird 5 database's indexes are in firebird_index_source_test.cc.
#include <gtest/gtest.h>
#include <pbtree/errors.h>

#include <cstring>
#include <string>
#include <vector>

#include "firebird/fdb_file.h"
#include "firebird/fdb_records.h"

namespace pbtree::firebird {
namespace {

constexpr uint32_t kPs = 4096;
constexpr uint16_t kRelation = 4;
// ODS 12 at 4 KiB pages: max_records 239 = (4096 - 28) / 17, dp_per_pp 808.
constexpr uint64_t kMaxRecords = 239, kPerPointerPage = 808;

void put16(std::vector<uint8_t>& img, uint64_t at, uint16_t v) {
  std::memcpy(&img[at], &v, 2);
}
void put32(std::vector<uint8_t>& img, uint64_t at, uint32_t v) {
  std::memcpy(&img[at], &v, 4);
}
void put_bytes(std::vector<uint8_t>& img, uint64_t at, const std::string& bytes) {
  std::memcpy(&img[at], bytes.data(), bytes.size());
}

void page_header(std::vector<uint8_t>& img, uint32_t p, uint8_t type) {
  img[uint64_t{p} * kPs] = type;
  put32(img, uint64_t{p} * kPs + 12, p);
}

// Line `line` of data page 3: `len` bytes at `off` with rhd_flags `flags`; returns its offset
// in the image.
uint64_t line(std::vector<uint8_t>& img, uint32_t line, uint16_t off, uint16_t len,
              uint16_t flags) {
  const uint64_t base = uint64_t{3} * kPs;
  put16(img, base + 24 + 4 * line, off);
  put16(img, base + 24 + 4 * line + 2, len);
  put16(img, base + off + 10, flags);
  return base + off;
}

// Pages: 0 header, 1 RDB$PAGES pointer page, 2 pointer page of relation 4 listing data page
// 3, whose lines are: 0 a level-0 segmented blob ("WHERE " and "X > 0"), 1 a level-0 stream
// blob ("stream text"), 2 a level-1 blob on pages 4 and 5 (one segment "HELLO, WORLD" whose
// run crosses the page boundary), 3 a level-2 blob whose page 6 lists pages 4 and 5, 4 an
// ordinary record.
std::vector<uint8_t> blob_image() {
  std::vector<uint8_t> img(uint64_t{kPs} * 8, 0);
  img[0] = 1;
  put16(img, 16, kPs);
  put16(img, 18, 0x800C);
  put32(img, 20, 1);
  page_header(img, 1, 4);
  page_header(img, 2, 4);
  put16(img, 2 * kPs + 24, 1);  // ppg_count
  put16(img, 2 * kPs + 26, kRelation);
  put32(img, 2 * kPs + 32, 3);
  page_header(img, 3, 5);
  put16(img, 3 * kPs + 20, kRelation);
  put16(img, 3 * kPs + 22, 5);  // dpg_count
  const std::string segmented("\x06\x00WHERE \x05\x00X > 0", 15);
  put_bytes(img, line(img, 0, 4000, 28 + 15, 16) + 28, segmented);
  put_bytes(img, line(img, 1, 3900, 28 + 11, 16 | 32) + 28, "stream text");
  const uint64_t l1 = line(img, 2, 3800, 28 + 8, 16);
  img[l1 + 12] = 1;  // blh_level
  put32(img, l1 + 28, 4);
  put32(img, l1 + 32, 5);
  const uint64_t l2 = line(img, 3, 3700, 28 + 4, 16);
  img[l2 + 12] = 2;
  put32(img, l2 + 28, 6);
  line(img, 4, 3600, 20, 0);
  page_header(img, 4, 8);
  put16(img, 4 * kPs + 24, 8);  // blp_length
  put_bytes(img, 4 * kPs + 28, std::string("\x0c\x00HELLO,", 8));
  page_header(img, 5, 8);
  put16(img, 5 * kPs + 24, 6);
  put_bytes(img, 5 * kPs + 28, " WORLD");
  page_header(img, 6, 8);
  put16(img, 6 * kPs + 24, 8);
  put32(img, 6 * kPs + 28, 4);
  put32(img, 6 * kPs + 32, 5);
  return img;
}

std::string blob_text(std::vector<uint8_t> img, uint64_t number, size_t max_bytes = 1 << 20,
                      uint16_t relation = kRelation) {
  auto f = FdbFile::from_bytes("x.fdb", std::move(img));
  const std::vector<uint8_t> d = read_fdb_blob(*f, {2}, FdbBlobId{relation, number}, max_bytes);
  return std::string(d.begin(), d.end());
}

std::string blob_error(std::vector<uint8_t> img, uint64_t number, size_t max_bytes = 1 << 20,
                       uint16_t relation = kRelation) {
  try {
    blob_text(std::move(img), number, max_bytes, relation);
  } catch (const CorruptError& e) {
    return e.what();
  }
  return "";
}

TEST(FdbBlob, Level0SegmentsAreJoined) {
  EXPECT_EQ(blob_text(blob_image(), 0), "WHERE X > 0");
}

TEST(FdbBlob, StreamBlobIsReadAsStored) {
  EXPECT_EQ(blob_text(blob_image(), 1), "stream text");
}

TEST(FdbBlob, Level1SegmentRunCrossesItsBlobPages) {
  EXPECT_EQ(blob_text(blob_image(), 2), "HELLO, WORLD");
}

TEST(FdbBlob, Level2ReadsItsDataPagesThroughThePageOfPageNumbers) {
  EXPECT_EQ(blob_text(blob_image(), 3), "HELLO, WORLD");
}

TEST(FdbBlob, RecordNumberOnALaterDataPageIsFoundByItsSequence) {
  // Record number 239 + 0: data page of sequence 1, slot 1 of the pointer page.
  std::vector<uint8_t> img = blob_image();
  img.resize(uint64_t{kPs} * 9, 0);
  put16(img, 2 * kPs + 24, 2);
  put32(img, 2 * kPs + 36, 8);
  std::memcpy(&img[8 * kPs], &img[3 * kPs], kPs);
  put32(img, 8 * kPs + 12, 8);
  put32(img, 8 * kPs + 16, 1);  // dpg_sequence
  EXPECT_EQ(blob_text(img, kMaxRecords), "WHERE X > 0");
}

TEST(FdbBlob, LevelAboveTwoIsCorrupt) {
  std::vector<uint8_t> img = blob_image();
  img[3 * kPs + 4000 + 12] = 3;
  EXPECT_EQ(blob_error(img, 0), "x.fdb: page 3 (data): line 0: blob level 3 (0, 1 or 2 expected)");
}

TEST(FdbBlob, SegmentPastTheEndOfTheBlobIsCorrupt) {
  std::vector<uint8_t> img = blob_image();
  put16(img, 3 * kPs + 4000 + 28, 200);
  EXPECT_EQ(blob_error(img, 0),
            "x.fdb: page 3 (data): line 0: blob segment of 200 bytes at offset 0 passes the end "
            "of the blob (15 bytes)");
}

TEST(FdbBlob, HeaderCutShortIsCorrupt) {
  std::vector<uint8_t> img = blob_image();
  put16(img, 3 * kPs + 24 + 2, 20);  // line 0: 20 bytes
  EXPECT_EQ(blob_error(img, 0), "x.fdb: page 3 (data): line 0: blob header cut short (20 bytes)");
}

TEST(FdbBlob, BlobPageOfTheWrongTypeIsCorrupt) {
  std::vector<uint8_t> img = blob_image();
  put32(img, 3 * kPs + 3800 + 28, 3);  // level 1: the data page in place of page 4
  EXPECT_EQ(blob_error(img, 2), "x.fdb: page 3 (data): expected a blob page");
}

TEST(FdbBlob, BlpLengthPastThePageIsCorrupt) {
  std::vector<uint8_t> img = blob_image();
  put16(img, 4 * kPs + 24, 5000);
  EXPECT_EQ(blob_error(img, 2), "x.fdb: page 4 (blob): blp_length 5000 passes the end of the page");
}

TEST(FdbBlob, PageOfPageNumbersWithAPastThePageLengthIsCorrupt) {
  std::vector<uint8_t> img = blob_image();
  put16(img, 6 * kPs + 24, 4096);
  EXPECT_EQ(blob_error(img, 3), "x.fdb: page 6 (blob): blp_length 4096 passes the end of the page");
}

TEST(FdbBlob, OrdinaryRecordIsNotABlob) {
  EXPECT_EQ(blob_error(blob_image(), 4),
            "x.fdb: page 3 (data): line 4 (blob 4) is not a blob header (rhd_flags 0x0000)");
}

TEST(FdbBlob, EmptyLineIsCorrupt) {
  EXPECT_EQ(blob_error(blob_image(), 9), "x.fdb: page 3 (data): line 9 (blob 9) is empty");
}

TEST(FdbBlob, SlotWithoutADataPageIsCorrupt) {
  EXPECT_EQ(blob_error(blob_image(), kMaxRecords),
            "x.fdb: page 2 (pointer): slot 1 (blob 239) lists no data page");
}

TEST(FdbBlob, RecordNumberBeyondThePointerPagesIsCorrupt) {
  EXPECT_EQ(blob_error(blob_image(), kMaxRecords * kPerPointerPage),
            "x.fdb: blob 193112 of relation 4: data page sequence 808 lies beyond the relation's "
            "1 pointer pages");
}

TEST(FdbBlob, PointerPageOfAnotherRelationIsCorrupt) {
  EXPECT_EQ(blob_error(blob_image(), 0, 1 << 20, 5),
            "x.fdb: page 2 (pointer): relation 4 where the blob's relation 5 was expected");
}

TEST(FdbBlob, DataPageOfAnotherSequenceIsCorrupt) {
  std::vector<uint8_t> img = blob_image();
  put32(img, 3 * kPs + 16, 7);
  EXPECT_EQ(blob_error(img, 0),
            "x.fdb: page 3 (data): relation 4 sequence 7 where blob 0 needs relation 4 sequence 0");
}

TEST(FdbBlob, BlobLongerThanTheLimitIsRefused) {
  EXPECT_EQ(blob_error(blob_image(), 0, 5),
            "x.fdb: page 3 (data): line 0: blob longer than 5 bytes");
}

TEST(FdbBlob, Level1BlobLongerThanTheLimitIsRefused) {
  EXPECT_EQ(blob_error(blob_image(), 2, 10),
            "x.fdb: page 3 (data): line 2: blob longer than 10 bytes");
}

TEST(FdbBlobId, RelationAndFortyBitRecordNumber) {
  const RecordFormat format = RecordFormat::layout({{Dtype::Short, 2}, {Dtype::Blob, 8}});
  ASSERT_EQ(format.fields[1].offset, 8u);
  std::vector<uint8_t> rec(format.length, 0);
  const uint8_t bid[8] = {4, 0, 0, 1, 2, 0, 0, 0};
  std::memcpy(&rec[8], bid, 8);
  const std::optional<FdbBlobId> id = RecordView(format, rec).blob_id(1);
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->relation, 4);
  EXPECT_EQ(id->number, (uint64_t{1} << 32) | 2);
}

TEST(FdbBlobId, NullBlobFieldHasNoId) {
  const RecordFormat format = RecordFormat::layout({{Dtype::Short, 2}, {Dtype::Blob, 8}});
  std::vector<uint8_t> rec(format.length, 0);
  rec[0] = 2;  // field 1 NULL
  EXPECT_FALSE(RecordView(format, rec).blob_id(1).has_value());
}

}  // namespace
}  // namespace pbtree::firebird
