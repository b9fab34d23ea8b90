// libFuzzer target: arbitrary bytes as one B-tree page (node/btree_page.h) at each page size
// (4096 .. 32768; the input is cut or zero-padded to the page). check_btree_header,
// decode_page, decode_jump_table and find_in_page (both modes, with and without a record
// number, ascending and descending) must either succeed or throw CorruptError; any other
// exception, a crash or a sanitizer report is a bug. A page that decodes is re-encoded and
// decoded again: the entries must survive the round trip.
#include <pbtree/errors.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace {

using namespace pbtree;

void check_round_trip(const BtreePageImage& image, uint32_t page_size) {
  std::vector<uint8_t> again(page_size);
  uint32_t length = 0;
  try {
    length = encode_page(image, again.data(), page_size);
  } catch (const std::invalid_argument&) {
    return;  // a key longer than a node field can carry once re-compressed: not encodable
  }
  if (length == 0) return;  // does not fit with the re-generated jump table
  BtreePageImage back = decode_page(again.data(), page_size);
  if (back.entries != image.entries || back.end_bucket != image.end_bucket) std::abort();
}

void fuzz_one(const uint8_t* data, size_t size, uint32_t page_size) {
  std::vector<uint8_t> page(page_size, 0);
  std::memcpy(page.data(), data, std::min<size_t>(size, page_size));
  // The search key: the last bytes of the input (up to 64), so the fuzzer steers it.
  size_t key_len = std::min<size_t>(size, 64) / 2;
  std::span<const uint8_t> key(data + size - key_len, key_len);
  try {
    check_btree_header(page.data(), page_size);
  } catch (const CorruptError&) {
  }
  try {
    decode_jump_table(page.data(), page_size);
  } catch (const CorruptError&) {
  }
  try {
    BtreePageImage image = decode_page(page.data(), page_size);
    check_round_trip(image, page_size);
  } catch (const CorruptError&) {
  }
  for (bool descending : {false, true}) {
    for (FindMode mode : {FindMode::LowerBound, FindMode::UpperBound}) {
      for (std::optional<uint64_t> recno :
           {std::optional<uint64_t>{}, std::optional<uint64_t>{7}}) {
        try {
          PageFind f = find_in_page(page.data(), page_size, key, descending, recno, mode);
          if (f.offset >= page_size || f.prev_offset >= page_size) std::abort();
        } catch (const CorruptError&) {
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  for (uint32_t page_size : {4096u, 8192u, 16384u, 32768u}) fuzz_one(data, size, page_size);
  return 0;
}
