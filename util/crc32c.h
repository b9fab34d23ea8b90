// The one CRC-32C of pbtree (Castagnoli, reflected, init and xorout FFFFFFFF), for page
// checksums (page/page_header.h) and WAL frames (page/wal.h): Boost.CRC's crc_optimal behind a
// class defined out of line in util/crc32c.cc, which the fuzz build compiles without sanitizer
// and coverage instrumentation (CMakeLists.txt): checksums are not what is fuzzed, and
// instrumented byte-at-a-time table lookups made them the fuzzers' main cost. Depends on
// nothing of pbtree.
#pragma once

#include <boost/crc.hpp>
#include <cstddef>
#include <cstdint>

namespace pbtree {

/// Incremental CRC-32C: polynomial 0x1EDC6F41, reflected in and out, initial value and final
/// XOR 0xFFFFFFFF (RFC 3720 appendix B.4; boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF,
/// 0xFFFFFFFF, true, true>). Feed bytes with process_bytes(), read with checksum().
class Crc32c {
 public:
  /// Adds `size` bytes at `data`.
  void process_bytes(const void* data, size_t size);
  /// The CRC of all bytes added so far (the object may go on taking bytes).
  uint32_t checksum() const;

 private:
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc_;
};

/// CRC-32C of one byte range.
inline uint32_t crc32c(const void* data, size_t length) {
  Crc32c crc;
  crc.process_bytes(data, length);
  return crc.checksum();
}

}  // namespace pbtree
