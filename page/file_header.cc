// Header page and free page codecs (layouts at the top of page/file_header.h).
#include "page/file_header.h"

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

}  // namespace pbtree
