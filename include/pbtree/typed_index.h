// A handle bound to one index of an IndexFile that builds every key from typed values with the
// index's own type, key format and descending flag (issue 9 item 4): insert(value, recno),
// remove, find(value), scan(from, to) with bounds in value order for descending indexes too,
// and a raw-key entry point that checks the key decodes under the index's format and
// re-encodes to the same bytes. Values are given as Value (<pbtree/keys.h>) or as the text the CLI
// reads ("-5", "12.50", "NULL" is not text: use Value::null()).
#pragma once

// The declarations live in <pbtree/tree.h> (TypedIndex) and <pbtree/cursor.h> (IndexCursor).
#include <pbtree/cursor.h>
#include <pbtree/tree.h>
