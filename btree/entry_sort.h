// The sort of bulk builds and batched inserts: EntryBatch items into index order (key as
// compare_index_keys orders it, then record number, then the caller's tag).
#pragma once

#include "btree/index_file.h"

namespace pbtree {

/// Sorts entries.items() by (key in index order, record number, tag); `descending` is the
/// index's flag (a shorter key then sorts after its extensions). Keys are not checked.
void sort_entry_batch(EntryBatch& entries, bool descending);

}  // namespace pbtree
