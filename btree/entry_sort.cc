// sort_entry_batch (btree/entry_sort.h).
#include "btree/entry_sort.h"

#include <algorithm>

namespace pbtree {

void sort_entry_batch(EntryBatch& entries, bool descending) {
  auto& items = entries.items();
  std::sort(items.begin(), items.end(), [&](const EntryBatch::Item& a, const EntryBatch::Item& b) {
    int c = compare_index_keys(entries.key(a), entries.key(b), descending);
    if (c != 0) return c < 0;
    if (a.recno != b.recno) return a.recno < b.recno;
    return a.tag < b.tag;
  });
}

}  // namespace pbtree
