// gstat's index statistics (src/utilities/gstat/dba.epp analyze_index, Firebird 3.0 .. 5.0;
// analyze_index in Firebird v3.0.11 src/utilities/gstat/dba.epp) computed over a B-tree of pbtree
// pages, plus pbtree's own figures (pages on every level, bytes per entry, mean leaf fill).
#pragma once

#include <pbtree/stats.h>

#include <cstdint>
#include <functional>

namespace pbtree {

/// Reads page `page_no` (page_size bytes) into `out`, checking checksum, self number and that
/// it is a B-tree page; throws CorruptError/IoError.
using BtreePageReader = std::function<void(uint32_t page_no, uint8_t* out)>;

/// Data-page capacity gstat's clustering factor assumes: floor((page_size - 28) / 17) records
/// (480 for 8 KiB pages).
uint32_t max_records_per_data_page(uint32_t page_size);

/// gstat's packed key size (analyze_index, dba.epp): flag byte, prefix byte(s) if
/// prefix > 0, length byte(s) if length > 1, data.
inline uint64_t packed_size(uint32_t prefix, uint32_t length) {
  const uint64_t p = prefix == 0 ? 0 : (prefix <= 127 ? 1 : 2);
  const uint64_t l = length <= 1 ? 0 : (length <= 127 ? 1 : 2);
  return 1 + p + l + length;
}

/// Walks the tree under `root_page`: descends along first nodes, follows right siblings on
/// every level (counting pages), and measures the leaf level as gstat does. Pages must lie in
/// [2, page_count); each page is visited once (a sibling loop, a wrong level, a bad left
/// sibling pointer or a child outside the file raise CorruptError "page N (b-tree): ...").
IndexStats analyze_btree(const BtreePageReader& read, uint32_t root_page, uint32_t page_size,
                         uint32_t page_count);

}  // namespace pbtree
