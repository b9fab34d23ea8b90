// FastLoader::build (btree/bulk_build.h): the leaf level of a bulk build in three steps, with
// the same pages as FastLoader::add + finish at any thread count. Per block of entries:
// (1) node sizes in parallel (prefix against the previous key, coded sizes per layout);
// (2) one serial pass over those sizes that replays add_node's leaf filling (fit test,
// END_BUCKET rewrite, jump nodes) to find the page breaks, allocating page numbers and
// sending each break's separator to the upper levels (FastLoader::add_node, as add() does);
// (3) the finished leaf pages encoded in parallel by the same replay writing bytes, then
// handed to the sink in page order from the calling thread. Block boundaries and thread
// count never change a byte: every decision is a function of the sorted entries alone.
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "btree/bulk_build.h"
#include "util/bytes.h"

namespace pbtree {

namespace {

constexpr uint32_t kLeafReserve = 6;  // BTN_LEAF_SIZE, as in bulk_build.cc
constexpr size_t kBlock = size_t{1} << 16;  // entries per block (never changes the output)

// Sizes of leaf node i, computed in step 1: prefix against key i-1; `fit` the fit test's
// size (compact: as END_BUCKET, explicit; Firebird: the node); `coded` the node coded against
// node i-1 (node 0: against an empty key, record number 0, as add() does); `expl` the
// explicit form (a compact jump target); `end` the END_BUCKET rewrite with this prefix.
struct NodeSizes {
  uint16_t prefix, fit, coded, expl, end;
};

struct LeafInput {
  const EntryBatch& batch;
  const std::vector<EntryBatch::Item>& items;
  std::span<const uint8_t> key(size_t i) const { return batch.key(items[i]); }
  uint64_t recno(size_t i) const { return items[i].recno; }
};

NodeSizes node_sizes(const LeafInput& in, NodeLayout layout, bool explicit_targets, size_t i) {
  const std::span<const uint8_t> key = in.key(i);
  NodeContext ctx;
  uint32_t prefix = 0;
  if (i > 0) {
    const std::span<const uint8_t> prev = in.key(i - 1);
    prefix = static_cast<uint32_t>(common_prefix(prev, key));
    ctx = NodeContext{static_cast<uint32_t>(prev.size()), in.recno(i - 1)};
  }
  NodeFields node{NodeKind::Entry, in.recno(i), 0, prefix, key.subspan(prefix)};
  NodeFields end = node;
  end.kind = NodeKind::EndBucket;
  NodeSizes s;
  s.prefix = static_cast<uint16_t>(prefix);
  s.expl = static_cast<uint16_t>(node_size(layout, node, true, nullptr));
  s.coded = static_cast<uint16_t>(node_size(layout, node, true, &ctx));
  s.end = static_cast<uint16_t>(node_size(layout, end, true, nullptr));
  s.fit = explicit_targets ? s.end : s.expl;
  return s;
}

// The leaf filling of FastLoader::add_node for one page, as a replay over the sorted entries:
// kWrite codes the nodes into `page` (zeroed, page_size bytes); otherwise only lengths move,
// from the NodeSizes of step 1 (`sizes(i)`). Both take the same decisions.
template <bool kWrite, typename Sizes>
class LeafFill {
 public:
  struct Jump {
    uint32_t offset, prefix;
    std::span<const uint8_t> data;
  };

  LeafFill(const LeafInput& in, const FastLoader::Options& o, bool explicit_targets,
           const Sizes& sizes, uint8_t* page)
      : in_(in), o_(o), explicit_(explicit_targets), sizes_(sizes), page_(page),
        limit_(o.page_size - kLeafReserve) {}

  // Starts a page whose first node is entry s: the tree's first entry (placed as add()
  // places it: against an empty key) or the node a break moved to the new page (full key,
  // explicit).
  void start(size_t s, bool first_page) {
    length_ = kBtreeHeaderSize;
    prefix_total_ = 0;
    jumps_.clear();
    jump_count_ = 0;
    jump_key_ = {};
    jump_total_ = 0;
    new_area_ = kBtreeHeaderSize + o_.jump_interval;
    last_offset_ = length_;
    last_prefix_ = 0;
    last_ = s;
    if (first_page) {
      // add_node for the first entry: prefix 0, coded against {0, 0}; no jump node.
      if constexpr (kWrite) {
        const NodeContext ctx{0, 0};
        NodeFields node{NodeKind::Entry, in_.recno(s), 0, 0, in_.key(s)};
        length_ += encode_node(o_.layout, node, true, &ctx, page_ + length_);
      } else {
        length_ += sizes_(s).coded;
      }
    } else {
      NodeFields first{NodeKind::Entry, in_.recno(s), 0, 0, in_.key(s)};
      length_ += kWrite ? encode_node(o_.layout, first, true, nullptr, page_ + length_)
                        : node_size(o_.layout, first, true, nullptr);
    }
    nodes_ = 1;
  }

