// Cross-process locks of a pbtree file: open-file-description byte-range locks (fcntl
// F_OFD_SETLK, Linux >= 3.15) on three bytes far beyond any page of the db file itself. They
// are advisory (no I/O is blocked, no byte is written), belong to one open() of the file (so
// two IndexFile objects on one path in one process exclude each other exactly as two
// processes do), and vanish when the process holding them exits or crashes.
//
//   byte                  held                          by
//   kLockBase + 0 writer  exclusive, while open         the one writer (IndexFile opened writable)
//   kLockBase + 1 gate    shared, for a moment          a reader taking its snapshot
//                         exclusive, during a checkpoint the writer
//   kLockBase + 2 readers shared, while the snapshot    every reader (read-only IndexFile)
//                         lives
//                         exclusive, during a checkpoint the writer
//
// The design is SQLite's WAL mode without its shared-memory index (docs/FORMAT.md §3):
// a second writer fails with LockedError (after an optional busy timeout); a reader takes the
// gate, then the readers byte, then drops the gate, so a checkpoint that holds the gate keeps
// new readers out while it copies; a checkpoint needs both exclusively and is deferred (the
// log keeps growing) while any reader holds a snapshot; one that waits for readers holds the
// gate only for each try (page/wal.cc), so new readers never wait for it. The locks are on
// the inode: every name of the file (hard link, symbolic link, bind mount) shares them.
#pragma once

#include <sys/types.h>

#include <string>

namespace pbtree {

inline constexpr off_t kLockBase = off_t{1} << 62;

enum class LockByte : int { Writer = 0, Gate = 1, Readers = 2 };

/// Takes byte `b` of descriptor `fd` shared or exclusive without waiting. Returns false if
/// another open file description holds a conflicting lock. Throws IoError naming `path` on
/// any other failure (e.g. a file system without byte-range locks).
bool try_lock(int fd, LockByte b, bool exclusive, const std::string& path);
/// The same, retrying every millisecond or so for up to `timeout_ms` milliseconds (0: once).
bool lock_within(int fd, LockByte b, bool exclusive, int timeout_ms, const std::string& path);
/// Releases byte `b` (no error if not held).
void unlock(int fd, LockByte b);

/// Busy timeout used by opens that do not give one: how long a writable open waits for the
/// writer lock, in milliseconds (0, the initial value: do not wait). `pbtree --busy-timeout`
/// sets it. Thread-safe.
int default_busy_timeout_ms();
void set_default_busy_timeout_ms(int ms);

}  // namespace pbtree
