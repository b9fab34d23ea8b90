// libFuzzer target for whole files: the input (after byte 0) is written as a pbtree file and
// opened with IndexFile::open; then indexes(), find_index() and analyze() of every index run.
// Only pbtree's exceptions (CorruptError, IoError, UsageError, KeyError) may come out; a
// crash, a sanitizer report, a hang (page cycles must be detected: run with -timeout) or any
// other exception is a bug. Byte 0 bit 0 set: before writing, every whole page gets its page
// number (bytes 12..15, unless bit 1 is set) and a correct CRC-32C (bytes 4..7), page size from
// the header if valid, else 4096 — so the fuzzer gets past the checksums to the decoders.
#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "page/file_header.h"
#include "page/page_file.h"

namespace {

using namespace pbtree;

const std::string& scratch_path() {
  static const std::string path =
      "/tmp/pbtree-fuzz-open-" + std::to_string(static_cast<long>(::getpid())) + ".pbt";
  static const bool cleanup = [] {
    std::atexit([] { std::remove(scratch_path().c_str()); });
    return true;
  }();
  (void)cleanup;
  return path;
}

void fix_pages(std::vector<uint8_t>& file, bool keep_numbers) {
  uint32_t page_size = 4096;
  if (file.size() >= 32) {
    uint32_t claimed = get_u32(file.data() + 28);
    if (valid_page_size(claimed)) page_size = claimed;
  }
  for (size_t off = 0; off + page_size <= file.size(); off += page_size) {
    uint8_t* page = file.data() + off;
    if (!keep_numbers) put_u32(page + 12, static_cast<uint32_t>(off / page_size));
    put_u32(page + 4, page_checksum(page, page_size));
  }
}

void write_file(const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(scratch_path().c_str(), "wb");
  if (!f) std::abort();
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> file(data + 1, data + size);
  if (data[0] & 1) fix_pages(file, data[0] & 2);
  write_file(file);
  try {
    auto index_file = IndexFile::open(scratch_path());
    for (const IndexInfo& info : index_file->indexes()) {
      if (!index_file->find_index(info.def.name)) std::abort();
      try {
        IndexStats stats = index_file->analyze(info.def.name);
        if (stats.root_page != info.root_page) std::abort();
      } catch (const CorruptError&) {
      } catch (const KeyError&) {
      }
    }
    // The living tree over the buffer pool: a full scan (bounded: more entries than the file
    // can hold means a loop), a lookup, then verify().
    index_file->set_cache_frames(16);
    for (const IndexInfo& info : index_file->indexes()) {
      BTree& tree = btree_of(*index_file, info.def.name);
      const uint64_t cap = uint64_t{index_file->page_count()} * index_file->page_size();
      try {
        uint64_t seen = 0;
        for (Cursor c = tree.scan(); c.valid(); c.next()) {
          if (++seen > cap) std::abort();
        }
      } catch (const CorruptError&) {
      }
      try {
        const uint8_t key[] = {0xC0, 0x24};
        tree.find(key);
      } catch (const CorruptError&) {
      }
      try {
        tree.verify();
      } catch (const CorruptError&) {
      }
    }
  } catch (const CorruptError&) {
  } catch (const IoError&) {
  } catch (const UsageError&) {
  } catch (const KeyError&) {
  }
  return 0;
}
