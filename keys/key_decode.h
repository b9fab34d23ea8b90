// Decoding a stored normalized key back to the value it was built from (the inverse of
// build_key in keys/key.h), for tools that re-encode an index's keys in another key format
// (btree/what_if.h). Key formats: docs/FORMAT.md "Keys", firebird-format.md §1.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "keys/key.h"

namespace pbtree {

/// Decodes the single-segment key `key` of `type` in `format` (descending as stored) into
/// the Value build_key() turns back into exactly these bytes: NULL for the NULL key (empty
/// ascending, FF descending), Exact (coefficient, scale = the column scale) for smallint,
/// integer, bigint, int128 and numeric, Double for double, Text for varchar. A Text value
/// points into `storage`, which must outlive it (other kinds leave `storage` unspecified).
/// Throws KeyError on bytes that no value of `type` encodes to (a corrupt key).
Value key_to_value(const TypeSpec& type, KeyFormat format, bool descending,
                   std::span<const uint8_t> key, std::string& storage);

}  // namespace pbtree