  // add_node's fit test for entry i after the last node.
  bool fits(size_t i) const { return length_ + jump_total_ + fit_size(i) <= limit_; }

  // Places entry i after the last node; `after_break`: it is the node that caused the break
  // (add_node then skips the compact jump-target choice).
  void place(size_t i, bool after_break) {
    const std::span<const uint8_t> key = in_.key(i);
    const uint32_t prefix = prefix_of(i);
    const std::span<const uint8_t> jump_key = key.first(prefix);
    bool target = false;
    uint32_t jp = 0, js = 0;
    const uint32_t fit = fit_size(i);
    if (!after_break && explicit_ && o_.jump_interval != 0 && nodes_ > 0 &&
        length_ > new_area_) {
      jp = static_cast<uint32_t>(common_prefix(jump_key_, jump_key));
      js = jump_node_size(jp, prefix - jp);
      target = length_ + jump_total_ + fit + js <= limit_;
    }
    last_offset_ = length_;
    if constexpr (kWrite) {
      const NodeContext ctx{static_cast<uint32_t>(in_.key(last_).size()), in_.recno(last_)};
      NodeFields node{NodeKind::Entry, in_.recno(i), 0, prefix, key.subspan(prefix)};
      length_ += encode_node(o_.layout, node, true, target ? nullptr : &ctx, page_ + length_);
    } else {
      length_ += target ? sizes_(i).expl : sizes_(i).coded;
    }
    prefix_total_ += prefix;
    last_prefix_ = prefix;
    last_ = i;
    ++nodes_;
    if (!explicit_ && o_.jump_interval != 0 && new_area_ < length_ &&
        last_offset_ > kBtreeHeaderSize) {
      jp = static_cast<uint32_t>(common_prefix(jump_key_, jump_key));
      js = jump_node_size(jp, prefix - jp);
      target = length_ + jump_total_ + js < limit_;
    }
    if (target) {
      if constexpr (kWrite) jumps_.push_back(Jump{last_offset_, jp, jump_key.subspan(jp)});
      ++jump_count_;
      jump_key_ = jump_key;
      new_area_ += o_.jump_interval;
      if (explicit_) {
        while (new_area_ < last_offset_) new_area_ += o_.jump_interval;
      }
      jump_total_ += js;
    }
  }

  // The last node rewritten as END_BUCKET (a break follows).
  void end_bucket() {
    if constexpr (kWrite) {
      const std::span<const uint8_t> key = in_.key(last_);
      NodeFields end{NodeKind::EndBucket, in_.recno(last_), 0, last_prefix_,
                     key.subspan(last_prefix_)};
      length_ = last_offset_ + encode_node(o_.layout, end, true, nullptr, page_ + last_offset_);
    } else if (nodes_ > 1 && last_prefix_ == sizes_(last_).prefix) {
      length_ = last_offset_ + sizes_(last_).end;
    } else {
      const std::span<const uint8_t> key = in_.key(last_);
      NodeFields end{NodeKind::EndBucket, in_.recno(last_), 0, last_prefix_,
                     key.subspan(last_prefix_)};
      length_ = last_offset_ + node_size(o_.layout, end, true, nullptr);
    }
  }

  // END_LEVEL after the last node (the level's last page), then the jump table and header.
  void close(bool end_level, uint32_t sibling, uint32_t left_sibling) {
    static_assert(kWrite);
    if (end_level) {
      const NodeFields end{NodeKind::EndLevel, 0, 0, 0, {}};
      length_ += encode_node(o_.layout, end, false, nullptr, page_ + length_);
    }
    if (jump_total_ != 0) {
      if (jumps_.size() > 255) throw std::logic_error("more than 255 jump nodes on a page");
      std::memmove(page_ + kBtreeHeaderSize + jump_total_, page_ + kBtreeHeaderSize,
                   length_ - kBtreeHeaderSize);
      uint32_t pos = kBtreeHeaderSize;
      for (const Jump& j : jumps_) {
        pos += encode_jump_node(j.prefix, j.data, static_cast<uint16_t>(j.offset + jump_total_),
                                page_ + pos);
      }
    }
    BtreeHeader h;
    h.sibling = sibling;
    h.left_sibling = left_sibling;
    h.prefix_total = prefix_total_;
    h.length = static_cast<uint16_t>(length_ + jump_total_);
    h.index_id = o_.index_id;
    h.level = 0;
    h.jump_interval = o_.jump_interval;
    h.jump_size = static_cast<uint16_t>(jump_total_);
    h.jump_count = static_cast<uint8_t>(jumps_.size());
    h.layout = o_.layout;
    write_btree_header(page_, h);
  }

