// IndexFile::Impl, the state behind one open pbtree file (internal to file/): the page file
// with its log, the header and index root slots as of the last checkpoint, and the living
// trees with their buffer pool and page allocator. Shared by file/index_file.cc (open,
// trees, commit, close) and file/index_bulk_load.cc (bulk_load).
#pragma once

#include <pbtree/index_file.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/file_allocator.h"
#include "file/index_file_access.h"
#include "file/index_root.h"
#include "page/buffer_pool.h"
#include "page/file_header.h"
#include "page/page_file.h"

namespace pbtree {

struct IndexFile::Impl {
  PageFile file;
  bool writable = false;
  FileHeader header;
  std::vector<IndexInfo> slots;
  // The living B-trees (tree()): pool and allocator created on first use.
  size_t cache_frames = 0;
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<FileAllocator> allocator;
  std::map<std::string, std::unique_ptr<Tree::Body>> trees;
  bool dirty = false;          // roots or page count changed since the last flush
  CommitStats last;            // the last checkpoint's cost (from the header until one runs here)
  uint32_t build_threads = 0;  // set_build_threads; 0: hardware_concurrency

  // Checkpoint: the log's pages plus a new header (counter + 1, page count, cost counters)
  // go into the file. `extra_pages` were written straight into the file beforehand (bulk
  // load) and are counted in the cost. Throws IoError.
  void checkpoint(FileHeader h, uint32_t extra_pages) {
    ++h.checkpoint;
    CommitStats done =
        file.commit(h.checkpoint, h.page_count, [&](const CommitStats& st, uint8_t* page) {
          h.last_pages_written = st.pages_written + extra_pages;
          h.last_bytes_written = st.bytes_written + uint64_t{extra_pages} * h.page_size;
          h.last_bytes_synced = st.bytes_synced + uint64_t{extra_pages} * h.page_size;
          encode_header_page(h, page);
        });
    header = h;
    last = done;
    last.pages_written = h.last_pages_written;
    last.bytes_written = h.last_bytes_written;
    last.bytes_synced = h.last_bytes_synced;
  }

  // Writes the pool's dirty pages (no sync), so direct file reads see them.
  void write_back() {
    if (pool) pool->flush();
  }

  uint32_t page_size() const { return header.page_size; }
  // Pages physically present (with the log's). Those past header.page_count are an uncommitted
  // load's (docs/FORMAT.md 2.7): never adopted, cut off by a writer.
  uint32_t file_pages() const { return static_cast<uint32_t>(file.file_size() / page_size()); }
  uint32_t page_bound() const { return std::max(header.page_count, file_pages()); }

  const IndexInfo* find(const std::string& name) const {
    for (const IndexInfo& s : slots) {
      if (s.root_page != 0 && s.def.name == name) return &s;
    }
    return nullptr;
  }
};

}  // namespace pbtree
