// FastLoader: Firebird fast_load's page filling, node, END_BUCKET and jump-node rules
// (src/jrd/btr.cpp, Firebird 3.0 .. 5.0), one add_node for both node layouts; what differs
// per layout is the node codec and the FillPolicy.
#include "btree/bulk_build.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
#include "util/bytes.h"

namespace pbtree {

namespace {

// Room left free on a page while filling: BTN_LEAF_SIZE and BTN_PAGE_SIZE of btn.h.
constexpr uint32_t kLeafReserve = 6;
constexpr uint32_t kNonLeafReserve = 10;

}  // namespace

const FastLoader::FillPolicy& FastLoader::fill_policy(NodeLayout layout) {
  // Firebird: pbtree's non-leaf free-space rule (Firebird fills non-leaf pages to
  // page_size - 10 as well): a non-leaf page that is not its level's only page leaves
  // page_size / 8 more bytes free, so the first leaf splits after a bulk build post their
  // separators without splitting the parent (a checkpoint after one insert writes the leaf,
  // its new sibling, the old right sibling, the parent and the header). The compact layout
  // does not have this rule (yet): its files stay as they are.
  static constexpr FillPolicy kFirebird{8, false, false};
  static constexpr FillPolicy kCompact{0, true, true};
  return layout == NodeLayout::Compact ? kCompact : kFirebird;
}

FastLoader::FastLoader(const Options& options, PageSink sink)
    : options_(options),
      policy_(fill_policy(options.layout)),
      sink_(std::move(sink)),
      next_page_(options.first_page) {
  Level& leaf = levels_.emplace_back();
  leaf.page_no = take_page();
  start_page(leaf, 0);
}

void FastLoader::start_page(Level& level, uint32_t left_sibling) {
  level.page.assign(options_.page_size, 0);
  level.left_sibling = left_sibling;
  level.length = kBtreeHeaderSize;
  level.prefix_total = 0;
  level.jumps.clear();
  level.jump_key.clear();
  level.jump_total = 0;
  level.new_area = kBtreeHeaderSize + options_.jump_interval;
  level.nodes = 0;
}

void FastLoader::start_level(Level& level, uint32_t first_child) {
  start_page(level, 0);
  // Degenerate first node of the level: every key below the next separator.
  NodeFields degenerate{NodeKind::Entry, 0, first_child, 0, {}};
  level.last_offset = level.length;
  level.length +=
      encode_node(options_.layout, degenerate, false, nullptr, level.page.data() + level.length);
  level.last_recno = 0;
  level.last_child = first_child;
  level.last_prefix = 0;
  level.key.clear();
  level.prev_key.clear();
  level.nodes = 1;
  level.new_area = level.length + options_.jump_interval;
  if (level.undecided) level.pending.assign(1, PendingNode{{}, 0, first_child});
}

void FastLoader::close_page(Level& level, uint32_t level_no, uint32_t sibling) {
  uint8_t* page = level.page.data();
  if (level.jump_total != 0) {
    if (level.jumps.size() > 255) throw std::logic_error("more than 255 jump nodes on a page");
    std::memmove(page + kBtreeHeaderSize + level.jump_total, page + kBtreeHeaderSize,
                 level.length - kBtreeHeaderSize);
    uint32_t pos = kBtreeHeaderSize;
    for (const Jump& j : level.jumps) {
      pos += encode_jump_node(j.prefix, j.data, static_cast<uint16_t>(j.offset + level.jump_total),
                              page + pos);
    }
  }
  BtreeHeader h;
  h.sibling = sibling;
  h.left_sibling = level.left_sibling;
  h.prefix_total = level.prefix_total;
  h.length = static_cast<uint16_t>(level.length + level.jump_total);
  h.index_id = options_.index_id;
  h.level = static_cast<uint8_t>(level_no);
  h.jump_interval = options_.jump_interval;
  h.jump_size = static_cast<uint16_t>(level.jump_total);
  h.jump_count = static_cast<uint8_t>(level.jumps.size());
  h.layout = options_.layout;
  write_btree_header(page, h);
  if (options_.prepare) options_.prepare(level.page_no, page);
  sink_(level.page_no, page);
}

void FastLoader::add(std::span<const uint8_t> key, uint64_t recno) {
  add_node(0, key, recno, 0);
}

void FastLoader::add_node(uint32_t level_no, std::span<const uint8_t> key, uint64_t recno,
                          uint32_t child) {
  Level& level = levels_[level_no];
  const bool leaf = level_no == 0;
  const NodeLayout layout = options_.layout;
  uint32_t limit = options_.page_size - (leaf ? kLeafReserve : kNonLeafReserve);
  if (!leaf && policy_.nonleaf_free_divisor != 0 && !level.undecided) {
    limit -= options_.page_size / policy_.nonleaf_free_divisor;
  }
  const uint32_t prefix = static_cast<uint32_t>(common_prefix(level.key, key));
  NodeFields node{NodeKind::Entry, recno, child, prefix, key.subspan(prefix)};
  // Room the node needs for the page to still close: on compact pages the END_BUCKET copy it
  // may become (explicit form), on Firebird pages its own size.
  uint32_t fit_size;
  if (policy_.explicit_targets) {
    NodeFields as_end = node;
    as_end.kind = NodeKind::EndBucket;
    fit_size = node_size(layout, as_end, leaf, nullptr);
  } else {
    fit_size = node_size(layout, node, leaf, nullptr);
  }

  if (level.undecided) {
    if (level.length + level.jump_total + fit_size > limit) {
      // The level needs a second page: refill its first page, not yet handed to the sink,
      // with the non-leaf free space, from the entries it held.
      std::vector<PendingNode> pending = std::move(level.pending);
      level.pending.clear();
      level.undecided = false;
      start_level(level, pending.front().child);
      for (size_t i = 1; i < pending.size(); ++i) {
        add_node(level_no, pending[i].key, pending[i].recno, pending[i].child);
      }
      add_node(level_no, key, recno, child);
      return;
    }
    level.pending.push_back(
        PendingNode{std::vector<uint8_t>(key.begin(), key.end()), recno, child});
  }

  const std::span<const uint8_t> jump_key = key.first(prefix);
  uint32_t jp = 0, js = 0;
  bool split = false;
  bool target = false;
  std::vector<uint8_t> sep_key;
  uint64_t sep_recno = 0;
  uint32_t old_page = 0;
  uint32_t new_page = 0;
  const uint32_t used = level.length + level.jump_total + fit_size;
  if (used > limit) {
    // The last node written becomes the END_BUCKET copy of the next page's first node.
    split = true;
    std::vector<uint8_t> last_key = level.key;
    const uint64_t last_recno = level.last_recno;
    const uint32_t last_child = level.last_child;
    NodeFields end{NodeKind::EndBucket, last_recno, last_child, level.last_prefix,
                   std::span<const uint8_t>(last_key).subspan(level.last_prefix)};
    level.length = level.last_offset +
                   encode_node(layout, end, leaf, nullptr, level.page.data() + level.last_offset);
    sep_key = last_key;
    sep_recno = last_recno;
    if (policy_.truncate_separators && leaf && !options_.descending && level.nodes >= 2) {
      // Suffix truncation: the shortest prefix of the new first key above the old last key.
      const uint32_t cut = static_cast<uint32_t>(common_prefix(level.prev_key, last_key)) + 1;
      if (cut < last_key.size()) {
        sep_key.resize(cut);
        sep_recno = 0;
      }
    }
    old_page = level.page_no;
    new_page = take_page();
    close_page(level, level_no, new_page);
    level.page_no = new_page;
    start_page(level, old_page);
    NodeFields first{NodeKind::Entry, last_recno, last_child, 0, last_key};
    level.last_offset = level.length;
    level.length += encode_node(layout, first, leaf, nullptr, level.page.data() + level.length);
    level.nodes = 1;
    level.prev_key.clear();
    level.last_prefix = 0;
  } else if (policy_.explicit_targets && options_.jump_interval != 0 && level.nodes > 0 &&
             level.length > level.new_area) {
    // Compact: a jump target is chosen before the node is coded (it is coded explicit), by
    // where the node starts.
    jp = static_cast<uint32_t>(common_prefix(level.jump_key, jump_key));
    js = jump_node_size(jp, prefix - jp);
    target = used + js <= limit;
  }

  const NodeContext ctx{static_cast<uint32_t>(level.key.size()), level.last_recno};
  level.last_offset = level.length;
  level.length += encode_node(layout, node, leaf, target ? nullptr : &ctx,
                              level.page.data() + level.length);
  level.prefix_total += prefix;
  level.last_recno = recno;
  level.last_child = child;
  level.last_prefix = prefix;
  level.prev_key.swap(level.key);
  level.key.assign(key.begin(), key.end());
  ++level.nodes;

  if (!policy_.explicit_targets && options_.jump_interval != 0 && level.new_area < level.length &&
      level.last_offset > kBtreeHeaderSize) {
    // Firebird: a jump node for the first node ending beyond each jump area. Never one for the
    // page's first node (at kBtreeHeaderSize while filling): Firebird's fast_load makes jump
    // nodes only for nodes after the first jump area, and find_in_page and decode_jump_table
    // reject a jump node pointing at the first node. A first key longer than the jump
    // interval would otherwise get one.
    jp = static_cast<uint32_t>(common_prefix(level.jump_key, jump_key));
    js = jump_node_size(jp, prefix - jp);
    target = level.length + level.jump_total + js < limit;
  }
  if (target) {
    level.jumps.push_back(
        Jump{level.last_offset, jp, std::vector<uint8_t>(jump_key.begin() + jp, jump_key.end())});
    level.jump_key.assign(jump_key.begin(), jump_key.end());
    level.new_area += options_.jump_interval;
    if (policy_.explicit_targets) {
      while (level.new_area < level.last_offset) level.new_area += options_.jump_interval;
    }
    level.jump_total += js;
  }

  if (split) {
    if (level_no + 1 == levels_.size()) {
      if (levels_.size() >= kMaxLevels) {
        throw std::length_error(fmt::format("B-tree would exceed {} levels", kMaxLevels));
      }
      Level& up = levels_.emplace_back();
      up.page_no = take_page();
      up.undecided = policy_.nonleaf_free_divisor != 0;
      start_level(up, old_page);
    }
    add_node(level_no + 1, sep_key, sep_recno, new_page);
  }
}

uint32_t FastLoader::finish() {
  for (uint32_t i = 0; i < levels_.size(); ++i) {
    Level& level = levels_[i];
    const NodeFields end_level{NodeKind::EndLevel, 0, 0, 0, {}};
    level.length +=
        encode_node(options_.layout, end_level, false, nullptr, level.page.data() + level.length);
    close_page(level, i, 0);
  }
  return levels_.back().page_no;
}

}  // namespace pbtree
