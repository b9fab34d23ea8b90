# Find module of Intel ISA-L (Debian 12: libisal-dev), used for the CRC-32C of util/crc32c.cc.
# Defines ISAL_FOUND, ISAL_INCLUDE_DIR, ISAL_LIBRARY and the imported target ISAL::isal.
# Installed beside pbtreeConfig.cmake, so a consumer of the static libpbtree.a finds it too.
find_path(ISAL_INCLUDE_DIR isa-l/crc.h)
find_library(ISAL_LIBRARY isal)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(ISAL
  REQUIRED_VARS ISAL_LIBRARY ISAL_INCLUDE_DIR
  REASON_FAILURE_MESSAGE "Intel ISA-L (isa-l/crc.h, libisal) not found: install the Debian package libisal-dev (scripts/install-deps.sh)")
if(ISAL_FOUND AND NOT TARGET ISAL::isal)
  add_library(ISAL::isal UNKNOWN IMPORTED)
  set_target_properties(ISAL::isal PROPERTIES
    IMPORTED_LOCATION "${ISAL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${ISAL_INCLUDE_DIR}")
endif()
mark_as_advanced(ISAL_INCLUDE_DIR ISAL_LIBRARY)
