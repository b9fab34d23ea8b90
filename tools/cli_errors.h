// Errors of the command line itself (not of the library): ArgumentError, exit status 2.
#pragma once

#include <pbtree/errors.h>

namespace pbtree {

/// A command line that cannot run as given (arguments missing or contradicting each other,
/// an unknown type name, an unsupported page size): `pbtree` exits with 2, as for the errors
/// its option parser finds.
class ArgumentError : public UsageError {
 public:
  using UsageError::UsageError;
};

}  // namespace pbtree
