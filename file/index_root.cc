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

bool index_root_fits(const std::vector<IndexInfo>& slots, uint32_t page_size) {
  size_t descriptors = 0;
  for (const IndexInfo& s : slots) {
    if (s.root_page != 0) descriptors += s.def.segments.size() * kSegmentDescriptorSize;
  }
  return kIndexSlotsOffset + slots.size() * kIndexSlotSize + descriptors <= page_size;
}

void encode_index_root_page(const std::vector<IndexInfo>& slots, uint8_t* page,
                            uint32_t page_size) {
  if (slots.size() > max_index_slots(page_size)) {
    throw std::length_error(fmt::format("{} index slots exceed the {} an index root page holds",
                                        slots.size(), max_index_slots(page_size)));
  }
  if (!index_root_fits(slots, page_size)) {
    throw std::length_error("index slots and segment descriptors exceed the index root page");
  }
  std::memset(page, 0, page_size);
  size_t descriptor_end = page_size;
  set_page_type(page, PageType::IndexRoot);
  put_u16(page + 16, 0);
  put_u16(page + 18, static_cast<uint16_t>(slots.size()));
  for (size_t i = 0; i < slots.size(); ++i) {
    const IndexInfo& s = slots[i];
    uint8_t* p = page + kIndexSlotsOffset + i * kIndexSlotSize;
    if (s.root_page == 0) continue;
    put_u32(p + 0, s.root_page);
    put_u32(p + 4, static_cast<uint32_t>(i));
    const bool compound = s.def.segments.size() > 1;
    if (!compound) {
      p[8] = static_cast<uint8_t>(s.def.type.type);
      p[9] = s.def.type.precision;
      p[10] = s.def.type.scale;
      p[11] = static_cast<uint8_t>(s.def.format);
      put_u16(p + 12, s.def.type.length);
    } else {
      descriptor_end -= s.def.segments.size() * kSegmentDescriptorSize;
      p[8] = 0;
      p[9] = static_cast<uint8_t>(s.def.segments.size());
      put_u16(p + 10, static_cast<uint16_t>(descriptor_end));
      for (size_t g = 0; g < s.def.segments.size(); ++g) {
        uint8_t* d = page + descriptor_end + g * kSegmentDescriptorSize;
        const IndexSegment& seg = s.def.segments[g];
        d[0] = static_cast<uint8_t>(seg.type.type);
        d[1] = seg.type.precision;
        d[2] = seg.type.scale;
        d[3] = static_cast<uint8_t>(seg.format);
        put_u16(d + 4, seg.type.length);
      }
    }
    p[14] = static_cast<uint8_t>((s.def.unique ? 1 : 0) | (s.def.descending ? 2 : 0) |
                                 (s.def.layout == NodeLayout::Compact ? kSlotFlagCompact : 0) |
                                 (compound ? kSlotFlagCompound : 0) |
                                 (s.def.auto_format ? kSlotFlagAutoFormat : 0));
    size_t n = std::min(s.def.name.size(), kMaxIndexNameLength);
    p[15] = static_cast<uint8_t>(n);
    std::memcpy(p + 16, s.def.name.data(), n);
  }
}

std::vector<IndexInfo> decode_index_root_page(const uint8_t* page, uint32_t page_size,
                                              uint32_t page_count, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return CorruptError(fmt::format("{}: page {} (index root): {}", path, kIndexRootPage, what));
  };
  if (page_type_of(page) != static_cast<uint8_t>(PageType::IndexRoot)) {
    throw CorruptError(fmt::format("{}: page {}: expected an index root page, found a {} page",
                                   path, kIndexRootPage, page_type_name(page_type_of(page))));
  }
  uint32_t count = get_u16(page + 18);
  if (count > max_index_slots(page_size)) {
    throw bad(fmt::format("slot count {} exceeds {}", count, max_index_slots(page_size)));
  }
  std::vector<IndexInfo> slots(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* p = page + kIndexSlotsOffset + i * kIndexSlotSize;
    IndexInfo& s = slots[i];
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
    auto read_type = [&](const uint8_t* d, const std::string& where) {
      uint8_t type = d[0];
      if (type < 1 || type > 7)
        throw slot_bad(fmt::format("{}unknown column type {}", where, type));
      TypeSpec t;
      t.type = static_cast<ColumnType>(type);
      t.precision = d[1];
      t.scale = d[2];
      t.length = get_u16(d + 4);
      uint8_t format = d[3];
      if (format != 0 && format != 1 && format != 8 && format != 10 && format != 13) {
        throw slot_bad(fmt::format("{}unknown key format {}", where, format));
      }
      return IndexSegment{t, static_cast<KeyFormat>(format)};
    };
    if ((p[14] & ~(3 | kSlotFlagCompact | kSlotFlagCompound | kSlotFlagAutoFormat)) != 0) {
      throw slot_bad(fmt::format("unknown flags {:#x}", p[14]));
    }
    if ((p[14] & kSlotFlagCompound) == 0) {
      const uint8_t d[6] = {p[8], p[9], p[10], p[11], p[12], p[13]};
      const IndexSegment g = read_type(d, "");
      s.def.type = g.type;
      s.def.format = g.format;
    } else {
      const uint32_t n = p[9];
      const uint32_t off = get_u16(p + 10);
      if (p[8] != 0 || n < 2 || n > kMaxIndexSegments) {
        throw slot_bad(fmt::format("compound index with {} segments", n));
      }
      if (off < kIndexSlotsOffset + count * kIndexSlotSize ||
          off + n * kSegmentDescriptorSize > page_size) {
        throw slot_bad(fmt::format("segment descriptors at offset {} outside the page", off));
      }
      for (uint32_t g = 0; g < n; ++g) {
        s.def.segments.push_back(
            read_type(page + off + g * kSegmentDescriptorSize, fmt::format("segment {}: ", g + 1)));
      }
      s.def.type = s.def.segments[0].type;
      s.def.format = s.def.segments[0].format;
    }
    s.def.unique = (p[14] & 1) != 0;
    s.def.descending = (p[14] & 2) != 0;
    s.def.layout = (p[14] & kSlotFlagCompact) != 0 ? NodeLayout::Compact : NodeLayout::Firebird;
    s.def.auto_format = (p[14] & kSlotFlagAutoFormat) != 0;
    uint8_t n = p[15];
    if (n > kMaxIndexNameLength) throw slot_bad(fmt::format("name length {}", n));
    s.def.name.assign(reinterpret_cast<const char*>(p + 16), n);
    if (!valid_index_name(s.def.name)) throw slot_bad("malformed index name");
  }
  return slots;
}

}  // namespace pbtree
