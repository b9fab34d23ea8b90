// pbtree-crash-child DB SEED [BATCHES]: the victim of tests/crash_kill_test.cc. Opens DB
// (index K, see tests/crash_ops.h) with a small buffer pool, prints "R" when open, then runs
// the batches of SEED's operation stream (toggle each key: insert if absent, else remove),
// checkpointing (IndexFile::flush) after each batch and printing "C <batches done>" (flushed)
// once the checkpoint has returned. Stops after BATCHES batches (default 1000000) unless killed.
// Exit codes: 0 done, 1 error (message on stderr), 2 usage.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "btree/btree.h"
#include <pbtree/index_file.h>
#include "crash_ops.h"

int main(int argc, char** argv) {
  using namespace pbtree;
  if (argc < 3) {
    std::fprintf(stderr, "usage: pbtree-crash-child DB SEED [BATCHES]\n");
    return 2;
  }
  const std::string db = argv[1];
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  const uint64_t batches = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1000000;
  try {
    auto file = IndexFile::open(db, true);
    file->set_cache_frames(10);  // small: dirty pages get evicted into the log between checkpoints
    BTree& tree = file->tree(crash::index_definition().name);
    std::printf("R\n");
    std::fflush(stdout);
    crash::OpStream ops(seed);
    for (uint64_t b = 1; b <= batches; ++b) {
      for (int64_t k : ops.next_batch()) {
        std::vector<uint8_t> key = crash::key_of(k);
        if (tree.contains(key, static_cast<uint64_t>(k))) {
          tree.remove(key, static_cast<uint64_t>(k));
        } else {
          tree.insert(key, static_cast<uint64_t>(k));
        }
      }
      file->flush();
      std::printf("C %llu\n", static_cast<unsigned long long>(b));
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pbtree-crash-child: %s\n", e.what());
    return 1;
  }
  return 0;
}
