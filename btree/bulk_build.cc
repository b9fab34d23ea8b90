// FastLoader: Firebird fast_load's page filling, node, END_BUCKET and jump-node rules
// (src/jrd/btr.cpp, Firebird 3.0 .. 5.0), one add_node for both node layouts; what differs
// per layout is the node codec and the FillPolicy.
#include "btree/bulk_build.h"

#include <fmt/format.h>
#include <pbtree/errors.h>

#include <algorithm>
#include <cstring>

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
  static constexpr FillPolicy kFirebird{8, false};
  static constexpr FillPolicy kCompact{0, true};
  return layout == NodeLayout::Compact ? kCompact : kFirebird;
}

uint32_t FastLoader::fill_limit(NodeLayout layout, uint32_t page_size, bool leaf,
                                bool nonleaf_free) {
  uint32_t limit = page_size - (leaf ? kLeafReserve : kNonLeafReserve);
  const uint32_t divisor = fill_policy(layout).nonleaf_free_divisor;
  if (!leaf && nonleaf_free && divisor != 0) limit -= page_size / divisor;
  return limit;
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
  level.page.resize(options_.page_size);
  level.left_sibling = left_sibling;
  const bool leaf = &level == &levels_.front();
  level.builder.reset(options_.page_size, options_.jump_interval, options_.layout, leaf);
  level.builder.start(level.page.data());
}

void FastLoader::start_level(Level& level, uint32_t first_child) {
  start_page(level, 0);
  // Degenerate first node of the level: every key below the next separator.
  level.builder.place_degenerate(first_child);
  if (level.undecided) level.pending.assign(1, PendingNode{{}, 0, first_child});
}

void FastLoader::close_page(Level& level, uint32_t level_no, uint32_t sibling) {
  uint8_t* page = level.page.data();
  BtreeHeader h;
  h.sibling = sibling;
  h.left_sibling = level.left_sibling;
  h.index_id = options_.index_id;
  h.level = static_cast<uint8_t>(level_no);
  level.builder.close(page, h);
  if (options_.prepare) options_.prepare(level.page_no, page);
  sink_(level.page_no, page);
}

void FastLoader::add(std::span<const uint8_t> key, uint64_t recno) {
  add_node(0, key, recno, 0);
}

void FastLoader::add_node(uint32_t level_no, std::span<const uint8_t> key, uint64_t recno,
                          uint32_t child) {
  Level& level = levels_[level_no];
  PageBuilder& b = level.builder;
  const bool leaf = level_no == 0;
  b.set_limit(fill_limit(options_.layout, options_.page_size, leaf, !level.undecided));
  const uint32_t prefix = b.prefix(key);
  // Room the node needs for the page to still close: on compact pages the END_BUCKET copy it
  // may become (explicit form), on Firebird pages its own size.
  const uint32_t fit_size = b.fit_size(key, recno, child, prefix);

  if (level.undecided) {
    if (!b.fits(fit_size)) {
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

  bool split = false;
  std::vector<uint8_t> sep_key;
  uint64_t sep_recno = 0;
  uint32_t old_page = 0;
  uint32_t new_page = 0;
  if (!b.fits(fit_size)) {
    // The last node written becomes the END_BUCKET copy of the next page's first node.
    split = true;
    b.end_bucket();
    const std::span<const uint8_t> sep =
        b.separator(policy_.truncate_separators && leaf && !options_.descending, sep_recno);
    sep_key.assign(sep.begin(), sep.end());
    old_page = level.page_no;
    new_page = take_page();
    close_page(level, level_no, new_page);
    level.page_no = new_page;
    level.left_sibling = old_page;
    b.restart(level.page.data());
  }
  b.place(key, recno, child, prefix, fit_size, !split);

  if (split) {
    if (level_no + 1 == levels_.size()) {
      if (levels_.size() >= kMaxLevels) {
        throw UsageError(fmt::format("B-tree would exceed {} levels", kMaxLevels));
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
    level.builder.append_end_level();
    close_page(level, i, 0);
  }
  return levels_.back().page_no;
}

}  // namespace pbtree
