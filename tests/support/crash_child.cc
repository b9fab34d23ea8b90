// pbtree-crash-child DB SEED [BATCHES]: the victim of tests/durability/crash_kill_test.cc. Opens DB
// (index K, see tests/support/crash_ops.h) with a small buffer pool, prints "R" when open, then
// runs the batches of SEED's operation stream (toggle each key: insert if absent, else remove),
// checkpointing (IndexFile::flush) after each batch and printing "C <batches done>" (flushed)
// once the checkpoint has returned. Stops after BATCHES batches (default 1000000) unless killed.
// Exit codes: 0 done, 1 error (message on stderr), 2 usage.
// pbtree-crash-child --load DB NAME N | --create DB N: one bulk load of N entries into a new
// index NAME of DB, or into a new file DB (tests/durability/crash_load_kill_test.cc kills it).
#include <pbtree/index_file.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "btree/btree.h"
#include "file/file_create.h"
#include "file/index_file_access.h"
#include "tests/support/crash_ops.h"

namespace {

// N entries (bigint key i, record number i) for a bulk load.
pbtree::EntryBatch load_batch(uint64_t n) {
  pbtree::EntryBatch batch;
  for (uint64_t i = 0; i < n; ++i) {
    batch.add(pbtree::crash::key_of(static_cast<int64_t>(i)), i, i);
  }
  return batch;
}

// --load DB NAME N: bulk-loads a new index NAME of N entries into DB. --create DB N: creates
// DB (file/file_create.h) holding index K of N entries. Both print "R" before they start and
// "C 1" when done.
int run_load_mode(int argc, char** argv) {
  using namespace pbtree;
  const std::string mode = argv[1];
  if ((mode == "--load" && argc != 5) || (mode == "--create" && argc != 4)) {
    std::fprintf(stderr, "usage: pbtree-crash-child --load DB NAME N | --create DB N\n");
    return 2;
  }
  const std::string db = argv[2];
  const uint64_t n = std::strtoull(argv[argc - 1], nullptr, 10);
  try {
    EntryBatch batch = load_batch(n);
    IndexDefinition def = crash::index_definition();
    def.unique = false;
    if (mode == "--load") {
      def.name = argv[3];
      auto file = IndexFile::open(db, {.writable = true});
      std::printf("R\n");
      std::fflush(stdout);
      file->bulk_load(def, batch);
    } else {
      std::printf("R\n");
      std::fflush(stdout);
      if (!create_file_with(db, 4096, [&](IndexFile& f) { f.bulk_load(def, batch); })) {
        std::fprintf(stderr, "pbtree-crash-child: %s exists\n", db.c_str());
        return 1;
      }
    }
    std::printf("C 1\n");
    std::fflush(stdout);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pbtree-crash-child: %s\n", e.what());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace pbtree;
  if (argc >= 2 && (std::string(argv[1]) == "--load" || std::string(argv[1]) == "--create")) {
    return run_load_mode(argc, argv);
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: pbtree-crash-child DB SEED [BATCHES]\n");
    return 2;
  }
  const std::string db = argv[1];
  const uint64_t seed = std::strtoull(argv[2], nullptr, 10);
  const uint64_t batches = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1000000;
  try {
    auto file = IndexFile::open(db, {.writable = true});
    file->set_cache_frames(10);  // small: dirty pages get evicted into the log between checkpoints
    BTree& tree = btree_of(*file, crash::index_definition().name);
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
      file->commit();
      std::printf("C %llu\n", static_cast<unsigned long long>(b));
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pbtree-crash-child: %s\n", e.what());
    return 1;
  }
  return 0;
}
