// Crc32c (util/crc32c.h): ISA-L's crc32_iscsi (hardware CRC-32C with run-time dispatch), out
// of line so that the fuzz build can compile this file alone without instrumentation.
#include "util/crc32c.h"

#include <isa-l/crc.h>

#include <climits>

namespace pbtree {

void Crc32c::process_bytes(const void* data, size_t size) {
  // crc32_iscsi takes an int length and a non-const pointer (it only reads): feed ranges
  // beyond INT_MAX bytes in pieces.
  auto* p = static_cast<unsigned char*>(const_cast<void*>(data));
  while (size > 0) {
    const size_t n = size < static_cast<size_t>(INT_MAX) ? size : static_cast<size_t>(INT_MAX);
    reg_ = crc32_iscsi(p, static_cast<int>(n), reg_);
    p += n;
    size -= n;
  }
}

}  // namespace pbtree
