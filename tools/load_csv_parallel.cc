// BoundedLoad::read_csv (tools/load_pipeline.h): `pbtree load`'s parse in parallel chunks
// (tools/csv_parallel.h) feeding the library's BulkLoader. The chunks arrive in input order on
// one thread at a time; each is added to the loader, whose buffer (the budget left after the
// chunks in flight) is sorted and spilled as a run when it fills.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "tools/csv_parallel.h"
#include "tools/load_pipeline.h"

namespace pbtree::tools {

namespace {

uint32_t thread_count(uint32_t threads) {
  return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

// Bytes held per byte of a chunk in flight: its text, its entries (a 32-byte Item and the
// key per row of at least 2 bytes of text) and their growth while it is read.
constexpr size_t kInFlightPerChunkByte = 3;

}  // namespace

size_t BoundedLoad::chunk_bytes_for(size_t memory, uint32_t threads) {
  // A quarter of the budget for the chunks in flight: two per thread (the pipeline's
  // tokens) and the chunker's buffer (two more).
  const size_t chunks = size_t{2} * thread_count(threads) + 2;
  return std::clamp<size_t>(memory / 4 / (chunks * kInFlightPerChunkByte), size_t{4} << 10,
                            size_t{4} << 20);
}

void BoundedLoad::read_csv(const std::string& path, const ColumnSource& source, uint32_t threads) {
  progress_.phase("parse", 0, 0);
  ParallelCsvOptions o;
  o.threads = thread_count(threads);
  o.chunk_bytes = chunk_bytes_for(memory_, o.threads);
  if (const char* env = std::getenv("PBTREE_LOAD_CHUNK_BYTES")) {
    const long long v = std::atoll(env);
    if (v > 0) o.chunk_bytes = static_cast<size_t>(v);
  }
  // "% of input" on the progress line: bytes handed out of a plain file's size (a .zst or
  // standard input has no size to set them against).
  std::error_code ec;
  const uint64_t input_bytes =
      path == "-" || (path.size() >= 4 && path.compare(path.size() - 4, 4, ".zst") == 0) ||
              !std::filesystem::is_regular_file(path, ec)
          ? 0
          : std::filesystem::file_size(path, ec);
  if (input_bytes != 0 && !ec) {
    o.on_bytes = [this, input_bytes](uint64_t bytes) {
      progress_.set_input_fraction(
          std::min(1.0, static_cast<double>(bytes) / static_cast<double>(input_bytes)));
    };
  }
  // The sort buffer gets the other three quarters (bulk_options in tools/load_pipeline.cc),
  // whatever the chunk size or thread count, so the runs (and their number) depend on the
  // budget and the input alone.
  rows_ = read_entries_parallel(path, source, o, [&](EntryBatch&& chunk) {
    loader_.add(std::move(chunk));
    progress_.set(loader_.entries());
  });
}

}  // namespace pbtree::tools
