// The umbrella header of pbtree's installed API: errors, the shared types, normalized keys,
// the figures pbtree reports, injectable I/O and the index file.
#pragma once

#include <pbtree/errors.h>
#include <pbtree/index_file.h>
#include <pbtree/io.h>
#include <pbtree/keys.h>
#include <pbtree/stats.h>
#include <pbtree/typed_index.h>
#include <pbtree/types.h>
