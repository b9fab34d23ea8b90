// Tests of the CRC-32C wrapper (util/crc32c.h, Intel ISA-L's crc32_iscsi): the RFC 3720
// check values, and incremental process_bytes() in pieces against one call.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "util/crc32c.h"

namespace pbtree {
namespace {

TEST(UtilCrc32c, CheckValueOfDigitsIsRfc3720s) {
  EXPECT_EQ(crc32c("123456789", 9), 0xE3069283u);
}

TEST(UtilCrc32c, EmptyInputIsZero) {
  EXPECT_EQ(crc32c(nullptr, 0), 0x00000000u);
  Crc32c crc;
  EXPECT_EQ(crc.checksum(), 0x00000000u);
}

// RFC 3720 appendix B.4: 32 bytes of zeros, of FF, ascending 00..1F and descending 1F..00.
TEST(UtilCrc32c, Rfc3720AppendixB4Vectors) {
  std::vector<uint8_t> zeros(32, 0x00), ones(32, 0xFF), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<uint8_t>(i);
    down[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros.data(), 32), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones.data(), 32), 0x62A8AB43u);
  EXPECT_EQ(crc32c(up.data(), 32), 0x46DD794Eu);
  EXPECT_EQ(crc32c(down.data(), 32), 0x113FDB5Cu);
}

// Every split of an 8 KiB pseudo-random buffer into up to three pieces (cut points stepping
// through short, odd and page-sized lengths) gives the CRC of one call over the whole buffer.
TEST(UtilCrc32c, PiecesEqualOneCall) {
  std::vector<uint8_t> bytes(8192);
  uint32_t x = 12345;
  for (auto& b : bytes) {
    x = x * 1103515245u + 12345u;
    b = static_cast<uint8_t>(x >> 24);
  }
  const uint32_t whole = crc32c(bytes.data(), bytes.size());
  const size_t cuts[] = {0, 1, 3, 4, 7, 8, 15, 16, 63, 64, 255, 256, 1000, 4095, 4096, 8191, 8192};
  int mismatches = 0;
  for (size_t a : cuts) {
    for (size_t b : cuts) {
      if (b < a) continue;
      Crc32c crc;
      crc.process_bytes(bytes.data(), a);
      EXPECT_EQ(crc.checksum(), crc32c(bytes.data(), a));  // readable mid-way
      crc.process_bytes(bytes.data() + a, b - a);
      crc.process_bytes(bytes.data() + b, bytes.size() - b);
      if (crc.checksum() != whole) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0);
  // Byte by byte as well.
  Crc32c crc;
  for (uint8_t b : bytes) crc.process_bytes(&b, 1);
  EXPECT_EQ(crc.checksum(), whole);
}

}  // namespace
}  // namespace pbtree
