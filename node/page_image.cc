// Whole-page codec (node/page_image.h): a B-tree page to its full entries and back, with
// prefix compression, the END marker and the jump table.
#include "node/page_image.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "node/jump_table.h"
#include "node/node.h"
#include "node/node_internal.h"
#include "node/page_builder.h"
#include "util/bytes.h"

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
      corrupt_page(page, fmt::format("jump node {} points at offset {}, not at a node start",
                                     next_jump, jumps[next_jump].node_offset));
    }
    if (n.is_end_level()) {
      if (n.end() != h.length) {
        corrupt_page(page,
                     fmt::format("END_LEVEL at offset {} but btr_length {}", n.offset, h.length));
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
        corrupt_page(page, fmt::format("jump node {} points at a relative node at offset {}",
                                       next_jump, n.offset));
      }
      ++next_jump;
    }
    PageEntry e{key, n.recno, n.page_number};
    if (n.is_end_bucket()) {
      if (n.end() != h.length) {
        corrupt_page(page,
                     fmt::format("END_BUCKET at offset {} but btr_length {}", n.offset, h.length));
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
  return encode_page(image.header, image.entries, image.end_bucket ? &*image.end_bucket : nullptr,
                     page, page_size);
}

namespace {

// The one whole-page encoder, over PageEntry or EntryRef (both have key, recno, page_number).
template <typename Entry>
uint32_t encode_entries(const BtreeHeader& header, std::span<const Entry> entries,
                        const Entry* end_bucket, uint8_t* page, uint32_t page_size) {
  // Nodes first into a per-thread area kept between calls (the page is written only once the
  // whole page is known to fit), jump nodes by JumpPlan's rule.
  thread_local std::vector<uint8_t> node_area;
  thread_local PageBuilder builder;
  if (node_area.size() < page_size) node_area.resize(page_size);
  PageBuilder& b = builder;
  b.reset(page_size, header.jump_interval, header.layout, header.level == 0);
  b.start(node_area.data());
  JumpPlan plan(header.jump_interval);
  for (const Entry& e : entries) {
    const bool target = plan.target(b.length() - kBtreeHeaderSize, true, b.jump_count());
    if (!b.append(e.key, e.recno, e.page_number, NodeKind::Entry, target)) return 0;
    if (target) plan.next();
  }
  if (end_bucket) {
    if (!b.append(end_bucket->key, end_bucket->recno, end_bucket->page_number, NodeKind::EndBucket,
                  false)) {
      return 0;
    }
  } else {
    if (b.length() + 1 > page_size) return 0;
    b.append_end_level();
  }
  const uint32_t length = b.closed_length();
  if (length > page_size || length > 0xFFFF) return 0;
  b.close(page, header);
  return length;
}

}  // namespace

uint32_t encode_page(const BtreeHeader& header, std::span<const PageEntry> entries,
                     const PageEntry* end_bucket, uint8_t* page, uint32_t page_size) {
  return encode_entries(header, entries, end_bucket, page, page_size);
}

uint32_t encode_page(const BtreeHeader& header, std::span<const EntryRef> entries,
                     const EntryRef* end_bucket, uint8_t* page, uint32_t page_size) {
  return encode_entries(header, entries, end_bucket, page, page_size);
}

}  // namespace pbtree
