// libFuzzer differential target of the build paths (issue 30): a small CSV of one column is
// loaded in every layout (kNodeLayouts) by every library build path, and each index must pass
// BTree::verify and read back as the sorted model: forward and backward scans equal to the
// entries sorted by (key, record number), and a find of every distinct key equal to its
// record numbers. Build paths: IndexFile::bulk_load at 1 and 2 threads, sorted runs spilled to
// a RunFile and merged into bulk_load_sorted (as `load --memory`), a bulk load of the first
// part then insert_batch of the rest (as `load --append`), and one-by-one BTree::insert.
//
// Input: byte 0 picks the type (low 3 bits: smallint, integer, bigint, int128, double,
// numeric(18,3), varchar(12), varchar(40)), the direction (bit 3) and the page size (bit 4:
// 4096 or 8192); byte 1 the runs (1 + low 4 bits) and where the append starts (high 4 bits,
// sixteenths of the rows); the rest is the CSV: one value per line, the row's ordinal its
// record number. An empty line is NULL, "" the empty string, ^ and $ the type's least and
// greatest value; a line that is no value of the type is skipped. At most 3000 rows.
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "btree/btree.h"
#include "btree/radix_sort.h"
#include "file/entry_runs.h"
#include "file/index_file_access.h"

namespace {

using namespace pbtree;
using Entry = std::pair<std::vector<uint8_t>, uint64_t>;

struct TypeCase {
  const char* type;
  const char* min;
  const char* max;
};
constexpr TypeCase kTypes[] = {
    {"smallint", "-32768", "32767"},
    {"integer", "-2147483648", "2147483647"},
    {"bigint", "-9223372036854775808", "9223372036854775807"},
    {"int128", "-170141183460469231731687303715884105728",
     "170141183460469231731687303715884105727"},
    {"double", "-1.7976931348623157e308", "1.7976931348623157e308"},
    {"numeric(18,3)", "-999999999999999.999", "999999999999999.999"},
    {"varchar(12)", "", "~~~~~~~~~~~~"},
    {"varchar(40)", "", "~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~"},
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz_build: %s\n", what.c_str());
  std::abort();
}

std::string dir() {
  static const std::string d = [] {
    const std::filesystem::path base = ::access("/dev/shm", W_OK) == 0
                                           ? std::filesystem::path("/dev/shm")
                                           : std::filesystem::temp_directory_path();
    const auto p = base / ("pbtree-fuzz-build-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    return p.string();
  }();
  return d;
}

void check(BTree& tree, const std::vector<Entry>& model, const std::string& what) {
  try {
    if (tree.verify().entries != model.size()) fail(what + ": verify counts another number");
    std::vector<Entry> forward, backward;
    for (Cursor c = tree.scan(); c.valid(); c.next()) {
      forward.emplace_back(std::vector<uint8_t>(c.key().begin(), c.key().end()), c.record_number());
    }
    ScanRange back;
    back.backward = true;
    for (Cursor c = tree.scan(back); c.valid(); c.next()) {
      backward.emplace_back(std::vector<uint8_t>(c.key().begin(), c.key().end()),
                            c.record_number());
    }
    std::reverse(backward.begin(), backward.end());
    if (forward != model) fail(what + ": forward scan differs from the model");
    if (backward != model) fail(what + ": backward scan differs from the model");
    for (size_t i = 0; i < model.size();) {
      size_t j = i;
      std::vector<uint64_t> want;
      while (j < model.size() && model[j].first == model[i].first)
        want.push_back(model[j++].second);
      if (tree.find(model[i].first) != want) fail(what + ": find differs from the model");
      i = j;
    }
  } catch (const std::exception& e) {
    fail(what + ": " + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const TypeCase& tc = kTypes[data[0] & 7];
  const bool descending = (data[0] >> 3) & 1;
  const uint32_t page_size = (data[0] >> 4) & 1 ? 8192 : 4096;
  const size_t runs = 1 + (data[1] & 15);
  const size_t append_at16 = data[1] >> 4;
  const TypeSpec type = TypeSpec::parse(tc.type);
  const KeyFormat format = default_key_format(type);

  // Rows: the entries (key, record number) in input order.
  std::vector<Entry> rows;
  std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  while (!text.empty() && rows.size() < 3000) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    KeyBuffer k;
    try {
      if (line.empty()) {
        build_key(type, format, Value::null(), descending, k);
      } else {
        std::string v(line == "\"\"" ? "" : line == "^" ? tc.min : line == "$" ? tc.max : line);
        build_key(type, format, parse_value(type, v), descending, k);
      }
    } catch (const std::exception&) {
      continue;  // not a value of the type (fuzz_key fuzzes the parser)
    }
    rows.emplace_back(std::vector<uint8_t>(k.bytes().begin(), k.bytes().end()), rows.size());
  }
  std::vector<Entry> model = rows;
  std::sort(model.begin(), model.end(), [&](const Entry& a, const Entry& b) {
    return compare_entry(a.first, a.second, b.first, b.second, descending) < 0;
  });
  auto batch_of = [&](size_t begin, size_t end) {
    EntryBatch b;
    for (size_t i = begin; i < end; ++i) b.add(rows[i].first, rows[i].second, i);
    return b;
  };

  const std::string path = dir() + "/f.pbt";
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  try {
    auto file = IndexFile::open_or_create(path, page_size);
    for (NodeLayout layout : kNodeLayouts) {
      const std::string l = layout == NodeLayout::Compact ? "C" : std::to_string(int(layout));
      IndexDefinition def;
      def.type = type;
      def.format = format;
      def.descending = descending;
      def.layout = layout;
      const std::string what = std::string(tc.type) + (descending ? " desc" : " asc") + " page " +
                               std::to_string(page_size) + " layout " + l;
      for (uint32_t threads : {1u, 2u}) {
        def.name = "B" + std::to_string(threads) + "_" + l;
        EntryBatch b = batch_of(0, rows.size());
        file->set_build_threads(threads);
        file->bulk_load(def, b);
        check(btree_of(*file, def.name), model,
              what + " bulk_load, threads " + std::to_string(threads));
      }
      {
        def.name = "R_" + l;
        RunFile rf(dir());
        std::vector<RunFile::Run> spilled;
        for (size_t r = 0; r < runs; ++r) {
          EntryBatch b = batch_of(rows.size() * r / runs, rows.size() * (r + 1) / runs);
          sort_entry_batch(b, descending);
          spilled.push_back(rf.append(b, 4096));
        }
        RunMerge merge(rf, spilled, descending, size_t{1} << 20);
        file->bulk_load_sorted(def, merge);
        check(btree_of(*file, def.name), model, what + " runs " + std::to_string(runs));
      }
      {
        def.name = "A_" + l;
        const size_t at = rows.size() * append_at16 / 16;
        EntryBatch first = batch_of(0, at);
        file->bulk_load(def, first);
        EntryBatch rest = batch_of(at, rows.size());
        if (rest.size() != 0) btree_of(*file, def.name).insert_batch(rest);
        check(btree_of(*file, def.name), model, what + " append at " + std::to_string(at));
      }
      {
        def.name = "I_" + l;
        file->create_index(def);
        BTree& tree = btree_of(*file, def.name);
        for (const Entry& e : rows) tree.insert(e.first, e.second);
        check(tree, model, what + " inserts");
      }
    }
    file->commit();
    file->close();
  } catch (const std::exception& e) {
    fail(std::string("build failed: ") + e.what());
  }
  std::filesystem::remove(path);
  std::filesystem::remove(path + "-wal");
  return 0;
}
