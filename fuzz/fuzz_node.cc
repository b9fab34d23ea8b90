// libFuzzer target for the node codec of node/btree_page.h. Input byte 0 picks leaf/non-leaf
// and byte 1 the offset; decode_node and decode_jump_node then read the rest as a page
// (limit = input size) and must succeed within bounds or throw CorruptError. The same bytes
// also describe a valid node (kind, record number, child page, prefix, data) that must
// survive encode_node -> decode_node, and a jump node that must survive
// encode_jump_node -> decode_jump_node, field for field.
#include <pbtree/errors.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace {

using namespace pbtree;

// Reads fields from the fuzzer input, zero once it runs out.
struct Reader {
  const uint8_t* p;
  size_t n;
  uint64_t take(size_t bytes) {
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; ++i) {
      uint8_t b = 0;
      if (n > 0) {
        b = *p++;
        --n;
      }
      v |= uint64_t{b} << (8 * i);
    }
    return v;
  }
};

void decode_arbitrary(const uint8_t* data, size_t size) {
  if (size < 2) return;
  bool leaf = data[0] & 1;
  uint32_t limit = static_cast<uint32_t>(std::min<size_t>(size, 65535));
  uint32_t offset = data[1] % limit;
  // Error messages read the generic page header (type, page number): at least 16 bytes.
  std::vector<uint8_t> copy(std::max<size_t>(limit, 16), 0);
  std::memcpy(copy.data(), data, limit);
  // Byte 1 is the page flags; 0x80 would select the compact layout, whose decoding reads the
  // jump table of a whole page (fuzz_page covers it): keep Firebird's nodes here.
  copy[1] &= 0x7F;
  data = copy.data();
  try {
    IndexNode node = decode_node(data, limit, offset, leaf);
    if (node.offset != offset || node.end() > limit || node.size == 0) std::abort();
    if (!node.is_end_level() && node.data + node.length > data + limit) std::abort();
  } catch (const CorruptError&) {
  }
  try {
    JumpNode jump = decode_jump_node(data, limit, offset);
    if (jump.offset + jump.size > limit || jump.data + jump.length > data + limit) std::abort();
  } catch (const CorruptError&) {
  }
}

void round_trip(const uint8_t* data, size_t size) {
  Reader in{data, size};
  uint8_t control = static_cast<uint8_t>(in.take(1));
  bool leaf = control & 1;
  NodeFields f;
  f.kind = static_cast<NodeKind>((control >> 1) % 3);
  f.recno = in.take(5) & ((uint64_t{1} << 40) - 1);
  f.page_number = static_cast<uint32_t>(in.take(4));
  f.prefix = static_cast<uint32_t>(in.take(2)) % (kMaxNodeKeyField + 1);
  std::span<const uint8_t> rest(in.p, in.n);
  f.data = rest.subspan(0, std::min<size_t>(rest.size(), static_cast<size_t>(control >> 3) * 4));

  // The node after a zeroed b-tree page header (flags 0: Firebird's layout), as on a page.
  std::vector<uint8_t> buf(kBtreeHeaderSize + node_size(f, leaf) + 8, 0xEE);
  std::memset(buf.data(), 0, kBtreeHeaderSize);
  uint32_t written = encode_node(f, leaf, buf.data() + kBtreeHeaderSize);
  if (written != node_size(f, leaf)) std::abort();
  IndexNode node = decode_node(buf.data(), kBtreeHeaderSize + written, kBtreeHeaderSize, leaf);
  if (node.size != written || node.flag != node_flag(f)) std::abort();
  if (f.kind == NodeKind::EndLevel) {
    if (!node.is_end_level()) std::abort();
  } else {
    if (node.is_end_bucket() != (f.kind == NodeKind::EndBucket)) std::abort();
    if (node.recno != f.recno || node.prefix != f.prefix || node.length != f.data.size())
      std::abort();
    if (!leaf && node.page_number != f.page_number) std::abort();
    if (!f.data.empty() && std::memcmp(node.data, f.data.data(), f.data.size()) != 0) std::abort();
  }

  // Jump node: prefix, data, target offset.
  uint16_t target = static_cast<uint16_t>(f.page_number);
  std::vector<uint8_t> jbuf(jump_node_size(f.prefix, static_cast<uint32_t>(f.data.size())));
  uint32_t jw = encode_jump_node(f.prefix, f.data, target, jbuf.data());
  if (jw != jbuf.size()) std::abort();
  JumpNode j = decode_jump_node(jbuf.data(), jw, 0);
  if (j.size != jw || j.prefix != f.prefix || j.length != f.data.size() || j.node_offset != target)
    std::abort();
  if (!f.data.empty() && std::memcmp(j.data, f.data.data(), f.data.size()) != 0) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  decode_arbitrary(data, size);
  round_trip(data, size);
  return 0;
}
