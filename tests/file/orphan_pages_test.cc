// A failed bulk load of a new index leaves nothing behind (issue #10 item 2). A fault-injecting
// Io fails one system call of the load with ENOSPC or EFBIG: on a page write of the new index
// (the n-th write after the load starts is page n + 5: the first new page, 5, is its root,
// written last) the load cuts its pages off again (the file is byte for byte as before); on the log
// write of its commit the pages stay past the header's page count, `verify` passes with a note, and
// the next writer cuts them off (verify then passes without the note).
#include <gtest/gtest.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "page/io.h"
#include "tests/support/cli_test_util.h"
#include "tests/support/watchdog.h"

namespace pbtree::tools::testing {
namespace {

using ::pbtree::testing::Watchdog;

// FaultyIo whose one failing call reports `error` instead of EIO (ENOSPC: disk full, EFBIG:
// over the file size limit).
class ErrnoIo : public FaultyIo {
 public:
  explicit ErrnoIo(int error) : error_(error) {}
  ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) override {
    const bool before = fired();
    ssize_t n = FaultyIo::pwrite(fd, buf, count, offset);
    if (n < 0 && !before && fired()) errno = error_;
    return n;
  }

 private:
  int error_;
};

IndexDefinition bigint_index(const std::string& name) {
  IndexDefinition d;
  d.name = name;
  d.type = TypeSpec::parse("bigint");
  d.format = default_key_format(d.type);
  return d;
}

void add_keys(EntryBatch& batch, const IndexDefinition& d, int from, int to) {
  KeyBuffer kb;
  for (int i = from; i < to; ++i) {
    build_key(d.type, d.format, Value::exact(i), false, kb);
    batch.add(kb.bytes(), static_cast<uint64_t>(i), static_cast<uint64_t>(i));
  }
}

class FileFaultedLoad : public ::testing::Test {
 protected:
  FileFaultedLoad() : dir_("orphan"), db_(dir_.file("o.pbt")) {}
  void SetUp() override {
    auto f = IndexFile::open_or_create(db_, 4096);
    EntryBatch batch;
    add_keys(batch, bigint_index("K"), 0, 500);
    f->bulk_load(bigint_index("K"), batch);
  }
  // The number of the first pwrite of the load of index L (20000 keys) that goes to the log
  // (the commit), counted on a copy of the file.
  uint64_t first_log_pwrite() {
    const std::string copy = dir_.file("copy.pbt");
    std::filesystem::copy_file(db_, copy);
    FaultyIo io;
    auto f = IndexFile::open(copy, {.writable = true, .io = &io});
    io.clear_trace();
    const uint64_t start = io.calls(FaultyIo::Op::Pwrite);
    EntryBatch batch;
    add_keys(batch, bigint_index("L"), 0, 20000);
    f->bulk_load(bigint_index("L"), batch);
    uint64_t n = 0;
    for (const std::string& call : io.trace()) {
      if (call.rfind("pwrite ", 0) != 0) continue;
      ++n;
      if (call.size() > 4 && call.compare(call.size() - 4, 4, "-wal") == 0) break;
    }
    EXPECT_LT(start, io.calls(FaultyIo::Op::Pwrite));
    return n;
  }
  // Loads L with the `nth` pwrite failing with `error`; returns the error's message.
  std::string failing_load(int error, uint64_t nth) {
    ErrnoIo io(error);
    auto f = IndexFile::open(db_, {.writable = true, .io = &io});
    EntryBatch batch;
    add_keys(batch, bigint_index("L"), 0, 20000);
    io.arm(FaultyIo::Op::Pwrite, nth);
    try {
      f->bulk_load(bigint_index("L"), batch);
    } catch (const IoError& e) {
      EXPECT_TRUE(io.fired());
      return e.what();
    }
    return "no error";
  }
  ScratchDir dir_;
  std::string db_;
};

TEST_F(FileFaultedLoad, DiskFullOnAPageWriteLeavesTheFileAsItWas) {
  Watchdog w(120);
  const std::string before = read_bytes(db_);
  EXPECT_EQ(failing_load(ENOSPC, 3),
            db_ + ": write of page 8: " + std::string(std::strerror(ENOSPC)));
  EXPECT_EQ(read_bytes(db_), before);
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "OK: " + db_ + ": 1 index, 5 pages (2 fixed, 3 b-tree, 0 free), 500 entries\n");
}

TEST_F(FileFaultedLoad, FileTooLargeOnAPageWriteLeavesTheFileAsItWas) {
  Watchdog w(120);
  const std::string before = read_bytes(db_);
  EXPECT_EQ(failing_load(EFBIG, 40),
            db_ + ": write of page 45: " + std::string(std::strerror(EFBIG)));
  EXPECT_EQ(read_bytes(db_), before);
  EXPECT_EQ(run({"verify", db_}).code, 0);
}

TEST_F(FileFaultedLoad, DiskFullOnTheCommitLeavesPagesThatTheNextWriterCutsOff) {
  Watchdog w(120);
  const uint64_t nth = first_log_pwrite();
  const std::string message = failing_load(ENOSPC, nth);
  EXPECT_NE(message.find(std::strerror(ENOSPC)), std::string::npos) << message;
  const uint64_t file_pages = std::filesystem::file_size(db_) / 4096;
  ASSERT_GT(file_pages, 5u);
  auto r = run({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out,
            "note: " + db_ + ": " + std::to_string(file_pages - 5) +
                " pages past the header's page count 5 (pages 5.." +
                std::to_string(file_pages - 1) +
                "), left by a load that did not commit: unreferenced; the next writer cuts them "
                "off\n"
                "OK: " +
                db_ + ": 1 index, 5 pages (2 fixed, 3 b-tree, 0 free), 500 entries\n");
  EXPECT_EQ(run({"find", db_, "--index", "L", "1"}).code, 1);  // no index L
  auto ins = run({"insert", db_, "--index", "K", "1000", "1000"});
  ASSERT_EQ(ins.code, 0) << ins.err;
  r = run({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "OK: " + db_ + ": 1 index, 5 pages (2 fixed, 3 b-tree, 0 free), 501 entries\n");
  EXPECT_EQ(std::filesystem::file_size(db_), 5u * 4096);
  // And the load works afterwards.
  auto f = IndexFile::open(db_, {.writable = true});
  EntryBatch batch;
  add_keys(batch, bigint_index("L"), 0, 20000);
  f->bulk_load(bigint_index("L"), batch);
  f.reset();
  r = run({"verify", db_});
  EXPECT_EQ(r.code, 0) << r.out;
}

}  // namespace
}  // namespace pbtree::tools::testing
