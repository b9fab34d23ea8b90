// pbtree-matrix-rows: prints the isql-fb script of the combination matrix's Firebird 3 fixture
// (tests/firebird/make_matrix_fixture.sh runs it): per Firebird 3 type and NULL pattern that
// applies to it a table T_<TYPE>_<PATTERN> (ID, V) holding tests/support/matrix_rows.h's rows
// in row order, with an ascending index I_<TYPE>_<PATTERN>_A and a descending one
// I_<TYPE>_<PATTERN>_D on V (<PATTERN>: null_pattern_tag, e.g. ONE_EMPTY).
// usage: pbtree-matrix-rows DATABASE_PATH
#include <iostream>
#include <set>
#include <string>

#include "tests/support/matrix_rows.h"

int main(int argc, char** argv) {
  using namespace pbtree::testing;
  if (argc != 2) {
    std::cerr << "usage: pbtree-matrix-rows DATABASE_PATH\n";
    return 2;
  }
  std::cout << "set bail on;\nconnect '" << argv[1] << "';\n";
  std::set<std::string> done;
  for (const MatrixType& t : matrix_types()) {
    if (t.fb3 == nullptr || !done.insert(t.fb3_tag).second) continue;
    for (NullPattern p : kNullPatterns) {
      if (!null_pattern_applies(t, p)) continue;
      const std::string name = std::string(t.fb3_tag) + "_" + null_pattern_tag(p);
      std::cout << "create table T_" << name << " (ID integer not null, V " << t.fb3 << ");\n"
                << "create index I_" << name << "_A on T_" << name << " (V);\n"
                << "create descending index I_" << name << "_D on T_" << name << " (V);\n"
                << "commit;\n";
      const auto rows = matrix_rows(t, p, kMatrixFixtureRows, true);
      for (size_t i = 0; i < rows.size(); ++i) {
        std::cout << "insert into T_" << name << " values (" << i << ", ";
        const MatrixValue& v = rows[i].at(0);
        if (!v) {
          std::cout << "null";
        } else if (is_text_type(t.type)) {
          std::cout << "'" << *v << "'";
        } else {
          std::cout << *v;
        }
        std::cout << ");\n";
      }
      std::cout << "commit;\n";
    }
  }
  return 0;
}
