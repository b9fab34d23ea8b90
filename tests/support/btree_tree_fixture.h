// Test support for the B-tree tests: a temporary page file, a buffer pool over it, a simple
// page allocator (next page number or a freed one) and key helpers.
#pragma once

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "page/buffer_pool.h"
#include "page/page_file.h"

namespace pbtree::testing {

/// A file name in the temp directory, removed at destruction.
class TempPath {
 public:
  TempPath() {
    static std::atomic<int> counter{0};
    path_ = (std::filesystem::temp_directory_path() /
             fmt::format("pbtree-tree-test-{}-{}", ::getpid(), counter++))
                .string();
    std::filesystem::remove(path_);
  }
  ~TempPath() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Pages 1, 2, ... then freed ones (lowest first). Counts pages in use.
class CountingAllocator : public PageAllocator {
 public:
  uint32_t allocate() override {
    ++in_use_;
    if (!free_.empty()) {
      uint32_t p = *free_.begin();
      free_.erase(free_.begin());
      return p;
    }
    return next_++;
  }
  void release(uint32_t page_no) override {
    if (!free_.insert(page_no).second)
      throw UsageError(fmt::format("page {} freed twice", page_no));
    --in_use_;
  }
  uint64_t in_use() const { return in_use_; }

 private:
  uint32_t next_ = 1;
  std::set<uint32_t> free_;
  uint64_t in_use_ = 0;
};

/// A tree in a fresh temporary file.
struct TreeEnv {
  explicit TreeEnv(bool unique = false, bool descending = false, uint32_t page_size = 4096,
                   size_t frames = 64, uint16_t jump_interval = 576,
                   NodeLayout layout = NodeLayout::Firebird)
      : file(PageFile::create(tmp.path(), page_size)), pool(file, frames, &check_btree_frame) {
    IndexDefinition def;
    def.name = "T";
    def.unique = unique;
    def.descending = descending;
    def.layout = layout;
    uint32_t root = BTree::create_empty(pool, alloc, 0, jump_interval, layout);
    tree = std::make_unique<BTree>(pool, alloc, root, def, 0, jump_interval,
                                   [this](uint32_t r) { root_changes.push_back(r); });
  }
  TempPath tmp;
  PageFile file;
  BufferPool pool;
  CountingAllocator alloc;
  std::unique_ptr<BTree> tree;
  std::vector<uint32_t> root_changes;
};

/// Big-endian bytes of `v` (memcmp order = numeric order for unsigned values).
inline std::vector<uint8_t> be_key(uint64_t v, int bytes = 8) {
  std::vector<uint8_t> k(bytes);
  for (int i = bytes - 1; i >= 0; --i) {
    k[i] = static_cast<uint8_t>(v & 0xFF);
    v >>= 8;
  }
  return k;
}

inline std::vector<uint8_t> bytes_of(const std::string& s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

/// Every (key, recno) of a scan, in scan order.
inline std::vector<std::pair<std::vector<uint8_t>, uint64_t>> collect(Cursor c) {
  std::vector<std::pair<std::vector<uint8_t>, uint64_t>> out;
  for (; c.valid(); c.next()) {
    out.emplace_back(std::vector<uint8_t>(c.key().begin(), c.key().end()), c.record_number());
  }
  return out;
}

}  // namespace pbtree::testing
