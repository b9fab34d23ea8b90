// PageBuilder (node/page_builder.h): nodes coded one at a time, jump nodes recorded, the page
// closed with its jump table and header.
#include "node/page_builder.h"

#include <cstring>
#include <stdexcept>

#include "node/jump_table.h"
#include "util/bytes.h"

namespace pbtree {

PageBuilder::Sizes PageBuilder::sizes(NodeLayout layout, bool leaf,
                                      std::span<const uint8_t> prev_key, uint64_t prev_recno,
                                      std::span<const uint8_t> key, uint64_t recno,
                                      uint32_t child) {
  const uint32_t prefix = static_cast<uint32_t>(common_prefix(prev_key, key));
  const NodeContext ctx{static_cast<uint32_t>(prev_key.size()), prev_recno};
  const NodeFields node{NodeKind::Entry, recno, child, prefix, key.subspan(prefix)};
  NodeFields end = node;
  end.kind = NodeKind::EndBucket;
  Sizes s;
  s.prefix = static_cast<uint16_t>(prefix);
  s.expl = static_cast<uint16_t>(node_size(layout, node, leaf, nullptr));
  s.coded = static_cast<uint16_t>(node_size(layout, node, leaf, &ctx));
  s.end = static_cast<uint16_t>(node_size(layout, end, leaf, nullptr));
  s.fit = layout == NodeLayout::Compact ? s.end : s.expl;
  return s;
}

void PageBuilder::reset(uint32_t page_size, uint16_t jump_interval, NodeLayout layout, bool leaf) {
  page_size_ = page_size;
  interval_ = jump_interval;
  layout_ = layout;
  leaf_ = leaf;
  compact_ = layout == NodeLayout::Compact;
  limit_ = page_size;
  start(nullptr);
}

void PageBuilder::clear_page(uint8_t* area) {
  area_ = area;
  if (area_ != nullptr) std::memset(area_, 0, page_size_);
  length_ = kBtreeHeaderSize;
  prefix_total_ = 0;
  jump_total_ = 0;
  jump_count_ = 0;
  new_area_ = kBtreeHeaderSize + interval_;
  jump_key_.clear();
  jumps_.clear();
  jump_bytes_.clear();
}

void PageBuilder::start(uint8_t* area) {
  clear_page(area);
  nodes_ = 0;
  last_offset_ = kBtreeHeaderSize;
  last_prefix_ = 0;
  last_recno_ = 0;
  last_child_ = 0;
  last_end_size_ = 0;
  key_.clear();
  prev_key_.clear();
}

void PageBuilder::restart(uint8_t* area) {
  clear_page(area);
  // The last node (key_, last_recno_, last_child_) becomes the first, in full.
  const NodeFields first{NodeKind::Entry, last_recno_, last_child_, 0, key_};
  put(first, nullptr, 0);
  nodes_ = 1;
  prev_key_.clear();
  last_prefix_ = 0;
  last_end_size_ = 0;
}

uint32_t PageBuilder::prefix(std::span<const uint8_t> key) const {
  return static_cast<uint32_t>(common_prefix(key_, key));
}

uint32_t PageBuilder::fit_size(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                               uint32_t prefix) const {
  const NodeFields node{compact_ ? NodeKind::EndBucket : NodeKind::Entry, recno, child, prefix,
                        key.subspan(prefix)};
  return node_size(layout_, node, leaf_, nullptr);
}

void PageBuilder::put(const NodeFields& f, const NodeContext* ctx, uint32_t measured) {
  if (length_ == kBtreeHeaderSize && ctx != nullptr) {
    // The first node of a page is decoded without a predecessor: it is always explicit
    // (a compact node relative to an empty key, e.g. a NULL first key, is unreadable).
    ctx = nullptr;
    measured = 0;
  }
  last_offset_ = length_;
  if (area_ != nullptr) {
    length_ += encode_node(layout_, f, leaf_, ctx, area_ + length_);
  } else {
    length_ += measured != 0 ? measured : node_size(layout_, f, leaf_, ctx);
  }
}

void PageBuilder::set_last(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                           uint32_t prefix) {
  prev_key_.swap(key_);
  key_.assign(key.begin(), key.end());
  last_recno_ = recno;
  last_child_ = child;
  last_prefix_ = prefix;
}

void PageBuilder::add_jump(uint32_t offset, std::span<const uint8_t> jump_key, uint32_t jp) {
  const uint32_t rest = static_cast<uint32_t>(jump_key.size()) - jp;
  if (area_ != nullptr) {
    jumps_.push_back(Jump{offset, jp, static_cast<uint32_t>(jump_bytes_.size()), rest});
    jump_bytes_.insert(jump_bytes_.end(), jump_key.begin() + jp, jump_key.end());
  }
  jump_key_.assign(jump_key.begin(), jump_key.end());
  jump_total_ += jump_node_size(jp, rest);
  ++jump_count_;
}

void PageBuilder::place_first(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                              const Sizes* sizes) {
  const NodeFields node{NodeKind::Entry, recno, child, 0, key};
  put(node, nullptr, sizes ? sizes->expl : 0);
  set_last(key, recno, child, 0);
  prev_key_.clear();
  ++nodes_;
  last_end_size_ = 0;
}

void PageBuilder::place_degenerate(uint32_t child) {
  const NodeFields degenerate{NodeKind::Entry, 0, child, 0, {}};
  put(degenerate, nullptr, 0);
  key_.clear();
  prev_key_.clear();
  last_recno_ = 0;
  last_child_ = child;
  last_prefix_ = 0;
  last_end_size_ = 0;
  nodes_ = 1;
  new_area_ = length_ + interval_;
}

void PageBuilder::place(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                        uint32_t prefix, uint32_t fit, bool may_target, bool explicit_form,
                        const Sizes* sizes) {
  const std::span<const uint8_t> jump_key = key.first(prefix);
  uint32_t jp = 0;
  bool target = false;
  if (compact_ && may_target && interval_ != 0 && nodes_ > 0 && length_ > new_area_) {
    // Compact: a jump target is chosen before the node is coded (it is coded explicit), by
    // where the node starts.
    jp = static_cast<uint32_t>(common_prefix(jump_key_, jump_key));
    target = length_ + jump_total_ + fit + jump_node_size(jp, prefix - jp) <= limit_;
  }
  const NodeFields node{NodeKind::Entry, recno, child, prefix, key.subspan(prefix)};
  const NodeContext ctx{static_cast<uint32_t>(key_.size()), last_recno_};
  const bool expl = target || explicit_form || nodes_ == 0;
  put(node, expl ? nullptr : &ctx, sizes ? (expl ? sizes->expl : sizes->coded) : 0);
  prefix_total_ += prefix;
  set_last(key, recno, child, prefix);
  ++nodes_;
  last_end_size_ = sizes ? sizes->end : 0;
  if (!compact_ && interval_ != 0 && new_area_ < length_ && last_offset_ > kBtreeHeaderSize) {
    // Firebird: a jump node for the first node ending beyond each jump area. Never one for the
    // page's first node (at kBtreeHeaderSize): Firebird's fast_load makes jump nodes only for
    // nodes after the first jump area, and find_in_page and decode_jump_table reject a jump
    // node pointing at the first node. A first key longer than the jump interval would
    // otherwise get one.
    jp = static_cast<uint32_t>(common_prefix(jump_key_, jump_key));
    target = length_ + jump_total_ + jump_node_size(jp, prefix - jp) < limit_;
  }
  if (target) {
    add_jump(last_offset_, jump_key, jp);
    new_area_ += interval_;
    if (compact_) {
      while (new_area_ < last_offset_) new_area_ += interval_;
    }
  }
}

void PageBuilder::end_bucket() {
  if (area_ == nullptr && last_end_size_ != 0) {
    length_ = last_offset_ + last_end_size_;
    return;
  }
  const NodeFields end{NodeKind::EndBucket, last_recno_, last_child_, last_prefix_,
                       std::span<const uint8_t>(key_).subspan(last_prefix_)};
  length_ = last_offset_;
  put(end, nullptr, 0);
}

uint32_t PageBuilder::end_bucket_size(std::span<const uint8_t> key, uint64_t recno,
                                      uint32_t child) const {
  const uint32_t p = prefix(key);
  const NodeFields e{NodeKind::EndBucket, recno, child, p, key.subspan(p)};
  return node_size(layout_, e, leaf_, nullptr);
}

void PageBuilder::append_end_bucket(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                                    bool count_prefix) {
  const uint32_t p = prefix(key);
  const NodeFields e{NodeKind::EndBucket, recno, child, p, key.subspan(p)};
  const uint32_t at = last_offset_;
  put(e, nullptr, 0);
  last_offset_ = at;  // the END marker is not a node a break could move
  if (count_prefix) prefix_total_ += p;
}

void PageBuilder::append_end_level() {
  const NodeFields end_level{NodeKind::EndLevel, 0, 0, 0, {}};
  const uint32_t at = last_offset_;
  last_offset_ = length_;
  if (area_ != nullptr) {
    length_ += encode_node(layout_, end_level, false, nullptr, area_ + length_);
  } else {
    length_ += node_size(layout_, end_level, false, nullptr);
  }
  last_offset_ = at;
}

bool PageBuilder::append(std::span<const uint8_t> key, uint64_t recno, uint32_t child,
                         NodeKind kind, bool jump_target) {
  const uint32_t prefix = this->prefix(key);
  const NodeFields f{kind, recno, child, prefix, key.subspan(prefix)};
  const NodeContext ctx{static_cast<uint32_t>(key_.size()), last_recno_};
  uint8_t buf[kMaxNodeKeyField + 32];
  const uint32_t n =
      encode_node(layout_, f, leaf_, nodes_ > 0 && !jump_target ? &ctx : nullptr, buf);
  if (length_ + n > page_size_) return false;
  std::memcpy(area_ + length_, buf, n);
  last_offset_ = length_;
  length_ += n;
  prefix_total_ += prefix;
  if (jump_target) {
    const std::span<const uint8_t> jump_key = key.first(prefix);
    add_jump(last_offset_, jump_key, static_cast<uint32_t>(common_prefix(jump_key_, jump_key)));
  }
  set_last(key, recno, child, prefix);
  ++nodes_;
  return true;
}

std::span<const uint8_t> PageBuilder::separator(bool truncate, uint64_t& recno) const {
  std::span<const uint8_t> sep = key_;
  recno = last_recno_;
  if (truncate && nodes_ >= 2) {
    // Suffix truncation: the shortest prefix of the new first key above the old last key.
    const size_t cut = common_prefix(prev_key_, key_) + 1;
    if (cut < key_.size()) {
      sep = sep.first(cut);
      recno = 0;
    }
  }
  return sep;
}

BtreeHeader PageBuilder::close(uint8_t* page, BtreeHeader h) const {
  if (jump_count_ > 255) throw std::logic_error("more than 255 jump nodes on a page");
  if (compact_ && area_ != nullptr && length_ > kBtreeHeaderSize &&
      (area_[kBtreeHeaderSize] >> 6) != 3) {
    // A compact page's first node is decoded without a predecessor (put() makes it explicit;
    // this one-byte check keeps an unreadable page from ever being written).
    throw std::logic_error("page builder: the first node of a compact page is not explicit");
  }
  if (page == area_) {
    if (jump_total_ != 0) {
      std::memmove(page + kBtreeHeaderSize + jump_total_, page + kBtreeHeaderSize,
                   length_ - kBtreeHeaderSize);
    }
  } else {
    std::memset(page, 0, page_size_);
    std::memcpy(page + kBtreeHeaderSize + jump_total_, area_ + kBtreeHeaderSize,
                length_ - kBtreeHeaderSize);
  }
  uint32_t pos = kBtreeHeaderSize;
  for (const Jump& j : jumps_) {
    pos +=
        encode_jump_node(j.prefix, std::span<const uint8_t>(jump_bytes_).subspan(j.begin, j.size),
                         static_cast<uint16_t>(j.offset + jump_total_), page + pos);
  }
  h.prefix_total = prefix_total_;
  h.length = static_cast<uint16_t>(length_ + jump_total_);
  h.jump_interval = interval_;
  h.jump_size = static_cast<uint16_t>(jump_total_);
  h.jump_count = static_cast<uint8_t>(jump_count_);
  h.layout = layout_;
  write_btree_header(page, h);
  return h;
}

}  // namespace pbtree
