// Header page and index root page codecs (layouts at the top of page/file_format.h).
#include "page/file_format.h"

#include <fmt/format.h>

#include <cstring>
#include <mutex>
#include <random>
#include <stdexcept>

namespace pbtree {

bool valid_page_size(uint32_t page_size) {
  return page_size == 4096 || page_size == 8192 || page_size == 16384 || page_size == 32768;
}

void encode_header_page(const FileHeader& h, uint8_t* page) {
  std::memset(page, 0, h.page_size);
  page[0] = static_cast<uint8_t>(PageType::Header);
  std::memcpy(page + 16, kFileMagic, sizeof kFileMagic);
  put_u32(page + 24, h.format_version);
  put_u32(page + 28, h.page_size);
  put_u32(page + 32, h.page_count);
  put_u32(page + 36, h.index_root_page);
  put_u32(page + 40, h.free_list_head);
  put_u32(page + 44, h.free_page_count);
  put_u64(page + 48, h.checkpoint);
  put_u32(page + 56, h.last_pages_written);
  put_u64(page + 64, h.last_bytes_written);
  put_u64(page + 72, h.last_bytes_synced);
  put_u64(page + kFileIdOffset, h.file_id);
}

uint64_t new_file_id() {
  static std::mutex mutex;
  static std::random_device device;
  std::lock_guard lock(mutex);
  uint64_t id = 0;
  while (id == 0) id = (uint64_t{device()} << 32) ^ device();
  return id;
}

FileHeader decode_header_prefix(const uint8_t* bytes, size_t available, const std::string& path) {
  if (available < kHeaderPrefixSize) {
    if (available >= 24 && std::memcmp(bytes + 16, kFileMagic, sizeof kFileMagic) == 0) {
      throw CorruptError(fmt::format("{}: truncated file ({} bytes)", path, available));
    }
    throw CorruptError(
        fmt::format("{}: not a pbtree file ({} bytes, too short for a header)", path, available));
  }
  if (std::memcmp(bytes + 16, kFileMagic, sizeof kFileMagic) != 0) {
    throw CorruptError(fmt::format("{}: not a pbtree file (wrong magic)", path));
  }
  if (bytes[0] != static_cast<uint8_t>(PageType::Header)) {
    throw CorruptError(fmt::format("{}: page 0: expected a header page, found a {} page", path,
                                   page_type_name(bytes[0])));
  }
  FileHeader h;
  h.format_version = get_u32(bytes + 24);
  if (h.format_version != kFormatVersion) {
    throw CorruptError(fmt::format("{}: unknown format version {} (this build reads {})", path,
                                   h.format_version, kFormatVersion));
  }
  h.page_size = get_u32(bytes + 28);
  if (!valid_page_size(h.page_size)) {
    throw CorruptError(fmt::format("{}: bad page size {} (expected 4096, 8192, 16384 or 32768)",
                                   path, h.page_size));
  }
  h.page_count = get_u32(bytes + 32);
  h.index_root_page = get_u32(bytes + 36);
  h.free_list_head = get_u32(bytes + 40);
  h.free_page_count = get_u32(bytes + 44);
  h.checkpoint = get_u64(bytes + 48);
  if (available >= kHeaderStatsEnd) {
    h.last_pages_written = get_u32(bytes + 56);
    h.last_bytes_written = get_u64(bytes + 64);
    h.last_bytes_synced = get_u64(bytes + 72);
  }
  if (available >= kHeaderFileIdEnd) h.file_id = get_u64(bytes + kFileIdOffset);
  if (h.index_root_page != kIndexRootPage) {
    throw CorruptError(fmt::format("{}: index root page {} (expected {})", path, h.index_root_page,
                                   kIndexRootPage));
  }
  if (h.page_count < 2) {
    throw CorruptError(fmt::format("{}: page count {} (at least 2)", path, h.page_count));
  }
  if (h.free_list_head != 0 && (h.free_list_head < 2 || h.free_list_head >= h.page_count)) {
    throw CorruptError(
        fmt::format("{}: free-list head {} outside [2, {})", path, h.free_list_head, h.page_count));
  }
  if ((h.free_list_head == 0) != (h.free_page_count == 0) || h.free_page_count > h.page_count - 2) {
    throw CorruptError(fmt::format("{}: free-list head {} with {} free pages (page count {})", path,
                                   h.free_list_head, h.free_page_count, h.page_count));
  }
  return h;
}

void encode_free_page(uint32_t next, uint8_t* page, uint32_t page_size) {
  std::memset(page, 0, page_size);
  page[0] = static_cast<uint8_t>(PageType::Free);
  put_u32(page + 16, next);
}

uint32_t decode_free_page(const uint8_t* page, uint32_t page_no, uint32_t page_size,
                          uint32_t page_count, const std::string& path) {
  if (page[0] != static_cast<uint8_t>(PageType::Free)) {
    throw CorruptError(fmt::format("{}: page {}: expected a free page, found a {} page", path,
                                   page_no, page_type_name(page[0])));
  }
  const uint32_t next = get_u32(page + 16);
  if (next != 0 && (next < 2 || next >= page_count || next == page_no)) {
    throw CorruptError(fmt::format("{}: page {} (free): next free page {} outside [2, {})", path,
                                   page_no, next, page_count));
  }
  for (uint32_t i = 20; i < page_size; ++i) {
    if (page[i] != 0) {
      throw CorruptError(
          fmt::format("{}: page {} (free): nonzero byte at offset {}", path, page_no, i));
    }
  }
  return next;
}

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
