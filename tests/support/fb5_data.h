// The Firebird 5.0.4 databases of ../shared/data/firebird5/ for tests: where they are, and a
// database's bytes decompressed from its .fdb.zst (read in place, never changed).
#pragma once

#include <zstd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace pbtree::testdata {

/// The firebird5 data directory, with a trailing '/': beside the repository's parent (a
/// checkout next to ../shared) or one level further up (a worktree inside the checkout).
inline std::string fb5_dir() {
  for (const char* d : {PBTREE_SOURCE_DIR "/../shared/data/firebird5/",
                        PBTREE_SOURCE_DIR "/../../shared/data/firebird5/"}) {
    if (std::filesystem::is_directory(d)) return d;
  }
  return PBTREE_SOURCE_DIR "/../shared/data/firebird5/";
}

/// The bytes of database `name` ("fb5_small_8192"), or empty if it is missing or does not
/// decompress.
inline std::vector<uint8_t> fb5_bytes(const std::string& name) {
  std::ifstream in(fb5_dir() + name + ".fdb.zst", std::ios::binary);
  const std::string z((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const unsigned long long size = ZSTD_getFrameContentSize(z.data(), z.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) return {};
  std::vector<uint8_t> out(size);
  if (ZSTD_decompress(out.data(), out.size(), z.data(), z.size()) != size) return {};
  return out;
}

}  // namespace pbtree::testdata
