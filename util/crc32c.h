// The one CRC-32C of pbtree (Castagnoli, reflected, init and xorout FFFFFFFF): Boost.CRC's
// crc_optimal under one name, for page checksums (page/page_header.h) and WAL frames
// (page/wal.h). Depends on nothing of pbtree.
#pragma once

#include <boost/crc.hpp>
#include <cstddef>
#include <cstdint>

namespace pbtree {

/// Incremental CRC-32C: process_bytes() over any number of byte ranges, then checksum().
using Crc32c = boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true>;

/// CRC-32C of one byte range.
inline uint32_t crc32c(const void* data, size_t length) {
  Crc32c crc;
  crc.process_bytes(data, length);
  return crc.checksum();
}

}  // namespace pbtree
