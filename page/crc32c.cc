// Crc32c (page/crc32c.h): Boost.CRC's table-driven CRC-32C, out of line so that the fuzz build
// can compile this file alone without instrumentation.
#include "page/crc32c.h"

namespace pbtree {

void Crc32c::process_bytes(const void* data, size_t size) { crc_.process_bytes(data, size); }

uint32_t Crc32c::checksum() const { return crc_.checksum(); }

}  // namespace pbtree
