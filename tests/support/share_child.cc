// pbtree-share-child DB INDEX PAUSE_MS: a reader process for tests/share/share_process_test.cc.
// Opens DB read-only (a snapshot), reads the first 10 entries of INDEX, prints "paused\n" on
// stdout, sleeps PAUSE_MS inside the scan, then finishes it and prints the number of entries. Exit
// 0, or 1 with the error on stderr.
#include <pbtree/index_file.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include "btree/btree.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: pbtree-share-child DB INDEX PAUSE_MS\n");
    return 2;
  }
  try {
    auto file = pbtree::IndexFile::open(argv[1]);
    uint64_t n = 0;
    pbtree::IndexCursor c = file->tree(argv[2]).scan();
    for (; c.valid() && n < 10; c.next()) ++n;
    std::printf("paused\n");
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(argv[3])));
    for (; c.valid(); c.next()) ++n;
    std::printf("%llu\n", static_cast<unsigned long long>(n));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pbtree-share-child: %s\n", e.what());
    return 1;
  }
}
