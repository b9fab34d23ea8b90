# ctest script: installs the already built pbtree into a scratch prefix, then configures,
# builds and runs tests/consumer (a tiny program using find_package(pbtree CONFIG)).
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
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${build} -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE} -DCMAKE_PREFIX_PATH=${prefix})
run(${CMAKE_COMMAND} --build ${build})
run(${build}/consumer ${BINARY_DIR}/consumer-test/consumer.pbt)
