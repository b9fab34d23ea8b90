// The B-tree page header (node/btree_page.h): read, write and check bytes 16..38, and the
// page-naming prefix of every corruption message about a B-tree page.
#include "node/btree_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace pbtree {

std::string page_error(const uint8_t* page, const std::string& what) {
  return fmt::format("page {} ({}): {}", get_u32(page + 12), page_type_name(page[0]), what);
}

BtreeHeader read_btree_header(const uint8_t* page) {
  BtreeHeader h;
  h.sibling = get_u32(page + 16);
  h.left_sibling = get_u32(page + 20);
  h.prefix_total = get_u32(page + 24);
  h.relation = get_u16(page + 28);
  h.length = get_u16(page + 30);
  h.index_id = page[32];
  h.level = page[33];
  h.jump_interval = get_u16(page + 34);
  h.jump_size = get_u16(page + 36);
  h.jump_count = page[38];
  h.layout = page_layout(page);
  return h;
}

void write_btree_header(uint8_t* page, const BtreeHeader& h) {
  page[0] = static_cast<uint8_t>(PageType::Btree);
  page[1] = h.layout == NodeLayout::Compact ? kPageCompact : 0;
  page[2] = 0;
  page[3] = 0;
  put_u32(page + 16, h.sibling);
  put_u32(page + 20, h.left_sibling);
  put_u32(page + 24, h.prefix_total);
  put_u16(page + 28, h.relation);
  put_u16(page + 30, h.length);
  page[32] = h.index_id;
  page[33] = h.level;
  put_u16(page + 34, h.jump_interval);
  put_u16(page + 36, h.jump_size);
  page[38] = h.jump_count;
}

void check_btree_frame(const uint8_t* page, uint32_t page_size) {
  if (page[0] == static_cast<uint8_t>(PageType::Btree)) check_btree_header(page, page_size);
}

void corrupt_page(const uint8_t* page, const std::string& what) {
  throw CorruptError(page_error(page, what));
}

void corrupt_btree_page(uint32_t page_no, const std::string& what) {
  throw CorruptError(fmt::format("page {} (b-tree): {}", page_no, what));
}

BtreeHeader check_btree_header(const uint8_t* page, uint32_t page_size) {
  if (page[0] != static_cast<uint8_t>(PageType::Btree)) {
    corrupt_page(page, "not a b-tree page");
  }
  BtreeHeader h = read_btree_header(page);
  if (h.level >= kMaxLevels)
    corrupt_page(page, fmt::format("level {} exceeds {}", h.level, kMaxLevels - 1));
  uint32_t first = kBtreeHeaderSize + h.jump_size;
  if (h.length <= first || h.length > page_size) {
    corrupt_page(page, fmt::format("btr_length {} outside [{}, {}] (jump size {})", h.length,
                                   first + 1, page_size, h.jump_size));
  }
  return h;
}

}  // namespace pbtree
