# Helpers shared by every module's CMakeLists.txt.

# po_library(NAME SOURCES... [DEPS targets...]): a static library of our own code, with its
# public headers in <folder>/include and our warning set.
function(po_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR}/include
                                     PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)
  target_compile_options(${name} PRIVATE ${PO_WARNINGS})
  target_link_libraries(${name} PUBLIC ${A_DEPS} PRIVATE ${A_PRIVATE_DEPS})
endfunction()

# po_test(NAME SOURCES... [DEPS targets...] [ARGS ...] [LABELS ...]): a cmocka test run by ctest.
function(po_test name)
  cmake_parse_arguments(A "" "WORKING_DIRECTORY;TIMEOUT" "SOURCES;DEPS;ARGS;LABELS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_compile_options(${name} PRIVATE ${PO_WARNINGS} -Wno-missing-prototypes)
  target_link_libraries(${name} PRIVATE ${A_DEPS} PkgConfig::CMOCKA)
  if(NOT A_WORKING_DIRECTORY)
    set(A_WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  endif()
  add_test(NAME ${name} COMMAND ${name} ${A_ARGS} WORKING_DIRECTORY ${A_WORKING_DIRECTORY})
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${A_TIMEOUT} LABELS "${A_LABELS}")
endfunction()

# po_fuzzer(NAME SOURCES... DEPS ...): a libFuzzer target (only with -DPO_FUZZ=ON).
function(po_fuzzer name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  if(NOT PO_FUZZ)
    return()
  endif()
  add_executable(${name} ${A_SOURCES})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${A_DEPS})
endfunction()
