# ctest script: installs the already built pbtree into a scratch prefix, then configures,
# builds and runs tests/consumer (three programs using find_package(pbtree CONFIG), and every
# C++ block of docs/LIBRARY.md), then builds raw_tree.cc again through pkg-config against the
# shared library and runs it.
# Inputs: SOURCE_DIR, BINARY_DIR, GENERATOR, BUILD_TYPE.
set(prefix ${BINARY_DIR}/consumer-test/prefix)
set(build ${BINARY_DIR}/consumer-test/build)
file(REMOVE_RECURSE ${BINARY_DIR}/consumer-test)
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()
run(${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
# docs/LIBRARY.md's C++ blocks, built beside the consumers (the first one also runs).
set(blocks ${BINARY_DIR}/consumer-test/library-blocks)
run(python3 ${SOURCE_DIR}/scripts/check_docs.py --extract-library-blocks ${blocks})
file(GLOB block_files ${blocks}/block_*.cc)
list(LENGTH block_files block_count)
if(block_count EQUAL 0)
  message(FATAL_ERROR "no C++ block extracted from docs/LIBRARY.md")
endif()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${prefix}
    -DPBTREE_LIBRARY_BLOCKS=${blocks})
run(${CMAKE_COMMAND} --build ${build})
run(${build}/consumer ${BINARY_DIR}/consumer-test/consumer.pbt)
run(${build}/consumer_raw_tree ${BINARY_DIR}/consumer-test/raw_tree.pbt)
run(${build}/consumer_csv_load ${BINARY_DIR}/consumer-test/csv_load.pbt)
run(${build}/library_block_01 ${BINARY_DIR}/consumer-test/library_block_01.pbt)
message(STATUS "docs/LIBRARY.md: ${block_count} C++ blocks built, block_01 ran")
# The same program built without CMake, through pkg-config, against the shared library.
if(EXISTS ${prefix}/lib/pkgconfig/pbtree.pc OR EXISTS ${prefix}/lib/x86_64-linux-gnu/pkgconfig/pbtree.pc)
  file(GLOB pc_dir ${prefix}/lib/pkgconfig ${prefix}/lib/*/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} "${pc_dir}")
  execute_process(COMMAND pkg-config --cflags --libs pbtree OUTPUT_VARIABLE flags
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs pbtree failed")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(c++ ${SOURCE_DIR}/tests/consumer/raw_tree.cc -o ${build}/raw_tree_shared ${flags})
  file(GLOB libdir ${prefix}/lib ${prefix}/lib/*-linux-gnu)
  set(ENV{LD_LIBRARY_PATH} "${libdir}")
  run(${build}/raw_tree_shared ${BINARY_DIR}/consumer-test/raw_tree_shared.pbt)
else()
  message(FATAL_ERROR "pkg-config file pbtree.pc not installed under ${prefix}")
endif()
