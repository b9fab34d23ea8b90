// The what-if estimator inside the library: its API is public, <pbtree/what_if.h>
// (WhatIfEstimator, WhatIfRow, choose_key_format, what_if, recompute_auto_choice); the
// estimator (btree/what_if.cc) runs FastLoaders over the node codecs included here.
#pragma once

#include <pbtree/what_if.h>

#include "node/btree_page.h"
#include "node/jump_table.h"
#include "node/node.h"
#include "node/page_image.h"
#include "node/page_search.h"
