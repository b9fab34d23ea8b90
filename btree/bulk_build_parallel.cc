// FastLoader::build (btree/bulk_build.h): the leaf level of a bulk build in three steps, with
// the same pages as FastLoader::add + finish at any thread count. Per block of entries:
// (1) node sizes in parallel (PageBuilder::sizes: prefix against the previous key, coded sizes
// per layout); (2) one serial pass over those sizes through a measuring PageBuilder (the calls
// add_node makes on a leaf: fit test, END_BUCKET rewrite, jump nodes) to find the page breaks,
// allocating page numbers and sending each break's separator to the upper levels
// (FastLoader::add_node, as add() does); (3) the finished leaf pages written in parallel by the
// same PageBuilder calls with a page buffer, then handed to the sink in page order from the
// calling thread. Block boundaries and thread
// count never change a byte: every decision is a function of the sorted entries alone.
#include <fmt/format.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "btree/bulk_build.h"
#include "util/bytes.h"

namespace pbtree {

namespace {

constexpr size_t kBlock = size_t{1} << 16;  // entries per block (never changes the output)

struct LeafInput {
  const EntryBatch& batch;
  const std::vector<EntryBatch::Item>& items;
  std::span<const uint8_t> key(size_t i) const { return batch.key(items[i]); }
  uint64_t recno(size_t i) const { return items[i].recno; }
};

// Step 1: the sizes of leaf node i, placed after node i - 1 (node 0: after an empty key and
// record number 0, as add() places it).
PageBuilder::Sizes node_sizes(const LeafInput& in, NodeLayout layout, size_t i) {
  if (i == 0) return PageBuilder::sizes(layout, true, {}, 0, in.key(0), in.recno(0), 0);
  return PageBuilder::sizes(layout, true, in.key(i - 1), in.recno(i - 1), in.key(i), in.recno(i),
                            0);
}

// A leaf page found by step 2: entries [start, end) (end: the entry whose node caused the
// break, moved to the next page with the last one), its number and its left sibling.
struct LeafPage {
  size_t start = 0, end = 0;
  uint32_t page_no = 0, left = 0, sibling = 0;
  bool last = false;
};

}  // namespace

uint32_t FastLoader::leaf_break(std::span<const uint8_t> separator, uint64_t recno) {
  Level& leaf = levels_[0];
  const uint32_t old_page = leaf.page_no;
  const uint32_t new_page = take_page();
  leaf.page_no = new_page;
  if (levels_.size() == 1) {
    Level& up = levels_.emplace_back();
    up.page_no = take_page();
    up.undecided = policy_.nonleaf_free_divisor != 0;
    start_level(up, old_page);
  }
  add_node(1, separator, recno, new_page);
  return new_page;
}

uint32_t FastLoader::build(const EntryBatch& sorted) {
  if (levels_.size() != 1 || levels_[0].builder.nodes() != 0) {
    throw std::logic_error("FastLoader::build on a loader that has entries");
  }
  const auto& items = sorted.items();
  const size_t n = items.size();
  if (n == 0) return finish();
  const LeafInput in{sorted, items};
  const bool truncate = policy_.truncate_separators && !options_.descending;
  // Options::threads, else the machine's threads as far as a tbb::global_control allows.
  const uint32_t threads =
      options_.threads != 0
          ? options_.threads
          : std::min<uint32_t>(std::max(1u, std::thread::hardware_concurrency()),
                               static_cast<uint32_t>(tbb::global_control::active_value(
                                   tbb::global_control::max_allowed_parallelism)));
  if (threads <= 1) {
    // One thread: add() itself (no second pass over the entries).
    for (const auto& it : items) add(sorted.key(it), it.recno);
    return finish();
  }
  tbb::task_arena arena(static_cast<int>(threads));

  // Step 1's sizes for entries [base - 1, base + kBlock): slot 0 holds the entry before the
  // block (the END_BUCKET rewrite may need it).
  std::vector<PageBuilder::Sizes> sizes(kBlock + 1);
  size_t base = 0;
  auto size_of = [&](size_t i) -> const PageBuilder::Sizes& { return sizes[i + 1 - base]; };
  const uint32_t limit = fill_limit(options_.layout, options_.page_size, true, false);
  PageBuilder fill(options_.page_size, options_.jump_interval, options_.layout, true);
  fill.set_limit(limit);
  std::vector<LeafPage> pages;  // found, not yet written
  LeafPage current{0, 0, levels_[0].page_no, 0, 0, false};
  std::vector<std::vector<uint8_t>> buffers;

  auto write_pages = [&](size_t count) {
    if (buffers.size() < count) buffers.resize(count);
    arena.execute([&] {
      tbb::parallel_for(size_t{0}, count, [&](size_t k) {
        const LeafPage& p = pages[k];
        std::vector<uint8_t>& buf = buffers[k];
        buf.assign(options_.page_size, 0);
        PageBuilder w(options_.page_size, options_.jump_interval, options_.layout, true);
        w.set_limit(limit);
        w.start(buf.data());
        w.place_first(in.key(p.start), in.recno(p.start), 0);
        for (size_t i = p.start + 1; i < p.end; ++i) {
          const uint32_t prefix = w.prefix(in.key(i));
          w.place(in.key(i), in.recno(i), 0, prefix, w.fit_size(in.key(i), in.recno(i), 0, prefix),
                  !(i == p.start + 1 && p.start != 0));
        }
        if (!p.last) {
          const uint32_t prefix = w.prefix(in.key(p.end));
          if (w.fits(w.fit_size(in.key(p.end), in.recno(p.end), 0, prefix))) {
            throw std::logic_error("bulk build: leaf page break mismatch");
          }
          w.end_bucket();
        } else {
          w.append_end_level();
        }
        BtreeHeader h;
        h.sibling = p.sibling;
        h.left_sibling = p.left;
        h.index_id = options_.index_id;
        h.level = 0;
        w.close(buf.data(), h);
        if (options_.prepare) options_.prepare(p.page_no, buf.data());
      });
    });
    for (size_t k = 0; k < count; ++k) sink_(pages[k].page_no, buffers[k].data());
    pages.erase(pages.begin(), pages.begin() + static_cast<std::ptrdiff_t>(count));
  };

  for (base = 0; base < n; base += kBlock) {
    const size_t end = std::min(n, base + kBlock);
    if (base > 0) sizes[0] = sizes[kBlock];
    arena.execute([&] {
      tbb::parallel_for(tbb::blocked_range<size_t>(base, end, 4096),
                        [&](const tbb::blocked_range<size_t>& r) {
                          for (size_t i = r.begin(); i < r.end(); ++i) {
                            sizes[i + 1 - base] = node_sizes(in, options_.layout, i);
                          }
                        });
    });
    size_t i = base;
    if (base == 0) {
      fill.start(nullptr);
      fill.place_first(in.key(0), in.recno(0), 0, &size_of(0));
      i = 1;
    }
    for (; i < end; ++i) {
      const PageBuilder::Sizes& si = size_of(i);
      if (fill.fits(si.fit)) {
        fill.place(in.key(i), in.recno(i), 0, si.prefix, si.fit, true, false, &si);
        continue;
      }
      // Break: entry i - 1 (the last node) starts the next page, its key goes up.
      fill.end_bucket();
      uint64_t sep_recno = 0;
      const std::span<const uint8_t> sep = fill.separator(truncate, sep_recno);
      current.end = i;
      const uint32_t new_page = leaf_break(sep, sep_recno);
      current.sibling = new_page;
      pages.push_back(current);
      current = LeafPage{i - 1, 0, new_page, current.page_no, 0, false};
      fill.restart(nullptr);
      fill.place(in.key(i), in.recno(i), 0, si.prefix, si.fit, false, false, &si);
    }
    if (pages.size() >= 64) write_pages(pages.size());
  }
  current.end = n;
  current.last = true;
  pages.push_back(current);
  write_pages(pages.size());

  // The upper levels as finish() closes them.
  for (uint32_t l = 1; l < levels_.size(); ++l) {
    levels_[l].builder.append_end_level();
    close_page(levels_[l], l, 0);
  }
  return levels_.back().page_no;
}

}  // namespace pbtree
