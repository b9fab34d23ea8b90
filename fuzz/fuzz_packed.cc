// libFuzzer target for the packed leaf block codec (node/packed_block.h): any input either
// decodes or throws CorruptError (nothing else, no read past the input); a block that decodes
// is re-encoded from its entries and must decode to the same entries again. Byte 0 picks the
// direction and whether the key type (bigint, decimal128) is known.
#include <pbtree/errors.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "node/packed_block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pbtree;
  // Byte 0: bit 0 descending, bit 1 with the key type bigint (decimal128), so value-space
  // blocks decode too. The rest is the block.
  if (size == 0) return 0;
  const bool descending = (data[0] & 1) != 0;
  const PackedKeyType kt{TypeSpec::parse("bigint"), KeyFormat::Decimal128, descending};
  const PackedKeyType* key_type = (data[0] & 2) != 0 ? &kt : nullptr;
  const std::span<const uint8_t> in(data + 1, size - 1);
  PackedBlock block;
  try {
    decode_packed_block(in, descending, block, key_type);
  } catch (const CorruptError&) {
    return 0;
  }
  std::vector<PackedEntry> entries;
  for (size_t i = 0; i < block.size(); ++i) entries.push_back({block.key(i), block.recnos[i]});
  std::vector<uint8_t> again;
  encode_packed_block(entries, 0, descending, again, nullptr, key_type);
  PackedBlock back;
  if (decode_packed_block(again, descending, back, key_type) != again.size() ||
      back.keys != block.keys || back.key_end != block.key_end || back.recnos != block.recnos) {
    std::abort();
  }
  return 0;
}
