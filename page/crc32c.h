// Crc32c: the CRC-32C (Castagnoli) of page checksums and log records, computed by Boost.CRC in
// its own translation unit (page/crc32c.cc), which the fuzz build compiles without sanitizer
// and coverage instrumentation (CMakeLists.txt): checksums are not what is fuzzed, and
// instrumented byte-at-a-time table lookups made them the fuzzers' main cost.
#pragma once

#include <boost/crc.hpp>
#include <cstddef>
#include <cstdint>

namespace pbtree {

/// CRC-32C: polynomial 0x1EDC6F41, reflected in and out, initial value and final XOR
/// 0xFFFFFFFF (RFC 3720 appendix B.4; boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF,
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

}  // namespace pbtree
