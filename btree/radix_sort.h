// The sort of bulk builds and batched inserts, made for normalized keys: EntryBatch items
// into index order (key as compare_index_keys orders it, then record number, then the
// caller's tag) by a radix sort of fixed-width records.
#pragma once

#include <pbtree/index_file.h>

namespace pbtree {

/// Sorts entries.items() by (key in index order, record number, tag); `descending` is the
/// index's flag (on a common prefix a shorter key then sorts after its extensions). Keys are
/// not checked. The order is exact for any key bytes (it sorts the normalized keys, never
/// the values, so formats that map different values to one key need nothing special).
///
/// Method: each item becomes a 16-byte record (the next 8 key bytes as a big-endian word,
/// padded with 00 ascending / FF descending, and the item's index). An LSD radix sort (8-bit
/// digits) runs over the bytes of the word that vary in the range; each run of equal words
/// whose keys go on past the word is sorted again on the next 8 bytes (MSD step), and runs
/// that end inside the word are ordered by (key length, record number, tag). Runs of at most
/// 48 records go to std::sort with the full comparison. With several threads (the oneTBB
/// arena's concurrency) and at least 65,536 records per thread, contiguous slices are sorted
/// so in parallel and merged pairwise by the full order; the result is the same. Finally the
/// keys are laid out in the sorted order (EntryBatch::permute).
void sort_entry_batch(EntryBatch& entries, bool descending);

}  // namespace pbtree
