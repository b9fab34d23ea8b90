// Consumer of the installed pbtree package: builds a small index in a new file, reopens it and
// checks the statistics. Exit code 0 on success.
#include <cstdio>
#include <cstring>
#include <unistd.h>

#include <pbtree/pbtree.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  ::unlink(argv[1]);
  pbtree::TypeSpec type = pbtree::TypeSpec::parse("integer");
  pbtree::IndexDefinition def{"I_ID", type, pbtree::default_key_format(type), true, false};
  pbtree::EntryBatch batch;
  pbtree::KeyBuffer key;
  for (int i = 1; i <= 1000; ++i) {
    pbtree::build_key(type, def.format, pbtree::Value::exact(i), false, key);
    batch.add(key.bytes(), static_cast<uint64_t>(i - 1), static_cast<uint64_t>(i));
  }
  pbtree::IndexFile::open_or_create(argv[1], 8192)->bulk_load(def, batch);
  pbtree::IndexStats stats = pbtree::IndexFile::open(argv[1])->analyze("I_ID");
  std::printf("nodes %llu depth %u\n", static_cast<unsigned long long>(stats.nodes), stats.depth);
  return stats.nodes == 1000 && stats.depth == 1 ? 0 : 1;
}
