// LevelRunBuilder: one level of fast_load's page filling (the rules of FastLoader::add_node,
// btree/bulk_build.cc), for the runs of pages BTree::insert_batch rewrites.
#include "btree/leaf_run_builder.h"

#include <cstring>
#include <stdexcept>

#include "node/jump_table.h"
#include "node/node.h"
#include "util/bytes.h"

namespace pbtree {

namespace {

// Room left free on a page while filling: BTN_LEAF_SIZE and BTN_PAGE_SIZE of btn.h.
constexpr uint32_t kLeafReserve = 6;
constexpr uint32_t kNonLeafReserve = 10;

}  // namespace

LevelRunBuilder::LevelRunBuilder(const Options& options, PageSink sink)
    : o_(options),
      explicit_targets_(options.layout == NodeLayout::Compact),
      truncate_(options.layout == NodeLayout::Compact && options.level == 0 && !options.descending),
      nonleaf_extra_(options.level > 0 && options.nonleaf_free &&
                             options.layout == NodeLayout::Firebird
                         ? options.page_size / 8
                         : 0),
      sink_(std::move(sink)) {
  start_page();
}

uint32_t LevelRunBuilder::limit() const {
  return o_.level == 0 ? o_.page_size - kLeafReserve
                       : o_.page_size - kNonLeafReserve - nonleaf_extra_;
}

void LevelRunBuilder::start_page() {
  cur_ = Page{};
  cur_.bytes.assign(o_.page_size, 0);
  length_ = kBtreeHeaderSize;
  prefix_total_ = 0;
  jumps_.clear();
  jump_key_.clear();
  jump_total_ = 0;
  new_area_ = kBtreeHeaderSize + o_.jump_interval;
  nodes_ = 0;
}

void LevelRunBuilder::close_page() {
  uint8_t* page = cur_.bytes.data();
  if (jump_total_ != 0) {
    if (jumps_.size() > 255) throw std::logic_error("more than 255 jump nodes on a page");
    std::memmove(page + kBtreeHeaderSize + jump_total_, page + kBtreeHeaderSize,
                 length_ - kBtreeHeaderSize);
    uint32_t pos = kBtreeHeaderSize;
    for (const Jump& j : jumps_) {
      pos += encode_jump_node(j.prefix, j.data, static_cast<uint16_t>(j.offset + jump_total_),
                              page + pos);
    }
  }
  BtreeHeader& h = cur_.header;
  h.prefix_total = prefix_total_;
  h.length = static_cast<uint16_t>(length_ + jump_total_);
  h.index_id = o_.index_id;
  h.level = o_.level;
  h.jump_interval = o_.jump_interval;
  h.jump_size = static_cast<uint16_t>(jump_total_);
  h.jump_count = static_cast<uint8_t>(jumps_.size());
  h.layout = o_.layout;
  write_btree_header(page, h);
  ++pages_;
  sink_(std::move(cur_));
}

void LevelRunBuilder::break_page() {
  const bool leaf = o_.level == 0;
  const std::vector<uint8_t> last_key = key_;
  NodeFields end{NodeKind::EndBucket, last_recno_, last_child_, last_prefix_,
                 std::span<const uint8_t>(last_key).subspan(last_prefix_)};
  length_ = last_offset_ + encode_node(o_.layout, end, leaf, nullptr, cur_.bytes.data() + last_offset_);
  std::vector<uint8_t> sep = last_key;
  uint64_t sep_recno = last_recno_;
  if (truncate_ && nodes_ >= 2) {
    // Suffix truncation: the shortest prefix of the new first key above the old last key.
    const uint32_t cut = static_cast<uint32_t>(common_prefix(prev_key_, last_key)) + 1;
    if (cut < last_key.size()) {
      sep.resize(cut);
      sep_recno = 0;
    }
  }
  close_page();
  start_page();
  cur_.sep_key = std::move(sep);
  cur_.sep_recno = sep_recno;
  NodeFields first{NodeKind::Entry, last_recno_, last_child_, 0, last_key};
  last_offset_ = length_;
  length_ += encode_node(o_.layout, first, leaf, nullptr, cur_.bytes.data() + length_);
  nodes_ = 1;
  prev_key_.clear();
  last_prefix_ = 0;
}

void LevelRunBuilder::add(std::span<const uint8_t> key, uint64_t recno, uint32_t child) {
  const bool leaf = o_.level == 0;
  const NodeLayout layout = o_.layout;
  const uint32_t lim = limit();
  if (pages_ == 0 && nodes_ == 0) {
    cur_.sep_key.assign(key.begin(), key.end());
    cur_.sep_recno = recno;
  }
  const uint32_t prefix = static_cast<uint32_t>(common_prefix(key_, key));
  const NodeFields node{NodeKind::Entry, recno, child, prefix, key.subspan(prefix)};
  uint32_t fit_size;
  if (explicit_targets_) {
    NodeFields as_end = node;
    as_end.kind = NodeKind::EndBucket;
    fit_size = node_size(layout, as_end, leaf, nullptr);
  } else {
    fit_size = node_size(layout, node, leaf, nullptr);
  }
  const std::span<const uint8_t> jump_key = key.first(prefix);
  uint32_t jp = 0, js = 0;
  bool target = false;
  const uint32_t used = length_ + jump_total_ + fit_size;
  if (nodes_ > 0 && used > lim) {
    break_page();
  } else if (explicit_targets_ && o_.jump_interval != 0 && nodes_ > 0 && length_ > new_area_) {
    jp = static_cast<uint32_t>(common_prefix(jump_key_, jump_key));
    js = jump_node_size(jp, prefix - jp);
    target = used + js <= lim;
  }
  const NodeContext ctx{static_cast<uint32_t>(key_.size()), last_recno_};
  const bool absolute = target || nodes_ == 0;
  last_offset_ = length_;
  length_ += encode_node(layout, node, leaf, absolute ? nullptr : &ctx, cur_.bytes.data() + length_);
  prefix_total_ += prefix;
  last_recno_ = recno;
  last_child_ = child;
  last_prefix_ = prefix;
  prev_key_.swap(key_);
  key_.assign(key.begin(), key.end());
  ++nodes_;
  if (!explicit_targets_ && o_.jump_interval != 0 && new_area_ < length_ &&
      last_offset_ > kBtreeHeaderSize) {
    jp = static_cast<uint32_t>(common_prefix(jump_key_, jump_key));
    js = jump_node_size(jp, prefix - jp);
    target = length_ + jump_total_ + js < lim;
  }
  if (target) {
    jumps_.push_back(
        Jump{last_offset_, jp, std::vector<uint8_t>(jump_key.begin() + jp, jump_key.end())});
    jump_key_.assign(jump_key.begin(), jump_key.end());
    new_area_ += o_.jump_interval;
    if (explicit_targets_) {
      while (new_area_ < last_offset_) new_area_ += o_.jump_interval;
    }
    jump_total_ += js;
  }
}

void LevelRunBuilder::finish(const PageEntry* end) {
  const bool leaf = o_.level == 0;
  if (end != nullptr) {
    uint32_t prefix = static_cast<uint32_t>(common_prefix(key_, end->key));
    NodeFields e{NodeKind::EndBucket, end->recno, end->page_number, prefix,
                 std::span<const uint8_t>(end->key).subspan(prefix)};
    if (nodes_ > 1 && length_ + jump_total_ + node_size(o_.layout, e, leaf, nullptr) > limit()) {
      break_page();
    }
    length_ += encode_node(o_.layout, e, leaf, nullptr, cur_.bytes.data() + length_);
  } else {
    const NodeFields end_level{NodeKind::EndLevel, 0, 0, 0, {}};
    length_ += encode_node(o_.layout, end_level, false, nullptr, cur_.bytes.data() + length_);
  }
  close_page();
}

}  // namespace pbtree
