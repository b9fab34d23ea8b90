// The first program of docs/LIBRARY.md, built against the installed pbtree package
// (find_package(pbtree)) and run by the install_consumer test: create a file and an index,
// insert, find, scan, commit, close, reopen. Exit code 0 on success.
#include <pbtree/pbtree.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string path = argv[1];
  ::unlink(path.c_str());
  try {
    // Create the file and one unique bigint index.
    auto file = pbtree::IndexFile::open_or_create(path, 8192);
    pbtree::IndexDefinition def;
    def.name = "I_ID";
    def.type = pbtree::TypeSpec::parse("bigint");
    def.format = pbtree::default_key_format(def.type);
    def.unique = true;
    file->create_index(def);

    // Insert values with their record numbers, then look one up.
    pbtree::TypedIndex index(*file, "I_ID");
    for (int i = 1; i <= 1000; ++i) index.insert(pbtree::Value::exact(i), 10000 + i);
    const std::vector<uint64_t> found = index.find("500");
    if (found != std::vector<uint64_t>{10500}) return 1;

    // Scan a range in value order.
    uint64_t in_range = 0;
    for (pbtree::IndexCursor c = index.scan(pbtree::Value::exact(10), pbtree::Value::exact(19));
         c.valid(); c.next()) {
      std::printf("%s -> %llu\n", index.value_text(c.key()).c_str(),
                  static_cast<unsigned long long>(c.record_number()));
      ++in_range;
    }
    if (in_range != 10) return 1;

    // Durable from here on; close() reports any failure.
    file->commit();
    file->close();

    // Reopen read-only: a snapshot of the last commit.
    auto again = pbtree::IndexFile::open(path);
    pbtree::TypedIndex reopened(*again, "I_ID");
    uint64_t entries = 0;
    for (pbtree::IndexCursor c = reopened.scan(); c.valid(); c.next()) ++entries;
    std::printf("entries after reopen: %llu\n", static_cast<unsigned long long>(entries));
    return entries == 1000 ? 0 : 1;
  } catch (const pbtree::Error& e) {
    std::fprintf(stderr, "pbtree error: %s\n", e.what());
    return 1;
  }
}
