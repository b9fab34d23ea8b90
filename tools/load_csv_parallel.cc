// BoundedLoad::read_csv (tools/load_pipeline.h): `pbtree load`'s parse in parallel chunks
// (tools/csv_parallel.h) feeding the bounded-memory sort buffers. The chunks arrive in input
// order on one thread at a time; each is appended to the buffer, which is sorted and spilled
// as a run (BoundedLoad::spill) when the next chunk would take it past the budget left after
// the chunks in flight.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <thread>

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
  // The sort buffer gets the other three quarters, whatever the chunk size or thread count,
  // so the runs (and their number) depend on the budget and the input alone.
  const size_t limit = memory_ - memory_ / 4;
  EntryBatch buffer;
  reserve_chunk(buffer, limit);
  size_t key_bytes = 0;
  uint64_t rows = 0;
  auto fits = [&](size_t length) {
    return buffer.size() == 0 || batch_sort_bytes(buffer.size() + 1, key_bytes + length) <= limit;
  };
  rows_ = read_entries_parallel(path, source, o, [&](EntryBatch&& chunk) {
    const size_t chunk_keys = batch_key_bytes(chunk);
    if (batch_sort_bytes(buffer.size() + chunk.size(), key_bytes + chunk_keys) <= limit) {
      rows += chunk.size();
      key_bytes += chunk_keys;
      buffer.append(std::move(chunk));
    } else {
      // The buffer fills within this chunk: entry by entry up to the budget, as read().
      for (const EntryBatch::Item& it : chunk.items()) {
        if (!fits(it.length)) {
          rows_ = rows;
          spill(buffer);
          reserve_chunk(buffer, limit);
          key_bytes = 0;
          progress_.phase("parse", rows, 0);
        }
        buffer.add(chunk.key(it), it.recno, it.tag);
        key_bytes += it.length;
        ++rows;
      }
    }
    progress_.set(rows);
  });
  if (runs_.empty()) {
    batch_ = std::move(buffer);  // all of the input in one buffer: no temporary file
  } else {
    spill(buffer);
  }
}

}  // namespace pbtree::tools
