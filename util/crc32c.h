// The one CRC-32C of pbtree (Castagnoli, reflected, init and xorout FFFFFFFF), for page
// checksums (page/page_header.h) and WAL frames (page/wal.h): Intel ISA-L's crc32_iscsi
// (SSE4.2 crc32 / PCLMULQDQ folding, chosen at run time) behind a class defined out of line in
// util/crc32c.cc, which the fuzz build compiles without sanitizer and coverage instrumentation
// (CMakeLists.txt): checksums are not what is fuzzed. Depends on nothing of pbtree; only
// util/crc32c.cc includes ISA-L.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pbtree {

/// Incremental CRC-32C: polynomial 0x1EDC6F41, reflected in and out, initial value and final
/// XOR 0xFFFFFFFF (RFC 3720 appendix B.4; CRC-32C of "123456789" is 0xE3069283). Feed bytes
/// with process_bytes() in pieces of any size (the result equals one call over their
/// concatenation), read with checksum(). Computed by ISA-L's crc32_iscsi (isa-l/crc.h), which
/// takes and returns the register without the initial and final XOR.
class Crc32c {
 public:
  /// Adds `size` bytes at `data` (`data` may be null when `size` is 0).
  void process_bytes(const void* data, size_t size);
  /// The CRC of all bytes added so far (the object may go on taking bytes).
  uint32_t checksum() const { return reg_ ^ 0xFFFFFFFFu; }

 private:
  uint32_t reg_ = 0xFFFFFFFFu;  // the CRC register: initial value FFFFFFFF, no final XOR yet
};

/// CRC-32C of one byte range.
inline uint32_t crc32c(const void* data, size_t length) {
  Crc32c crc;
  crc.process_bytes(data, length);
  return crc.checksum();
}

}  // namespace pbtree
