// libFuzzer target: arbitrary bytes as the pages 1..n of a Firebird database with 4 KiB
// pages (firebird/). Page 0 is a valid header whose RDB$PAGES pointer page is page 1; its
// ODS is chosen by the input's last byte when the input is not a whole number of pages
// (byte % 4: 0 ODS 12.0, 1 ODS 11.2, 2 ODS 13.0, 3 ODS 13.1), else ODS 12.0. Each 4096-byte
// chunk of the input becomes the next page (the last one zero-padded), with its pag_pageno
// set to its number so the checks get past it. The target reads the catalog
// (pointer pages, data pages, record fragments, RLE decompression, system relation records,
// index root pages), computes gstat's table figures of every table and of every pointer
// page taken as a table's first, and walks every page of type 7 as the root of an index
// (gstat figures, leaf entries, what-if over an integer key): each must succeed or throw
// CorruptError, UsageError or KeyError; any other exception, a crash, a hang or a sanitizer
// report is a bug. Seeds (fuzz/corpus/fuzz_firebird/) are pages of a real database made by
// isql-fb (ODS 12) and of real ODS 11.2, 13.0 and 13.1 files: fuzz/make_firebird_corpus.py.
#include <pbtree/errors.h>
#include <pbtree/keys.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "firebird/fdb_catalog.h"
#include "firebird/fdb_entries.h"
#include "firebird/fdb_file.h"
#include "firebird/fdb_stat.h"
#include "firebird/fdb_table_stat.h"
#include "firebird/fdb_what_if.h"

namespace {

using namespace pbtree;
using namespace pbtree::firebird;

constexpr uint32_t kPage = 4096;
constexpr size_t kMaxPages = 16;

template <typename F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const CorruptError&) {
  } catch (const UsageError&) {
  } catch (const KeyError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t pages = std::min(kMaxPages, (size + kPage - 1) / kPage);
  std::vector<uint8_t> image((pages + 1) * kPage, 0);
  image[0] = 1;  // header page
  const uint8_t variant = size % kPage != 0 ? data[size - 1] % 4 : 0;
  static const uint16_t kOdsWord[] = {0x800C, 0x800B, 0x800D, 0x800D};
  static const uint16_t kMinor[] = {0, 2, 0, 1};
  const uint16_t ps = kPage, ods = kOdsWord[variant];
  const uint32_t pages_ppg = 1;
  std::memcpy(&image[16], &ps, 2);
  std::memcpy(&image[18], &ods, 2);
  std::memcpy(&image[variant == 1 ? 62 : 64], &kMinor[variant], 2);
  std::memcpy(&image[20], &pages_ppg, 4);
  std::memcpy(image.data() + kPage, data, std::min(size, pages * kPage));
  for (uint32_t p = 1; p <= pages; ++p) std::memcpy(&image[p * kPage + 12], &p, 4);

  std::unique_ptr<FdbFile> file;
  expect_clean([&] { file = FdbFile::from_bytes("fuzz.fdb", image); });
  if (!file) return 0;
  expect_clean([&] {
    std::vector<FdbTable> catalog = read_catalog(*file);
    for (const FdbTable& t : catalog) {
      for (const FdbIndex& ix : t.indexes) expect_clean([&] { analyze_fdb_index(*file, t, ix); });
    }
    // gstat -r's table figures (firebird/fdb_table_stat.h) of every table.
    std::vector<const FdbTable*> all;
    for (const FdbTable& t : catalog) all.push_back(&t);
    expect_clean([&] { analyze_fdb_tables(*file, all, read_format_lengths(*file, catalog)); });
  });
  // Every pointer page as the first one of its relation: data pages, versions, fragments, blobs.
  for (uint32_t p = 1; p <= pages; ++p) {
    if (image[p * kPage] != 4) continue;
    FdbTable table;
    std::memcpy(&table.id, &image[p * kPage + 26], 2);
    table.pointer_page = p;
    expect_clean([&] { analyze_fdb_tables(*file, {&table}, {}); });
  }
  for (uint32_t p = 1; p <= pages; ++p) {
    if (image[p * kPage] != 7) continue;
    FdbTable table;
    std::memcpy(&table.id, &image[p * kPage + 28], 2);
    FdbIndex index;
    index.id = image[p * kPage + 32];
    index.root_page = p;
    FdbSegment seg;
    seg.field_type = 8;  // integer: idx_numeric keys
    index.segments.push_back(seg);
    expect_clean([&] { analyze_fdb_index(*file, table, index); });
    expect_clean([&] {
      uint64_t n = 0;
      for_each_fdb_entry(*file, index, [&](std::span<const uint8_t>, uint64_t) { ++n; });
    });
    expect_clean([&] { fdb_what_if(*file, index); });
  }
  return 0;
}
