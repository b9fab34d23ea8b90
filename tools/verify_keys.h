// The key check of `pbtree verify`: every leaf entry's key decoded under its index's type and
// key format (key_to_value, <pbtree/keys.h>) and re-encoded to the same bytes, so that "OK" means
// every command (scan, find, stat --what-if, load --append) can read every entry; and the index
// slot's type itself valid (a varchar length in 1..32765, a numeric precision and scale in
// range).
#pragma once

#include <pbtree/index_file.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pbtree::tools {

/// Problems with the type of index `info` as its slot declares it ("index V: slot type
/// varchar(0): varchar length 0 out of range 1..32765 in 'varchar(0)'"); empty if valid.
std::vector<std::string> check_slot_type(const IndexInfo& info);

/// Decodes every entry of leaf `page` (page_size bytes, already read and checked) of index
/// `info` in file `db`; appends one violation per key no value of the index's type encodes to:
/// "<db>: index I: page 12, node at offset 57: corrupt rescaled-double key for bigint: ...".
/// Stops at the first malformed node (the structural checks report those).
void check_leaf_keys(const std::string& db, const IndexInfo& info, const uint8_t* page,
                     uint32_t page_size, std::vector<std::string>& violations);

}  // namespace pbtree::tools
