// libFuzzer target for the CSV input of `pbtree load` (tools/csv_reader.h, tools/csv_parallel.h):
// the parallel chunked parse must equal the serial parse for any input: the same entries
// (key, record number, line tag, in order), the same row count, or the same error message
// ("<file>:<line>: <what>"). Byte 0 picks the chunk size (low 5 bits: 1..32 bytes, edges
// everywhere, inside quoted fields too) and the long-record switch to a serial reader (high
// 3 bits: off, or after 4..28 bytes), byte 1 the column (1..3), the type (varchar(20) or integer),
// the header flag and a max_rows limit; the rest is the CSV text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tools/csv_parallel.h"
#include "tools/loader.h"

namespace {

using namespace pbtree;
using namespace pbtree::tools;

struct Result {
  std::vector<std::vector<uint8_t>> keys;
  std::vector<uint64_t> recnos, tags;
  uint64_t rows = 0;
  std::string error;
  bool operator==(const Result&) const = default;
};

void collect(const EntryBatch& b, Result& r) {
  for (const auto& it : b.items()) {
    auto k = b.key(it);
    r.keys.emplace_back(k.begin(), k.end());
    r.recnos.push_back(it.recno);
    r.tags.push_back(it.tag);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const size_t chunk = 1 + data[0] % 32;
  const uint8_t mode = data[1];
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);
  ColumnSource s;
  s.column = 1 + mode % 3;
  if ((mode >> 2) & 1) {
    s.type = TypeSpec::parse("integer");
    s.format = KeyFormat::Double;
  } else {
    s.type = TypeSpec::parse("varchar(20)");
    s.format = KeyFormat::Text;
  }
  s.header = (mode >> 3) & 1;
  s.max_rows = (mode >> 4) & 3;  // 0: all
  s.page_size = 4096;

  Result serial;
  try {
    EntryBatch b;
    CsvReader reader = CsvReader::from_string(text, "fuzz.csv");
    serial.rows = read_entries(reader, s, b);
    collect(b, serial);
  } catch (const std::exception& e) {
    serial = Result{};
    serial.error = e.what();
  }
  Result parallel;
  try {
    ParallelCsvOptions o;
    o.chunk_bytes = chunk;
    o.long_record = data[0] >> 5 == 0 ? size_t{1} << 20 : size_t{4} * (data[0] >> 5);
    o.threads = 2;
    Result got;
    got.rows = read_entries_parallel_text(text, "fuzz.csv", s, o,
                                          [&](EntryBatch&& b) { collect(b, got); });
    parallel = std::move(got);
  } catch (const std::exception& e) {
    parallel = Result{};
    parallel.error = e.what();
  }
  if (!(serial == parallel)) {
    std::fprintf(stderr, "serial: %llu rows, error '%s'\nparallel: %llu rows, error '%s'\n",
                 static_cast<unsigned long long>(serial.rows), serial.error.c_str(),
                 static_cast<unsigned long long>(parallel.rows), parallel.error.c_str());
    std::abort();
  }
  return 0;
}
