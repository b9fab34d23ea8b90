// Feeding a bulk build from entries that arrive already in index order (IndexFile::
// bulk_load_sorted): each entry is checked as bulk_load checks a whole batch (key length,
// duplicates, unique rule) and its order against the previous one, then handed to the
// FastLoader.
#pragma once

#include <pbtree/index_file.h>

#include <cstddef>
#include <cstdint>

#include "btree/bulk_build.h"

namespace pbtree {

/// Reads `source` to its end into `loader`. `def` is the resolved definition, `max_key`
/// definition_max_key_length(def), `page_size` bytes. Throws, as IndexFile::bulk_load does:
/// KeyError "<why> (entry <tag>)" for a key of page_size / 4 bytes or more or longer than any
/// key of def.type in def.format; DuplicateKeyError for the first adjacent pair with equal
/// (key, record number), or equal keys in a unique index (not exempt: key_exempt_from_unique),
/// with the same message and tags as bulk_load; UsageError "bulk load: entries out of index
/// order (entry <tag>)"; whatever the source or the loader throws.
void feed_sorted_entries(const IndexDefinition& def, size_t max_key, uint32_t page_size,
                         SortedEntrySource& source, FastLoader& loader);

}  // namespace pbtree
