// Reading a write-ahead log "<db>-wal" (layout at the top of page/wal.h): scan_log() walks the
// header, the frames and the commit records and reports the committed state it holds, checking
// everything before anything is applied (docs/FORMAT.md "Checks before a log is used"). Used by the
// writer (adopt or replay at open), by readers (their snapshot) and by fuzz/fuzz_wal.cc.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "page/io.h"

namespace pbtree {

inline constexpr uint8_t kWalMagic[8] = {0x50, 0x42, 0x54, 0x57, 0x41, 0x4C, 0x0D, 0x0A};
inline constexpr uint32_t kWalVersion = 4;  ///< base commit, db identity; 1..3 are read
inline constexpr uint32_t kWalVersion3 = 3;
inline constexpr uint32_t kWalVersion2 = 2;
inline constexpr uint32_t kWalVersion1 = 1;
inline constexpr size_t kWalHeaderSize = 64;
inline constexpr size_t kWalHeaderSizeV3 = 40;  ///< versions 2 and 3
inline constexpr size_t kWalHeaderSizeV1 = 32;
inline constexpr size_t kWalFrameHeaderSize = 24;
inline constexpr size_t kWalCommitSize = 40;
inline constexpr uint32_t kWalFrameImage = 1;
inline constexpr uint32_t kWalFrameCommit = 2;

/// One frame of the log.
struct WalFrame {
  uint64_t offset = 0;  ///< of its 24-byte frame header in the log
  uint32_t crc = 0;     ///< frame CRC
  uint32_t pos = 0;     ///< position in its batch
};

/// What the db file says about itself (its page 0 as stored in the file, not the log).
struct DbIdentity {
  bool pbtree = false;      ///< bytes 16..23 are the pbtree magic
  uint32_t page_size = 0;   ///< header bytes 28..31
  uint64_t counter = 0;     ///< commit counter, header bytes 48..55
  uint64_t file_id = 0;     ///< header bytes 80..87
  uint64_t file_pages = 0;  ///< whole pages in the file (fstat), if page_size is known
  uint64_t dev = 0;         ///< st_dev of the file (fstat)
  uint64_t ino = 0;         ///< st_ino of the file (fstat)
};

/// What a log holds, as scan_log() found it.
struct WalScan {
  uint64_t size = 0;            ///< log length in bytes
  bool foreign = false;         ///< not empty and does not start with the log magic: a file
                                ///< pbtree did not write (never deleted or overwritten)
  bool header_ok = false;       ///< magic, known version, header CRC, plausible page size
  bool header_damaged = false;  ///< the magic, then an unknown version, or a whole header that
                                ///< fails its CRC with bytes after it (frames that may be
                                ///< committed). The frames after a bad CRC are scanned with the
                                ///< first frame's salt and the expected page size, so the caller
                                ///< can tell a torn reset (every committed page already in the
                                ///< file) from changes the file lacks; never reset on its own
  std::string header_problem;   ///< why the header is damaged (with header_damaged)
  uint32_t version = 0;
  uint32_t page_size = 0;
  uint64_t salt = 0;
  uint64_t file_id = 0;  ///< 0 in a version 1 log
  uint64_t base = 0;     ///< version 4: the db file's commit when the log was started
  uint64_t db_dev = 0;   ///< version 4: st_dev of the db file that started the log
  uint64_t db_ino = 0;   ///< version 4: st_ino of the db file that started the log
  uint64_t header_size = kWalHeaderSize;
  std::map<uint32_t, WalFrame> committed;  ///< page -> its newest committed frame
  uint32_t batches = 0;                    ///< commit records accepted
  uint32_t committed_frames = 0;           ///< frames of those batches
  uint64_t committed_end = 0;              ///< end of the last accepted commit record (or header)
  uint64_t counter = 0;                    ///< commit counter of the last accepted commit record
  uint32_t page_count = 0;                 ///< db page count of the last accepted commit record
  uint32_t tail_frames = 0;                ///< valid frames after the last accepted commit record
  std::string problem;                     ///< why the scan stopped at a frame that looked valid
                                           ///< but broke a rule (empty: torn or end of log)
};

/// Scans the log open on `fd`. Never reads more than the log holds and never trusts a size
/// field before checking it; a log whose page size is not `expected_page_size` (when nonzero)
/// yields header_ok = false with `problem` set. Throws IoError only for failing reads.
WalScan scan_log(Io& io, int fd, const std::string& path, uint32_t expected_page_size);

/// Why a scanned log must not be used for the db file `db` (empty: it may): no committed
/// batch, another file id (stale: left by another file of that name), a version 4 log whose
/// base commit is not the file's commit and whose last commit is not either (the log does
/// not start where the file is: a copy or backup of the file beside a later log; the file at
/// the last commit is a checkpoint cut short, replayed again), a commit counter
/// below the db header's (stale: an older log, e.g. beside a copy of the file), a page size
/// that differs, or a last page count with pages that are neither in the file nor in the log
/// (every page below the count is one or the other: a crafted count would make a checkpoint
/// write a huge sparse file). The text is for a warning.
std::string wal_rejection(const WalScan& s, const DbIdentity& db);

/// Reads the identity fields of the db file's page 0 from `fd` (not through the log).
/// Throws IoError.
DbIdentity read_db_identity(Io& io, int fd, const std::string& path);

/// CRC-32C (Castagnoli; as the page checksums) of n bytes.
uint32_t wal_crc(const uint8_t* p, size_t n);
/// CRC of a frame: of its bytes 0..15 and the page_size image bytes after its 24-byte header.
uint32_t wal_crc_frame(const uint8_t* frame, uint32_t page_size);
/// CRC of a batch: of the frame CRCs, 4 bytes each little-endian, in frame order.
uint32_t wal_batch_crc(const std::vector<uint32_t>& frame_crcs);

}  // namespace pbtree
