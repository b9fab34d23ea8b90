// IndexCursor::State (internal): the library's B-tree cursor behind the installed IndexCursor
// (<pbtree/cursor.h>), shared by TypedIndex::scan and Tree::scan.
#pragma once

#include <pbtree/cursor.h>

#include "btree/btree.h"

namespace pbtree {

struct IndexCursor::State {
  Cursor cursor;
};

}  // namespace pbtree
