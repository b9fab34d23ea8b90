// The second consumer of the installed package (install_consumer test): one index driven with
// normalized keys through pbtree::Tree, opened with OpenOptions; bulk load, find, scan, insert,
// remove, commit, checkpoint, backup and statistics, and every failure caught as
// pbtree::Error (a key too long, a second writer, an unknown index, a change on a read-only
// file). Prints one line per step; exit code 0 when every figure is the expected one.
#include <pbtree/pbtree.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

std::vector<uint8_t> key_of(const pbtree::IndexDefinition& def, int64_t v) {
  pbtree::KeyBuffer k;
  pbtree::build_key(def.type, def.format, pbtree::Value::exact(v), def.descending, k);
  return {k.data, k.data + k.length};
}

// Runs `f` and reports whether it threw a pbtree::Error (any kind).
template <typename F>
bool throws_pbtree_error(F f) {
  try {
    f();
  } catch (const pbtree::Error& e) {
    std::printf("  caught: %s\n", e.what());
    return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string path = argv[1];
  const std::string copy = path + ".backup";
  ::unlink(path.c_str());
  ::unlink((path + "-wal").c_str());
  ::unlink(copy.c_str());
  std::printf("pbtree %s\n", PBTREE_VERSION_STRING);
  try {
    pbtree::IndexFile::open_or_create(path, 4096)->close();
    auto file = pbtree::IndexFile::open(
        path, {.writable = true, .busy_timeout_ms = 0, .cache_bytes = 1 << 20, .build_threads = 2});

    // Bulk load 10,000 bigint keys (even values 0..19998), record number = value + 1.
    pbtree::IndexDefinition def;
    def.name = "I_ID";
    def.type = pbtree::TypeSpec::parse("bigint");
    def.format = pbtree::default_key_format(def.type);
    pbtree::EntryBatch batch;
    for (int64_t v = 0; v < 20000; v += 2) {
      batch.add(key_of(def, v), static_cast<uint64_t>(v) + 1, static_cast<uint64_t>(v));
    }
    file->bulk_load(def, batch);

    pbtree::Tree tree = file->tree("I_ID");
    expect(tree.find(key_of(def, 500)) == std::vector<uint64_t>{501}, "find 500 -> 501");
    expect(tree.find(key_of(def, 501)).empty(), "find 501 -> nothing");

    // Insert odd values 1..99, remove 0, then scan [0, 10] in key order.
    for (int64_t v = 1; v < 100; v += 2) tree.insert(key_of(def, v), static_cast<uint64_t>(v) + 1);
    tree.remove(key_of(def, 0), 1);
    pbtree::ScanRange range;
    range.lower = pbtree::KeyBound{key_of(def, 0), true};
    range.upper = pbtree::KeyBound{key_of(def, 10), true};
    std::vector<uint64_t> recnos;
    for (pbtree::IndexCursor c = tree.scan(range); c.valid(); c.next()) {
      recnos.push_back(c.record_number());
    }
    expect(recnos == std::vector<uint64_t>{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, "scan [0, 10]");
    expect(tree.contains(key_of(def, 99), 100), "contains (99, 100)");
    expect(tree.verify().entries == 10049, "verify: 10,049 entries");

    // Every failure is a pbtree::Error.
    const std::vector<uint8_t> too_long(4096 / 4, 0x41);
    expect(throws_pbtree_error([&] { tree.insert(too_long, 1); }), "key too long");
    expect(throws_pbtree_error([&] { tree.insert(key_of(def, 2), 100000); }) == false,
           "an equal value with another record number: fine in a non-unique index");
    expect(throws_pbtree_error([&] { tree.insert(key_of(def, 2), 100000); }), "duplicate entry");
    expect(throws_pbtree_error([&] { file->tree("NO_SUCH"); }), "unknown index");
    expect(throws_pbtree_error([&] { pbtree::IndexFile::open(path, {.writable = true}); }),
           "second writer");
    expect(throws_pbtree_error([&] { pbtree::TypeSpec::parse("bigintx"); }), "bad type name");

    file->commit();
    expect(file->log_path() == path + "-wal", "the writer's log beside the file");
    expect(file->checkpoint(1000), "checkpoint");
    expect(file->last_checkpoint().pages_written > 0, "checkpoint wrote pages");
    file->backup(copy);
    file->close();

    // The backup, read-only: the same entries; changes refused.
    auto backup = pbtree::IndexFile::open(copy);
    pbtree::Tree again = backup->tree("I_ID");
    uint64_t entries = 0;
    for (pbtree::IndexCursor c = again.scan(); c.valid(); c.next()) ++entries;
    expect(entries == 10050, "backup holds 10,050 entries");
    expect(throws_pbtree_error([&] { again.insert(key_of(def, 7), 1); }), "read-only insert");
    const pbtree::IndexStats stats = backup->analyze("I_ID");
    std::printf("  depth %u, leaf buckets %llu, nodes %llu\n", stats.depth,
                static_cast<unsigned long long>(stats.leaf_buckets),
                static_cast<unsigned long long>(stats.nodes));
    expect(stats.nodes == 10050, "statistics: 10,050 nodes");
  } catch (const pbtree::Error& e) {
    std::fprintf(stderr, "pbtree error: %s\n", e.what());
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
