// libFuzzer target for write-ahead logs (issue 10): the input (after byte 0) is written as the
// log "<db>-wal" beside a fixed valid pbtree file (a unique bigint index of 300 entries, 4 KiB
// pages, rewritten before every input), which is then opened read-only (a snapshot: a scan of
// the index) and, if byte 0 bit 3 is set, writable (recovery: the log is checked, then
// checkpointed or dropped; then a scan). Only pbtree's exceptions (pbtree::Error, KeyError)
// may come out; a crash, a sanitizer report, a hang or a huge file is a bug.
// Byte 0 bit 0 set: before writing, the header CRC, every frame's salt, frame CRC and image
// checksum (and, unless bit 1 is set, the image's page number), and every commit record's
// salt, frame count, batch CRC and CRC are made right, so the fuzzer gets past the checksums to
// the rules; bit 2: the header's file id is the db file's and commit numbers are raised to at
// least the file's commit counter.
#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <pbtree/keys.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "btree/btree.h"
#include "file/index_file_access.h"
#include "page/page_file.h"
#include "page/wal.h"

namespace {

using namespace pbtree;

// posix_io() without fdatasync: durability is not what is fuzzed, and syncs would cap the
// run at a few dozen inputs a second.
class NoSyncIo : public Io {
 public:
  int open(const std::string& path, int flags, mode_t mode) override {
    return posix_io().open(path, flags, mode);
  }
  int close(int fd) override { return posix_io().close(fd); }
  ssize_t pread(int fd, void* buf, size_t count, off_t offset) override {
    return posix_io().pread(fd, buf, count, offset);
  }
  ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) override {
    return posix_io().pwrite(fd, buf, count, offset);
  }
  int fdatasync(int) override { return 0; }
  int ftruncate(int fd, off_t length) override { return posix_io().ftruncate(fd, length); }
  int file_size(int fd, uint64_t* size) override { return posix_io().file_size(fd, size); }
  bool is_regular(int fd) override { return posix_io().is_regular(fd); }
  int unlink(const std::string& path) override { return posix_io().unlink(path); }
};

NoSyncIo& no_sync_io() {
  static NoSyncIo io;
  return io;
}

// In /dev/shm (RAM) when it is there: on a disk file system, rewriting the file for every
// input (truncate + write) cost more than the input's own work (ext4 flushes a truncated
// file on close).
const std::string& db_path() {
  static const std::string path =
      std::string(::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") + "/pbtree-fuzz-wal-" +
      std::to_string(static_cast<long>(::getpid())) + ".pbt";
  return path;
}

std::vector<uint8_t> read_whole(const std::string& path) {
  std::vector<uint8_t> out;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) std::abort();
  uint8_t buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  std::fclose(f);
  return out;
}

void write_whole(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::abort();
  std::fclose(f);
}

struct Pristine {
  std::vector<uint8_t> bytes;
  DbIdentity id;
};

// The db file, built once.
const Pristine& pristine() {
  static const Pristine p = [] {
    std::remove(db_path().c_str());
    std::remove(Wal::log_path(db_path()).c_str());
    {
      auto f = IndexFile::open_or_create(db_path(), 4096);
      IndexDefinition def;
      def.name = "I";
      def.type = TypeSpec::parse("bigint");
      def.format = default_key_format(def.type);
      def.unique = true;
      f->create_index(def);
      BTree& t = btree_of(*f, "I");
      KeyBuffer k;
      for (int v = 1; v <= 300; ++v) {
        build_key(def.type, def.format, parse_value(def.type, std::to_string(v)), false, k);
        t.insert(k.bytes(), static_cast<uint64_t>(v));
      }
      f->close();
    }
    Pristine out;
    out.bytes = read_whole(db_path());
    out.id.pbtree = true;
    out.id.page_size = get_u32(out.bytes.data() + 28);
    out.id.counter = get_u64(out.bytes.data() + 48);
    out.id.file_id = get_u64(out.bytes.data() + kFileIdOffset);
    std::atexit([] {
      std::remove(db_path().c_str());
      std::remove(Wal::log_path(db_path()).c_str());
    });
    return out;
  }();
  return p;
}

void fix_log(std::vector<uint8_t>& log, bool keep_numbers, bool own_file, const DbIdentity& db) {
  if (log.size() < kWalHeaderSizeV3) return;
  uint8_t* h = log.data();
  const bool v4 = get_u32(h + 8) == kWalVersion;  // 64-byte header, else a 40-byte one
  const size_t header_size = v4 ? kWalHeaderSize : kWalHeaderSizeV3;
  if (log.size() < header_size) return;
  if (own_file) put_u64(h + 24, db.file_id);
  if (v4) {
    if (own_file) put_u64(h + 32, db.counter);  // the base commit
    put_u32(h + 56, wal_crc(h, 56));
  } else {
    put_u32(h + 32, wal_crc(h, 32));
  }
  const uint32_t ps = get_u32(h + 12);
  if (ps < 4096 || ps > 32768 || (ps & (ps - 1)) != 0) return;
  const uint64_t salt = get_u64(h + 16);
  std::vector<uint32_t> crcs;
  size_t off = header_size;
  while (off + kWalFrameHeaderSize <= log.size()) {
    uint8_t* f = log.data() + off;
    const uint32_t kind = get_u32(f);
    if (kind == 1 && off + kWalFrameHeaderSize + ps <= log.size()) {
      put_u64(f + 8, salt);
      uint8_t* image = f + kWalFrameHeaderSize;
      if (!keep_numbers) put_u32(image + 12, get_u32(f + 4));
      put_u32(image + 4, page_checksum(image, ps));
      const uint32_t crc = wal_crc_frame(f, ps);
      put_u32(f + 16, crc);
      crcs.push_back(crc);
      off += kWalFrameHeaderSize + ps;
    } else if (kind == 2 && off + kWalCommitSize <= log.size()) {
      put_u64(f + 8, salt);
      put_u32(f + 4, static_cast<uint32_t>(crcs.size()));
      if (own_file && get_u64(f + 16) < db.counter) put_u64(f + 16, db.counter);
      put_u32(f + 28, wal_batch_crc(crcs));
      put_u32(f + 32, wal_crc(f, 32));
      crcs.clear();
      off += kWalCommitSize;
    } else {
      break;
    }
  }
}

// A scan (bounded) and verify of index I; CorruptError and KeyError are expected outcomes.
void read_index(IndexFile& file) {
  BTree& tree = btree_of(file, "I");
  const uint64_t cap = uint64_t{file.page_count()} * file.page_size();
  try {
    uint64_t seen = 0;
    for (Cursor c = tree.scan(); c.valid(); c.next()) {
      if (++seen > cap) std::abort();
    }
  } catch (const CorruptError&) {
  } catch (const KeyError&) {
  }
}

void open_and_read(bool writable) {
  try {
    auto f = IndexFile::open(db_path(), {.writable = writable, .io = &no_sync_io()});
    f->set_cache_frames(16);
    if (f->find_index("I")) read_index(*f);
    if (writable) f->close();
  } catch (const Error&) {  // KeyError included
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const Pristine& db = pristine();
  std::vector<uint8_t> log(data + 1, data + size);
  if (data[0] & 1) fix_log(log, data[0] & 2, data[0] & 4, db.id);
  write_whole(db_path(), db.bytes);
  write_whole(Wal::log_path(db_path()), log);
  open_and_read(false);
  if (data[0] & 8) open_and_read(true);
  std::remove(Wal::log_path(db_path()).c_str());
  return 0;
}