  size_t nodes() const { return nodes_; }

 private:
  uint32_t prefix_of(size_t i) const {
    if constexpr (kWrite) {
      return i == 0 ? 0 : static_cast<uint32_t>(common_prefix(in_.key(i - 1), in_.key(i)));
    } else {
      return sizes_(i).prefix;
    }
  }
  uint32_t fit_size(size_t i) const {
    if constexpr (kWrite) {
      const uint32_t prefix = prefix_of(i);
      const std::span<const uint8_t> key = in_.key(i);
      NodeFields node{explicit_ ? NodeKind::EndBucket : NodeKind::Entry, in_.recno(i), 0,
                      prefix, key.subspan(prefix)};
      return node_size(o_.layout, node, true, nullptr);
    } else {
      return sizes_(i).fit;
    }
  }

  const LeafInput& in_;
  const FastLoader::Options& o_;
  const bool explicit_;
  const Sizes& sizes_;
  uint8_t* page_;
  const uint32_t limit_;
  uint32_t length_ = 0, prefix_total_ = 0, jump_total_ = 0, new_area_ = 0, last_offset_ = 0,
           last_prefix_ = 0;
  size_t nodes_ = 0, jump_count_ = 0, last_ = 0;
  std::span<const uint8_t> jump_key_;
  std::vector<Jump> jumps_;
};

struct NoSizes {
  const NodeSizes& operator()(size_t) const { throw std::logic_error("no sizes"); }
};

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
  if (levels_.size() != 1 || levels_[0].nodes != 0) {
    throw std::logic_error("FastLoader::build on a loader that has entries");
  }
  const auto& items = sorted.items();
  const size_t n = items.size();
  if (n == 0) return finish();
  const LeafInput in{sorted, items};
  const bool expl = policy_.explicit_targets;
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
  std::vector<NodeSizes> sizes(kBlock + 1);
  size_t base = 0;
  auto size_of = [&](size_t i) -> const NodeSizes& { return sizes[i + 1 - base]; };
  LeafFill<false, decltype(size_of)> fill(in, options_, expl, size_of, nullptr);
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
        NoSizes none;
        LeafFill<true, NoSizes> w(in, options_, expl, none, buf.data());
        w.start(p.start, p.start == 0);
        for (size_t i = p.start + 1; i < p.end; ++i) w.place(i, i == p.start + 1 && p.start != 0);
        if (!p.last) {
          if (w.fits(p.end)) throw std::logic_error("bulk build: leaf page break mismatch");
          w.end_bucket();
        }
        w.close(p.last, p.sibling, p.left);
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
                            sizes[i + 1 - base] = node_sizes(in, options_.layout, expl, i);
                          }
                        });
    });
    size_t i = base;
    if (base == 0) {
      fill.start(0, true);
      i = 1;
    }
    for (; i < end; ++i) {
      if (fill.fits(i)) {
        fill.place(i, false);
        continue;
      }
      // Break: entry i - 1 (the last node) starts the next page, its key goes up.
      const size_t nodes = fill.nodes();
      fill.end_bucket();
      std::span<const uint8_t> sep = in.key(i - 1);
      uint64_t sep_recno = in.recno(i - 1);
      if (truncate && nodes >= 2) {
        const uint32_t cut = size_of(i - 1).prefix + 1u;
        if (cut < sep.size()) {
          sep = sep.first(cut);
          sep_recno = 0;
        }
      }
      current.end = i;
      const uint32_t new_page = leaf_break(sep, sep_recno);
      current.sibling = new_page;
      pages.push_back(current);
      current = LeafPage{i - 1, 0, new_page, current.page_no, 0, false};
      fill.start(i - 1, false);
      fill.place(i, true);
    }
    if (pages.size() >= 64) write_pages(pages.size());
  }
  current.end = n;
  current.last = true;
  pages.push_back(current);
  write_pages(pages.size());

  // The upper levels as finish() closes them.
  for (uint32_t l = 1; l < levels_.size(); ++l) {
    Level& level = levels_[l];
    const NodeFields end_level{NodeKind::EndLevel, 0, 0, 0, {}};
    level.length +=
        encode_node(options_.layout, end_level, false, nullptr, level.page.data() + level.length);
    close_page(level, l, 0);
  }
  return levels_.back().page_no;
}

}  // namespace pbtree
