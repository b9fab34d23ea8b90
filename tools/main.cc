// Entry point of the `pbtree` executable; all work is in tools/cli.cc.
#include <iostream>

#include "tools/cli.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  return pbtree::tools::run_cli(argc, argv, std::cout, std::cerr);
}
