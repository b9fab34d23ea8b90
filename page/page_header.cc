// Page type names and the page checksum of the generic page header (page/page_header.h).
#include "page/page_header.h"

#include <fmt/format.h>

#include "util/crc32c.h"

namespace pbtree {

std::string page_type_name(uint8_t type) {
  switch (static_cast<PageType>(type)) {
    case PageType::Header:
      return "header";
    case PageType::IndexRoot:
      return "index root";
    case PageType::Btree:
      return "b-tree";
    case PageType::Free:
      return "free";
  }
  return fmt::format("unknown ({})", type);
}

uint32_t page_checksum(const uint8_t* page, uint32_t page_size) {
  Crc32c crc;
  static constexpr uint8_t kZero[4] = {0, 0, 0, 0};
  crc.process_bytes(page, 4);
  crc.process_bytes(kZero, 4);
  crc.process_bytes(page + 8, page_size - 8);
  return crc.checksum();
}

}  // namespace pbtree
