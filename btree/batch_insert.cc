// BTree::insert_batch: batched insert / merge-append. The batch is sorted, checked against
// itself and the tree, merged with the tree's entries (one scan) and the whole tree is
// rebuilt by FastLoader (btree/bulk_build.h) into pages from the tree's allocator, so every
// leaf comes out as full as a bulk build writes it; then the root moves and the old pages are
// released (btr_released flag, then the allocator: free pages at the next checkpoint). One
// tree change: nothing reaches the file before IndexFile::flush(), rollback() drops it.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>
#include <shared_mutex>
#include <stdexcept>

#include "btree/btree.h"
#include "btree/bulk_build.h"
#include "btree/radix_sort.h"
#include <pbtree/index_file.h>
#include "page/file_header.h"

namespace pbtree {

uint64_t BTree::insert_batch(EntryBatch& entries) {
  const uint32_t ps = pool_.page_size();
  if (read_only_) throw UsageError(fmt::format("{}: opened read-only", pool_.file().path()));
  auto& items = entries.items();
  if (items.empty()) return 0;
  for (const auto& it : items) {
    if (it.length >= ps / 4) {
      throw KeyError(
          fmt::format("key size {} exceeds implementation restriction: keys must be shorter "
                      "than page_size/4 = {} bytes (page size {}) (entry {})",
                      it.length, ps / 4, ps, it.tag));
    }
  }
  const bool desc = def_.descending;
  sort_entry_batch(entries, desc);
  std::lock_guard lock(write_mutex_);

  // 1. Merge with the tree's entries (one forward scan); then every pair of neighbours with
  // equal keys is checked (the tree alone has no violation, so one of them is the batch's).
  struct Merged {
    uint64_t offset;
    uint64_t recno;
    uint64_t tag;  // the batch's tag, kFromTree for a tree entry
    uint32_t length;
  };
  constexpr uint64_t kFromTree = UINT64_MAX;
  std::vector<uint8_t> arena;
  std::vector<Merged> merged;
  merged.reserve(items.size());
  auto push = [&](std::span<const uint8_t> key, uint64_t recno, uint64_t tag) {
    merged.push_back(Merged{arena.size(), recno, tag, static_cast<uint32_t>(key.size())});
    arena.insert(arena.end(), key.begin(), key.end());
  };
  auto key_of = [&](const Merged& m) {
    return std::span<const uint8_t>(arena.data() + m.offset, m.length);
  };
  size_t next = 0;
  for (Cursor c = scan(); c.valid(); c.next()) {
    std::span<const uint8_t> key = c.key();
    const uint64_t recno = c.record_number();
    for (; next < items.size(); ++next) {
      const auto& it = items[next];
      const int cmp = compare_keys(entries.key(it), key, desc);
      if (cmp > 0 || (cmp == 0 && it.recno > recno)) break;
      push(entries.key(it), it.recno, it.tag);
    }
    push(key, recno, kFromTree);
  }
  for (; next < items.size(); ++next) push(entries.key(items[next]), items[next].recno, items[next].tag);
  for (size_t i = 1; i < merged.size(); ++i) {
    const Merged& a = merged[i - 1];
    const Merged& b = merged[i];
    if (compare_keys(key_of(a), key_of(b), desc) != 0) continue;
    const uint64_t tag = a.tag != kFromTree ? (b.tag != kFromTree ? b.tag : a.tag) : b.tag;
    if (a.recno == b.recno) {
      const std::string value = key_value_text(def_, key_of(b));
      throw DuplicateKeyError(fmt::format("index {}: entry ({}, {}) already exists (entry {})",
                                          def_.name, value, b.recno, tag),
                              def_.name, value, b.recno, 0, tag);
    }
    if (def_.unique && !is_null_key(key_of(b))) {
      const std::string value = key_value_text(def_, key_of(b));
      const uint64_t existing = a.tag == kFromTree ? a.recno : b.recno;
      throw DuplicateKeyError(
          fmt::format("unique index {}: value {} already exists (record {}) (entry {})", def_.name,
                      value, existing, tag),
          def_.name, value, existing, 0, tag);
    }
  }

  // 2. The old tree's pages, level by level along the sibling chains.
  std::vector<uint32_t> old_pages;
  for (uint32_t first = root(); first != 0;) {
    uint32_t child = 0;
    for (uint32_t p = first; p != 0;) {
      PageRef ref = pool_.pin(p, static_cast<uint8_t>(PageType::Btree));
      std::shared_lock latch(ref.latch());
      BtreeHeader h = read_btree_header(ref.data());
      if (p == first && h.level > 0) child = decode_page(ref.data(), ps).entries.at(0).page_number;
      old_pages.push_back(p);
      p = h.sibling;
    }
    first = child;
  }

  // 3. The new tree, full, from the allocator's pages.
  FastLoader::Options opt;
  opt.page_size = ps;
  opt.jump_interval = jump_interval_;
  opt.index_id = index_id_;
  opt.layout = def_.layout;
  opt.descending = desc;
  opt.allocate = [this] { return allocator_.allocate(); };
  FastLoader loader(opt, [this, ps](uint32_t page_no, uint8_t* page) {
    PageRef ref = pool_.create(page_no);
    std::unique_lock latch(ref.latch());
    std::memcpy(ref.data(), page, ps);
    ref.mark_dirty();
  });
  for (const Merged& m : merged) loader.add(key_of(m), m.recno);
  const uint32_t new_root = loader.finish();

  // 4. The root moves; the old pages leave the tree.
  root_.store(new_root, std::memory_order_release);
  if (on_root_change_) on_root_change_(new_root);
  for (uint32_t p : old_pages) {
    PageRef ref = pool_.pin(p);
    std::unique_lock latch(ref.latch());
    MutableBtreePage(ref.data()).mark_released();
    ref.mark_dirty();
  }
  for (uint32_t p : old_pages) allocator_.release(p);
  return items.size();
}

}  // namespace pbtree
