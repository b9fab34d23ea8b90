// The umbrella header of pbtree's installed API: errors, the shared types, normalized keys,
// SQL search semantics, the figures pbtree reports, injectable I/O, the index file, the
// typed tree and its cursor, bounded-memory bulk loading, what-if statistics, and the version.
#pragma once

#include <pbtree/bulk_loader.h>
#include <pbtree/cursor.h>
#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <pbtree/io.h>
#include <pbtree/keys.h>
#include <pbtree/search.h>
#include <pbtree/stats.h>
#include <pbtree/tree.h>
#include <pbtree/typed_index.h>
#include <pbtree/types.h>
#include <pbtree/version.h>
#include <pbtree/what_if.h>
