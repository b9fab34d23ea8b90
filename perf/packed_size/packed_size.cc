// pbtree-packed-size TYPE FORMAT [--descending]: what the packed leaf blocks of issue 29
// (node/packed_block.h) would take for one index, measured by packing it. Reads lines
// "value,record number" on stdin (the seed: paste -d, of a t_int.csv.zst column and
// t_bigint_recnos.txt.zst), builds each normalized key, sorts the entries, cuts them into
// blocks of up to 128 consecutive entries, each coded after the block's common prefix, and
// fills leaf pages of 8192 bytes (a 39-byte page header and a 2-byte offset per block; the
// last block of a page cut to the entries that fit), twice: keys in key space only, then with
// the index's key type (value space where smaller). Prints, for each, entries, codec
// bytes/entry, leaf pages and leaf page bytes/entry. The codec only: no tree is built.
#include <pbtree/keys.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "node/packed_block.h"

int main(int argc, char** argv) {
  using namespace pbtree;
  if (argc < 3) {
    std::fprintf(stderr, "usage: pbtree-packed-size TYPE FORMAT [--descending] < value,recno\n");
    return 2;
  }
  try {
    const TypeSpec type = TypeSpec::parse(argv[1]);
    const KeyFormat format = parse_key_format(argv[2]);
    const bool descending = argc > 3 && std::strcmp(argv[3], "--descending") == 0;
    struct Entry {
      std::vector<uint8_t> key;
      uint64_t recno;
    };
    std::vector<Entry> entries;
    std::string line;
    KeyBuffer k;
    while (std::getline(std::cin, line)) {
      const size_t comma = line.find(',');
      if (comma == std::string::npos) continue;
      build_key(type, format, parse_value(type, line.substr(0, comma)), descending, k);
      entries.push_back(
          {{k.bytes().begin(), k.bytes().end()}, std::stoull(line.substr(comma + 1))});
    }
    std::sort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
      const int c = compare_keys(a.key, b.key, descending);
      return c != 0 ? c < 0 : a.recno < b.recno;
    });
    // With the key type, the codec may code a block in value space (node/packed_block.h).
    const PackedKeyType key_type{type, format, descending};
    constexpr size_t kPage = 8192, kHeader = 39, kSlot = 2;
    std::vector<uint8_t> out;
    std::vector<PackedEntry> block;
    PackedBlock decoded;
    std::vector<uint8_t> decoded_prefix;
    // Bytes of the block of entries [i, i + n): keys in key space only (value_space false), or
    // in value space where that is smaller.
    auto block_bytes = [&](size_t i, size_t n, bool value_space) -> size_t {
      const auto& first = entries[i].key;
      const auto& last = entries[i + n - 1].key;
      uint32_t prefix = 0;
      while (prefix < first.size() && prefix < last.size() && first[prefix] == last[prefix]) {
        ++prefix;
      }
      block.clear();
      for (size_t j = i; j < i + n; ++j) block.push_back({entries[j].key, entries[j].recno});
      out.clear();
      const PackedKeyType* kt = value_space ? &key_type : nullptr;
      const size_t size = encode_packed_block(block, prefix, descending, out, nullptr, kt);
      // Every block is decoded again and compared: a figure only for blocks that read back.
      decoded_prefix.assign(first.begin(), first.begin() + prefix);
      if (decode_packed_block(out, descending, decoded, kt, decoded_prefix) != size ||
          decoded.size() != n) {
        throw std::runtime_error("a block does not decode to its size");
      }
      for (size_t j = 0; j < n; ++j) {
        const auto k = decoded.key(j);
        const auto& want = entries[i + j].key;
        if (decoded.recnos[j] != entries[i + j].recno || k.size() + prefix != want.size() ||
            !std::equal(k.begin(), k.end(), want.begin() + prefix)) {
          throw std::runtime_error("a block does not decode to its entries");
        }
      }
      return size;
    };
    // Fills pages with blocks of up to 128 entries; a block that does not fit the rest of a
    // page is cut to the most entries that do (if any), the rest starting the next page.
    struct Fill {
      uint64_t bytes = 0, pages = 0;
    };
    auto fill = [&](bool value_space) {
      Fill f;
      size_t used = kPage;  // no page open
      for (size_t i = 0; i < entries.size();) {
        if (used == kPage) {
          ++f.pages;
          used = kHeader;
        }
        size_t n = std::min(kPackedBlockMax, entries.size() - i);
        size_t size = block_bytes(i, n, value_space);
        if (used + size + kSlot > kPage) {
          size_t lo = 0, hi = n - 1;  // the most entries that fit: in [lo, hi]
          while (lo < hi) {
            const size_t mid = (lo + hi + 1) / 2;
            if (used + block_bytes(i, mid, value_space) + kSlot <= kPage) {
              lo = mid;
            } else {
              hi = mid - 1;
            }
          }
          if (lo == 0) {
            used = kPage;  // close the page
            continue;
          }
          n = lo;
          size = block_bytes(i, n, value_space);
          used = kPage - 1;  // this block closes the page
        } else {
          used += size + kSlot;
        }
        f.bytes += size;
        i += n;
        if (used == kPage - 1) used = kPage;
      }
      return f;
    };
    const double n = static_cast<double>(entries.size());
    for (bool value_space : {false, true}) {
      const Fill f = fill(value_space);
      std::printf(
          "%s: entries %zu, codec %.3f bytes/entry, leaf pages %llu, %.3f leaf "
          "bytes/entry\n",
          value_space ? "value space" : "key space", entries.size(), n == 0 ? 0.0 : f.bytes / n,
          static_cast<unsigned long long>(f.pages), n == 0 ? 0.0 : f.pages * double(kPage) / n);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pbtree-packed-size: %s\n", e.what());
    return 1;
  }
  return 0;
}
