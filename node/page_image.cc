// Whole-page codec (node/page_image.h): a B-tree page to its full entries and back, with
// prefix compression, the END marker and the jump table.
#include "node/page_image.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstring>
#include <stdexcept>

#include "node/jump_table.h"
#include "node/node.h"
#include "util/bytes.h"
#include "node/node_internal.h"

namespace pbtree {

BtreePageImage decode_page(const uint8_t* page, uint32_t page_size) {
  BtreePageImage image;
  image.header = check_btree_header(page, page_size);
  const BtreeHeader& h = image.header;
  std::vector<JumpEntry> jumps = decode_jump_table(page, page_size);
  bool leaf = h.level == 0;
  uint32_t pos = kBtreeHeaderSize + h.jump_size;
  std::vector<uint8_t> key;
  size_t next_jump = 0;
  NodeContext ctx;
  bool have_ctx = false;
  for (;;) {
    IndexNode n = decode_node(page, h.length, pos, leaf, have_ctx ? &ctx : nullptr);
    ctx = context_after(n);
    have_ctx = true;
    if (next_jump < jumps.size() && jumps[next_jump].node_offset < n.offset) {
      corrupt_page(page, fmt::format("jump node {} points at offset {}, not at a node start", next_jump,
                                jumps[next_jump].node_offset));
    }
    if (n.is_end_level()) {
      if (n.end() != h.length) {
        corrupt_page(page, fmt::format("END_LEVEL at offset {} but btr_length {}", n.offset, h.length));
      }
      if (h.sibling != 0) corrupt_page(page, "END_LEVEL on a page with a right sibling");
      break;
    }
    if (n.prefix > key.size()) {
      corrupt_page(page, fmt::format("node at offset {}: prefix {} exceeds previous key length {}",
                                n.offset, n.prefix, key.size()));
    }
    key.resize(n.prefix);
    key.insert(key.end(), n.data, n.data + n.length);
    if (next_jump < jumps.size() && jumps[next_jump].node_offset == n.offset) {
      if (jumps[next_jump].key.size() != n.prefix ||
          !std::equal(jumps[next_jump].key.begin(), jumps[next_jump].key.end(), key.begin())) {
        corrupt_page(page, fmt::format("jump node {} key does not match its node at offset {}",
                                  next_jump, n.offset));
      }
      if (!n.absolute) {
        corrupt_page(page, fmt::format("jump node {} points at a relative node at offset {}", next_jump,
                                  n.offset));
      }
      ++next_jump;
    }
    PageEntry e{key, n.recno, n.page_number};
    if (n.is_end_bucket()) {
      if (n.end() != h.length) {
        corrupt_page(page, fmt::format("END_BUCKET at offset {} but btr_length {}", n.offset, h.length));
      }
      if (h.sibling == 0) corrupt_page(page, "END_BUCKET on a page without a right sibling");
      image.end_bucket = std::move(e);
      break;
    }
    image.entries.push_back(std::move(e));
    pos = n.end();
  }
  if (next_jump != jumps.size()) {
    corrupt_page(page, fmt::format("jump node {} points at offset {}, not at an entry", next_jump,
                              jumps[next_jump].node_offset));
  }
  return image;
}

uint32_t encode_page(const BtreePageImage& image, uint8_t* page, uint32_t page_size) {
  return encode_page(image.header, image.entries,
                     image.end_bucket ? &*image.end_bucket : nullptr, page, page_size);
}

uint32_t encode_page(const BtreeHeader& header, std::span<const PageEntry> entries,
                     const PageEntry* end_bucket, uint8_t* page, uint32_t page_size) {
  const bool leaf = header.level == 0;
  const uint32_t interval = header.jump_interval;
  // Node area first (relative offsets, in a per-thread buffer kept between calls), then the
  // jump table in front of it.
  thread_local std::vector<uint8_t> node_area;
  if (node_area.size() < page_size) node_area.resize(page_size);
  uint8_t* nodes = node_area.data();
  uint32_t nodes_size = 0;
  struct Jump {
    uint32_t rel;         // node start within the node area
    uint32_t entry;       // index into entries
    uint32_t key_length;  // the node's prefix
  };
  std::array<Jump, 255> jumps;
  size_t jump_count = 0;
  JumpPlan plan(interval);
  uint32_t prefix_total = 0;
  uint8_t buf[kMaxNodeKeyField + 32];
  std::span<const uint8_t> prev;
  const bool compact = header.layout == NodeLayout::Compact;
  NodeContext ctx;
  bool have_ctx = false;
  auto add = [&](const PageEntry& e, NodeKind kind, uint32_t index) -> bool {
    uint32_t prefix = static_cast<uint32_t>(common_prefix(prev, e.key));
    NodeFields f{kind, e.recno, e.page_number, prefix,
                 std::span<const uint8_t>(e.key).subspan(prefix)};
    uint32_t rel = nodes_size;
    bool target = plan.target(rel, kind == NodeKind::Entry, static_cast<uint32_t>(jump_count));
    uint32_t n = compact ? encode_compact_node(f, leaf, have_ctx && !target ? &ctx : nullptr, buf)
                         : encode_node(f, leaf, buf);
    if (rel + n + kBtreeHeaderSize > page_size) return false;
    std::memcpy(nodes + nodes_size, buf, n);
    nodes_size += n;
    prefix_total += prefix;
    if (target) {
      jumps[jump_count++] = Jump{rel, index, prefix};
      plan.next();
    }
    prev = e.key;
    ctx = NodeContext{static_cast<uint32_t>(e.key.size()), e.recno};
    have_ctx = true;
    return true;
  };
  for (uint32_t i = 0; i < entries.size(); ++i) {
    if (!add(entries[i], NodeKind::Entry, i)) return 0;
  }
  if (end_bucket) {
    if (!add(*end_bucket, NodeKind::EndBucket, 0)) return 0;
  } else {
    if (nodes_size + 1 + kBtreeHeaderSize > page_size) return 0;
    nodes[nodes_size++] = compact ? kCompactEndLevel : static_cast<uint8_t>(NodeFlag::EndLevel) << 5;
  }
  // Jump table.
  uint32_t jump_size = 0;
  std::span<const uint8_t> prev_jump;
  std::array<uint32_t, 255> jump_prefix;
  for (size_t j = 0; j < jump_count; ++j) {
    std::span<const uint8_t> jk(entries[jumps[j].entry].key.data(), jumps[j].key_length);
    jump_prefix[j] = static_cast<uint32_t>(common_prefix(prev_jump, jk));
    jump_size += jump_node_size(jump_prefix[j], jumps[j].key_length - jump_prefix[j]);
    prev_jump = jk;
  }
  uint64_t length = uint64_t{kBtreeHeaderSize} + jump_size + nodes_size;
  if (length > page_size || length > 0xFFFF) return 0;
  std::memset(page, 0, page_size);
  uint32_t first = kBtreeHeaderSize + jump_size;
  uint32_t pos = kBtreeHeaderSize;
  for (size_t j = 0; j < jump_count; ++j) {
    std::span<const uint8_t> jk(entries[jumps[j].entry].key.data(), jumps[j].key_length);
    pos += encode_jump_node(jump_prefix[j], jk.subspan(jump_prefix[j]),
                            static_cast<uint16_t>(first + jumps[j].rel), page + pos);
  }
  std::memcpy(page + first, nodes, nodes_size);
  BtreeHeader h = header;
  h.length = static_cast<uint16_t>(length);
  h.prefix_total = prefix_total;
  h.jump_size = static_cast<uint16_t>(jump_size);
  h.jump_count = static_cast<uint8_t>(jump_count);
  write_btree_header(page, h);
  return static_cast<uint32_t>(length);
}

}  // namespace pbtree
