// Sorting a bulk load's entries into index order (parallel, oneTBB): by key (compare_keys),
// record number, then the caller's tag.
#pragma once

#include <pbtree/index_file.h>

namespace pbtree {

/// Sorts `entries` by (key in index order, record number, tag).
void sort_entries(EntryBatch& entries, bool descending);

}  // namespace pbtree
