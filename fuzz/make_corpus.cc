// Writes the seed corpus of the fuzz targets (fuzz/corpus/<target>/) from real library
// output: small pbtree files (bigint, varchar and numeric indexes, 4096 and 8192-byte pages),
// their B-tree pages, encoded nodes and jump nodes, normalized keys and value texts.
// Usage: pbtree-fuzz-corpus <corpus dir>. Run by hand when a format changes; the output is
// committed (total well under 2 MB).
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/packed_block.h"
#include "node/page_image.h"
#include "node/page_search.h"

namespace {

using namespace pbtree;
using Bytes = std::vector<uint8_t>;
namespace fs = std::filesystem;

void put(const fs::path& dir, const std::string& name, const Bytes& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

Bytes slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

IndexDefinition def(const std::string& name, const std::string& type, KeyFormat format,
                    bool descending) {
  IndexDefinition d;
  d.name = name;
  d.type = TypeSpec::parse(type);
  d.format = format;
  d.descending = descending;
  return d;
}

// A file with one index of `count` values from `value(i)`; returns its bytes.
template <typename F>
Bytes make_file(const fs::path& scratch, uint32_t page_size, const IndexDefinition& d, int count,
                F value) {
  fs::remove(scratch);
  {
    auto f = IndexFile::open_or_create(scratch.string(), page_size);
    EntryBatch batch;
    for (int i = 0; i < count; ++i) {
      std::string text = value(i);
      KeyBuffer key;
      build_key(d.type, d.format, parse_value(d.type, text), d.descending, key);
      batch.add(key.bytes(), static_cast<uint64_t>(i) * 37 + 1, static_cast<uint64_t>(i));
    }
    f->bulk_load(d, batch);
  }
  Bytes bytes = slurp(scratch.string());
  fs::remove(scratch);
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <corpus dir>\n", argv[0]);
    return 2;
  }
  fs::path root = argv[1];
  fs::path scratch = fs::temp_directory_path() / ("pbtree-corpus-" + std::to_string(::getpid()));

  struct FileSeed {
    std::string name;
    uint32_t page_size;
    Bytes bytes;
  };
  std::vector<FileSeed> files;
  files.push_back(
      {"bigint_1500_4k", 4096,
       make_file(scratch, 4096, def("I_BIG", "bigint", KeyFormat::RescaledDouble, false), 1500,
                 [](int i) { return std::to_string(int64_t{i} * 1000003 - 7); })});
  files.push_back({"bigint_desc_bcd_300_4k", 4096,
                   make_file(scratch, 4096, def("I_BCD", "bigint", KeyFormat::Bcd, true), 300,
                             [](int i) { return std::to_string(int64_t{i} * 91 - 5000); })});
  files.push_back({"varchar_400_4k", 4096,
                   make_file(scratch, 4096, def("I_TXT", "varchar(20)", KeyFormat::Text, false),
                             400, [](int i) { return "key-" + std::to_string(i % 350); })});
  files.push_back(
      {"numeric_dec128_50_8k", 8192,
       make_file(scratch, 8192, def("I_NUM", "numeric(12,2)", KeyFormat::Decimal128, false), 50,
                 [](int i) { return std::to_string(i * 13) + ".25"; })});
  files.push_back({"empty_index_4k", 4096,
                   make_file(scratch, 4096, def("I_E", "integer", KeyFormat::Double, false), 0,
                             [](int i) { return std::to_string(i); })});

  // fuzz_open: byte 0 = mode (0 raw, 1 checksums fixed after mutation).
  for (const FileSeed& f : files) {
    for (uint8_t mode : {0, 1}) {
      Bytes in{mode};
      in.insert(in.end(), f.bytes.begin(), f.bytes.end());
      put(root / "fuzz_open", f.name + "_mode" + std::to_string(mode), in);
    }
  }
  // fuzz_page: every B-tree page (page 2 on) of the smaller files, a few of the large one.
  for (const FileSeed& f : files) {
    size_t pages = f.bytes.size() / f.page_size;
    for (size_t p = 2; p < pages && p < 6; ++p) {
      put(root / "fuzz_page", f.name + "_page" + std::to_string(p),
          Bytes(f.bytes.begin() + p * f.page_size, f.bytes.begin() + (p + 1) * f.page_size));
    }
  }
  // fuzz_node: control byte, recno (5), page (4), prefix (2), data; plus raw node bytes.
  for (uint8_t control : {0x01, 0x02, 0x05, 0x20, 0x41, 0x80, 0xFE}) {
    Bytes in{control, 0x21, 0x43, 0x05, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x03, 0x00};
    for (int i = 0; i < 32; ++i) in.push_back(static_cast<uint8_t>(0xC0 + i));
    put(root / "fuzz_node", "fields_" + std::to_string(control), in);
  }
  {
    const Bytes data{0xC0, 0x24, 0x11};
    for (bool leaf : {true, false}) {
      Bytes in{static_cast<uint8_t>(leaf ? 1 : 0), 2};
      Bytes node(32);
      NodeFields nf;
      nf.recno = 1234567;
      nf.page_number = 77;
      nf.prefix = 2;
      nf.data = data;
      uint32_t n = encode_node(nf, leaf, node.data());
      in.insert(in.end(), node.begin(), node.begin() + n);
      put(root / "fuzz_node", std::string("node_") + (leaf ? "leaf" : "upper"), in);
      Bytes jin{0, 2};
      Bytes jump(32);
      uint32_t j = encode_jump_node(1, data, 300, jump.data());
      jin.insert(jin.end(), jump.begin(), jump.begin() + j);
      put(root / "fuzz_node", std::string("jump_") + (leaf ? "a" : "b"), jin);
    }
  }
  // fuzz_key: byte 0 even = stored key bytes; odd = type selector byte + value text.
  struct KeySeed {
    const char* type;
    KeyFormat format;
    const char* text;
  };
  const KeySeed keys[] = {
      {"bigint", KeyFormat::RescaledDouble, "-9223372036854775808"},
      {"bigint", KeyFormat::Bcd, "123456789012"},
      {"integer", KeyFormat::Double, "-17"},
      {"double", KeyFormat::Double, "3.25e-300"},
      {"int128", KeyFormat::Bcd, "-170141183460469231731687303715884105728"},
      {"numeric(18,4)", KeyFormat::Decimal128, "12345.6789"},
      {"varchar(40)", KeyFormat::Text, "hello world"},
  };
  int n = 0;
  for (const KeySeed& k : keys) {
    TypeSpec t = TypeSpec::parse(k.type);
    for (bool descending : {false, true}) {
      KeyBuffer key;
      build_key(t, k.format, parse_value(t, k.text), descending, key);
      Bytes in{0};
      in.insert(in.end(), key.data, key.data + key.length);
      put(root / "fuzz_key", "key_" + std::to_string(n++), in);
    }
  }
  // Type selectors follow kTypes of fuzz_key.cc.
  const std::pair<uint8_t, const char*> texts[] = {{0, "-32768"},
                                                   {1, "2147483647"},
                                                   {2, "-9223372036854775808"},
                                                   {3, "170141183460469231731687303715884105727"},
                                                   {4, "-1.5e308"},
                                                   {4, "inf"},
                                                   {5, "-99.99"},
                                                   {7, "0.000000001"},
                                                   {8, "99999999999999.9999"},
                                                   {10, "-12345678901234567890123456.123456789012"},
                                                   {11, "x"},
                                                   {12, "abc  "}};
  for (const auto& [type, text] : texts) {
    Bytes in{1, type};
    for (const char* c = text; *c; ++c) in.push_back(static_cast<uint8_t>(*c));
    put(root / "fuzz_key", "text_" + std::to_string(n++), in);
  }
  // fuzz_packed: packed leaf blocks (node/packed_block.h) in each key and record-number mode.
  {
    struct Run {
      const char* name;
      std::vector<Bytes> keys;
      std::vector<uint64_t> recnos;
    };
    std::vector<Run> runs(4);
    runs[0].name = "constant";
    runs[1].name = "for_patched";
    runs[2].name = "duplicates_for";
    runs[3].name = "raw";
    for (int i = 0; i < 60; ++i) {
      runs[0].keys.push_back({0x40, static_cast<uint8_t>(2 * i + 1)});
      runs[0].recnos.push_back(100 + 3 * i);
      runs[1].keys.push_back({0x41, static_cast<uint8_t>(i * i % 251), 0x07});
      runs[1].recnos.push_back(i % 20 == 19 ? 100000 + i : i + 1);
      runs[2].keys.push_back({0x42, static_cast<uint8_t>(i / 3 + 1)});
      runs[2].recnos.push_back((i % 3) * 1000 + i);
      Bytes wide(18, 0x55);
      wide[17] = static_cast<uint8_t>(i + 1);
      runs[3].keys.push_back(wide);
      runs[3].recnos.push_back(7);
    }
    std::sort(runs[1].keys.begin(), runs[1].keys.end());
    std::sort(runs[1].recnos.begin(), runs[1].recnos.end());
    for (Run& r : runs) {
      std::vector<PackedEntry> entries;
      for (size_t i = 0; i < r.keys.size(); ++i) {
        const uint64_t recno = r.name == std::string("raw") ? i + 1 : r.recnos[i];
        entries.push_back({r.keys[i], recno});
      }
      Bytes block{0};  // byte 0: ascending, no key type (fuzz/fuzz_packed.cc)
      encode_packed_block(entries, 0, false, block);
      put(root / "fuzz_packed", r.name, block);
    }
  }
  return 0;
}
