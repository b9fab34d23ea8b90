// Index root page codec (layout at the top of file/index_root.h).
#include "file/index_root.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "page/file_header.h"
#include "page/page_header.h"
#include "util/coding.h"

namespace pbtree {

uint32_t max_index_slots(uint32_t page_size) {
  return static_cast<uint32_t>((page_size - kIndexSlotsOffset) / kIndexSlotSize);
}

bool valid_index_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxIndexNameLength) return false;
  for (char c : name) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '$';
    if (!ok) return false;
  }
  return true;
}

void encode_index_root_page(const std::vector<IndexSlot>& slots, uint8_t* page,
                            uint32_t page_size) {
  if (slots.size() > max_index_slots(page_size)) {
    throw std::length_error(fmt::format("{} index slots exceed the {} an index root page holds",
                                        slots.size(), max_index_slots(page_size)));
  }
  std::memset(page, 0, page_size);
  page[0] = static_cast<uint8_t>(PageType::IndexRoot);
  put_u16(page + 16, 0);
  put_u16(page + 18, static_cast<uint16_t>(slots.size()));
  for (size_t i = 0; i < slots.size(); ++i) {
    const IndexSlot& s = slots[i];
    uint8_t* p = page + kIndexSlotsOffset + i * kIndexSlotSize;
    if (s.root_page == 0) continue;
    put_u32(p + 0, s.root_page);
    put_u32(p + 4, static_cast<uint32_t>(i));
    p[8] = static_cast<uint8_t>(s.type.type);
    p[9] = s.type.precision;
    p[10] = s.type.scale;
    p[11] = static_cast<uint8_t>(s.format);
    put_u16(p + 12, s.type.length);
    p[14] = static_cast<uint8_t>((s.unique ? 1 : 0) | (s.descending ? 2 : 0) |
                                 (s.layout == NodeLayout::Compact ? kSlotFlagCompact : 0) |
                                 (s.auto_format ? kSlotFlagAutoFormat : 0));
    size_t n = std::min(s.name.size(), kMaxIndexNameLength);
    p[15] = static_cast<uint8_t>(n);
    std::memcpy(p + 16, s.name.data(), n);
  }
}

std::vector<IndexSlot> decode_index_root_page(const uint8_t* page, uint32_t page_size,
                                              uint32_t page_count, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return CorruptError(fmt::format("{}: page {} (index root): {}", path, kIndexRootPage, what));
  };
  if (page[0] != static_cast<uint8_t>(PageType::IndexRoot)) {
    throw CorruptError(fmt::format("{}: page {}: expected an index root page, found a {} page",
                                   path, kIndexRootPage, page_type_name(page[0])));
  }
  uint32_t count = get_u16(page + 18);
  if (count > max_index_slots(page_size)) {
    throw bad(fmt::format("slot count {} exceeds {}", count, max_index_slots(page_size)));
  }
  std::vector<IndexSlot> slots(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* p = page + kIndexSlotsOffset + i * kIndexSlotSize;
    IndexSlot& s = slots[i];
    s.id = i;
    s.root_page = get_u32(p);
    if (s.root_page == 0) continue;
    auto slot_bad = [&](const std::string& what) {
      return bad(fmt::format("slot {}: {}", i, what));
    };
    if (s.root_page < 2 || s.root_page >= page_count) {
      throw slot_bad(fmt::format("root page {} outside [2, {})", s.root_page, page_count));
    }
    if (get_u32(p + 4) != i) throw slot_bad(fmt::format("index id {}", get_u32(p + 4)));
    uint8_t type = p[8];
    if (type < 1 || type > 7) throw slot_bad(fmt::format("unknown column type {}", type));
    s.type.type = static_cast<ColumnType>(type);
    s.type.precision = p[9];
    s.type.scale = p[10];
    s.type.length = get_u16(p + 12);
    uint8_t format = p[11];
    if (format != 0 && format != 1 && format != 8 && format != 10 && format != 13) {
      throw slot_bad(fmt::format("unknown key format {}", format));
    }
    s.format = static_cast<KeyFormat>(format);
    if ((p[14] & ~(3 | kSlotFlagCompact | kSlotFlagAutoFormat)) != 0) {
      throw slot_bad(fmt::format("unknown flags {:#x}", p[14]));
    }
    s.unique = (p[14] & 1) != 0;
    s.descending = (p[14] & 2) != 0;
    s.layout = (p[14] & kSlotFlagCompact) != 0 ? NodeLayout::Compact : NodeLayout::Firebird;
    s.auto_format = (p[14] & kSlotFlagAutoFormat) != 0;
    uint8_t n = p[15];
    if (n > kMaxIndexNameLength) throw slot_bad(fmt::format("name length {}", n));
    s.name.assign(reinterpret_cast<const char*>(p + 16), n);
    if (!valid_index_name(s.name)) throw slot_bad("malformed index name");
  }
  return slots;
}

}  // namespace pbtree
