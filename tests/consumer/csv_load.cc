// The third consumer of the installed package (install_consumer test): a CSV file bulk-loaded
// in bounded memory through pbtree::BulkLoader. It writes id,value rows, reads them back line
// by line, and loads the value column into a new index with a 64 KiB budget, so the entries are
// sorted and spilled as runs to a temporary file and merged into the build. Then it checks the
// index, a unique index refusing a repeated value (the two lines named by their tags), and a
// progress hook. Prints one line per step; exit code 0 when every figure is the expected one.
#include <pbtree/pbtree.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace {

int failures = 0;

void expect(bool ok, const char* what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
  if (!ok) ++failures;
}

// Reads `csv` (id,value per line) into `loader`: the value as the key, the id as the record
// number, the line number as the tag.
void load_csv(const std::string& csv, pbtree::BulkLoader& loader) {
  const pbtree::IndexDefinition& def = loader.definition();
  std::ifstream in(csv);
  std::string line;
  pbtree::KeyBuffer key;
  for (uint64_t line_no = 1; std::getline(in, line); ++line_no) {
    const size_t comma = line.find(',');
    const uint64_t id = std::stoull(line.substr(0, comma));
    const pbtree::Value value = pbtree::parse_value(def.type, line.substr(comma + 1));
    pbtree::build_key(def.type, def.format, value, def.descending, key);
    loader.add(key.bytes(), id, line_no);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string path = argv[1];
  const std::string csv = path + ".csv";
  ::unlink(path.c_str());
  ::unlink((path + "-wal").c_str());
  try {
    // 50,000 rows: id 1..50000, value (id * 7919) mod 10007, so values repeat.
    {
      std::ofstream out(csv);
      for (uint64_t id = 1; id <= 50000; ++id) out << id << ',' << (id * 7919) % 10007 << '\n';
    }
    auto file = pbtree::IndexFile::open_or_create(path, 4096);

    pbtree::IndexDefinition def;
    def.name = "I_VALUE";
    def.type = pbtree::TypeSpec::parse("integer");
    def.format = pbtree::default_key_format(def.type);
    uint64_t phases = 0, last_count = 0;
    pbtree::BulkLoadOptions options;
    options.memory = pbtree::kMinBulkLoadMemory;  // 64 KiB: about 600 entries per run
    options.temp_dir = ".";
    options.on_phase = [&](std::string_view, uint64_t, uint64_t) { ++phases; };
    options.on_progress = [&](uint64_t done) { last_count = done; };
    pbtree::BulkLoader loader(def, options);
    load_csv(csv, loader);
    expect(loader.entries() == 50000, "50,000 entries read");
    expect(loader.runs() > 10, "spilled as sorted runs");
    const pbtree::IndexInfo info = loader.build(*file);
    expect(info.def.name == "I_VALUE", "index I_VALUE built");
    expect(last_count == 50000, "progress hook counted every entry");
    expect(phases > 10, "progress hook saw each run's phase");

    pbtree::Tree tree = file->tree("I_VALUE");
    expect(tree.verify().entries == 50000, "verify: 50,000 entries");
    pbtree::KeyBuffer key;
    pbtree::build_key(def.type, def.format, pbtree::Value::exact(7919 % 10007), false, key);
    const std::vector<uint64_t> ids = tree.find(key.bytes());
    expect(!ids.empty() && ids.front() == 1, "value 7919 -> id 1 first");

    // A unique index over the same column: a repeated value, caught with both lines.
    def.name = "U_VALUE";
    def.unique = true;
    pbtree::BulkLoader unique(def, {.memory = pbtree::kMinBulkLoadMemory, .temp_dir = "."});
    load_csv(csv, unique);
    bool refused = false;
    try {
      unique.build(*file);
    } catch (const pbtree::DuplicateKeyError& e) {
      std::printf("  caught: %s (lines %llu and %llu)\n", e.what(),
                  static_cast<unsigned long long>(e.tag_a),
                  static_cast<unsigned long long>(e.tag_b));
      refused = e.tag_a != e.tag_b && e.tag_a != 0 && e.tag_b != 0;
    }
    expect(refused, "unique index: a repeated value refused, both lines named");
    expect(!file->find_index("U_VALUE"), "the refused index is not in the file");
  } catch (const pbtree::Error& e) {
    std::fprintf(stderr, "pbtree error: %s\n", e.what());
    ::unlink(csv.c_str());
    return 1;
  }
  ::unlink(csv.c_str());
  return failures == 0 ? 0 : 1;
}
