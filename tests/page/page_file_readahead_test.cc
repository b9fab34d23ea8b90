// Tests of PageFile's access advice (page/page_file.h, read()): POSIX_FADV_RANDOM on every
// descriptor it opens, and POSIX_FADV_WILLNEED of the window ahead once reads from the file
// run in page order. An Io that records every advise() call stands between it and the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "page/io.h"
#include "page/page_file.h"

namespace pbtree {
namespace {

constexpr uint32_t kPageSize = 4096;
constexpr uint32_t kPages = 300;
// PageFile::kReadaheadBytes at 4 KiB pages.
constexpr uint32_t kWindow = PageFile::kReadaheadBytes / kPageSize;

// (offset in pages, length in pages, advice) of one advise() call.
using Advice = std::tuple<uint64_t, uint64_t, int>;

// FaultyIo (never armed here) forwards every call to posix_io(); this adds a record of advise().
class RecordingIo : public FaultyIo {
 public:
  int advise(int fd, off_t offset, off_t length, int advice) override {
    std::lock_guard lock(advice_mutex_);
    advice_.emplace_back(uint64_t(offset) / kPageSize, uint64_t(length) / kPageSize, advice);
    return posix_io().advise(fd, offset, length, advice);
  }
  std::vector<Advice> advice_calls(int advice) const {
    std::lock_guard lock(advice_mutex_);
    std::vector<Advice> out;
    for (const Advice& a : advice_) {
      if (std::get<2>(a) == advice) out.push_back(a);
    }
    return out;
  }

 private:
  mutable std::mutex advice_mutex_;
  std::vector<Advice> advice_;
};

class PageFileReadahead : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "pbtree_readahead_" + std::to_string(::getpid()) + ".pbt";
    std::remove(path_.c_str());
    PageFile f = PageFile::create(path_, kPageSize);
    std::vector<uint8_t> page(kPageSize, 0);
    for (uint32_t p = 0; p < kPages; ++p) {
      page[0] = 7;  // b-tree
      f.write_direct(p, page.data());
    }
  }
  void TearDown() override { std::remove(path_.c_str()); }

  // Opens the file read-only through `io` and reads `pages` in that order.
  void read_pages(RecordingIo& io, const std::vector<uint32_t>& pages) {
    PageFile f = PageFile::open(path_, false, io);
    f.set_page_size(kPageSize);
    std::vector<uint8_t> out(kPageSize);
    for (uint32_t p : pages) f.read(p, out.data());
  }

  std::string path_;
};

TEST_F(PageFileReadahead, OpenAdvisesRandomAccessForTheWholeFile) {
  RecordingIo io;
  read_pages(io, {});
  EXPECT_EQ(io.advice_calls(POSIX_FADV_RANDOM), (std::vector<Advice>{{0, 0, POSIX_FADV_RANDOM}}));
}

TEST_F(PageFileReadahead, RandomReadsAskForNoPagesAhead) {
  RecordingIo io;
  read_pages(io, {10, 50, 20, 200, 5, 120});
  EXPECT_EQ(io.advice_calls(POSIX_FADV_WILLNEED), std::vector<Advice>{});
}

TEST_F(PageFileReadahead, ThreeReadsInPageOrderAskForTheWindowAfterTheThird) {
  RecordingIo io;
  read_pages(io, {10, 11, 12});
  EXPECT_EQ(io.advice_calls(POSIX_FADV_WILLNEED),
            (std::vector<Advice>{{13, kWindow, POSIX_FADV_WILLNEED}}));
}

TEST_F(PageFileReadahead, TwoReadsInPageOrderAskForNothing) {
  RecordingIo io;
  read_pages(io, {10, 11});
  EXPECT_EQ(io.advice_calls(POSIX_FADV_WILLNEED), std::vector<Advice>{});
}

TEST_F(PageFileReadahead, GapsOfUpToFourPagesStillCountAsInOrder) {
  RecordingIo io;
  read_pages(io, {10, 12, 16});
  EXPECT_EQ(io.advice_calls(POSIX_FADV_WILLNEED),
            (std::vector<Advice>{{17, kWindow, POSIX_FADV_WILLNEED}}));
}

TEST_F(PageFileReadahead, AGapOfFivePagesEndsTheRun) {
  RecordingIo io;
  read_pages(io, {10, 15, 20});
  EXPECT_EQ(io.advice_calls(POSIX_FADV_WILLNEED), std::vector<Advice>{});
}

TEST_F(PageFileReadahead, ALongScanAsksAgainHalfWayIntoTheWindow) {
  RecordingIo io;
  std::vector<uint32_t> pages;
  for (uint32_t p = 10; p <= 80; ++p) pages.push_back(p);
  read_pages(io, pages);
  // First at page 12 for 13..140; again at page 76 (76 + 1 + kWindow / 2 = 141): 141..204.
  EXPECT_EQ(io.advice_calls(POSIX_FADV_WILLNEED),
            (std::vector<Advice>{{13, kWindow, POSIX_FADV_WILLNEED},
                                 {141, 76 + 1 + kWindow - 141, POSIX_FADV_WILLNEED}}));
}

TEST_F(PageFileReadahead, ASecondScanElsewhereAsksForItsOwnWindow) {
  RecordingIo io;
  read_pages(io, {200, 201, 202, 10, 11, 12});
  EXPECT_EQ(io.advice_calls(POSIX_FADV_WILLNEED),
            (std::vector<Advice>{{203, kWindow, POSIX_FADV_WILLNEED},
                                 {13, kWindow, POSIX_FADV_WILLNEED}}));
}

}  // namespace
}  // namespace pbtree
