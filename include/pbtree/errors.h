// Error types of pbtree: one base, pbtree::Error, and a kind per expected outcome, so a caller
// can tell a busy file from a corrupt one without parsing messages. Every message names the
// file and, where there is one, the page; values appear as the CLI prints them. The kinds
// and the CLI exit code of each are listed in docs/LIBRARY.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace pbtree {

/// Base of every error pbtree throws on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A system call on the index file or its log failed (open, pread, pwrite, fdatasync,
/// ftruncate, fcntl); the message holds the path, the page number if any, and
/// strerror(errno). `error_number` (errno, 0 if unknown), `operation` ("fdatasync") and
/// `file` are set where the call site knows them. CLI exit code 1.
class IoError : public Error {
 public:
  explicit IoError(const std::string& what) : Error(what) {}
  IoError(const std::string& what, int error_number, std::string operation, std::string file)
      : Error(what),
        error_number(error_number),
        operation(std::move(operation)),
        file(std::move(file)) {}
  int error_number = 0;
  std::string operation;
  std::string file;
};

/// The file or a page in it is malformed: wrong magic, unknown format version or page size,
/// truncated file, bad checksum, a page type that does not belong where it is found, node or
/// length fields out of bounds. The message names the file, page number and page type.
/// `file` (empty if unknown), `page` (page number, -1 if unknown) and `page_type` ("b-tree",
/// "header"...; empty if unknown) are set where the check knows them. CLI exit code 1.
class CorruptError : public Error {
 public:
  explicit CorruptError(const std::string& what) : Error(what) {}
  CorruptError(const std::string& what, std::string file, int64_t page, std::string page_type)
      : Error(what), file(std::move(file)), page(page), page_type(std::move(page_type)) {}
  std::string file;
  int64_t page = -1;
  std::string page_type;
};

/// A request that contradicts the file's contents: an index name that exists or does not,
/// a page size that differs from the file's, a duplicate in a unique index.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// A duplicate: a unique index would get two equal non-NULL keys, or any index an equal (key,
/// record number) pair. Thrown by Tree::insert, Tree::insert_batch, TypedIndex::insert and
/// IndexFile::bulk_load. `index`: the index name. `value`: the key as the CLI prints it
/// (key_value_text). `record_number`: for a unique violation the record number already stored
/// (bulk_load: the first of the two in index order), for an equal pair the repeated one.
/// `tag_a`/`tag_b`: the callers' tags of the two entries (bulk_load; insert_batch sets tag_b to the
/// new entry's tag; 0 where there is none). Messages, e.g.
///   unique index U: value -5 already exists (record 1000001)
///   index I: entry (5, 7) already exists
///   unique index U: value 7 appears twice (entries 2 and 4)       (bulk_load)
class DuplicateKeyError : public UsageError {
 public:
  DuplicateKeyError(const std::string& what, std::string index, std::string value,
                    uint64_t record_number, uint64_t tag_a = 0, uint64_t tag_b = 0)
      : UsageError(what),
        index(std::move(index)),
        value(std::move(value)),
        record_number(record_number),
        tag_a(tag_a),
        tag_b(tag_b) {}
  std::string index;
  std::string value;
  uint64_t record_number;
  uint64_t tag_a, tag_b;
};

/// Another IndexFile (in this or another process) holds the lock this open or checkpoint
/// needs: the writer lock (a second writer), or, for a checkpoint that must wait, readers
/// holding snapshots. `file` is the db path. CLI exit code 3.
class LockedError : public Error {
 public:
  LockedError(const std::string& what, std::string file) : Error(what), file(std::move(file)) {}
  std::string file;
};

/// Something named is not there: no index of that name, no entry (key, record number) to
/// remove. The message names the file or index and shows the value as the CLI prints it.
class NotFoundError : public UsageError {
 public:
  using UsageError::UsageError;
};

/// A change (insert, remove, load, commit, checkpoint) on a file opened read-only.
class ReadOnlyError : public UsageError {
 public:
  using UsageError::UsageError;
};

}  // namespace pbtree
