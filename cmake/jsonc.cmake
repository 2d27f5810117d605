# json-c 0.16 (Debian bookworm's, from its source package: scripts/setup.sh fetches it) as a
# static library, built from a copy with cmake/json-c-patches applied: Debian's shared libjson-c5
# crashes in its tokener and loses text in its writer when an allocation fails (each patch's
# header says where), and every one-shot command must say "out of memory" instead (tests/cli's
# cli_oom, cli_adv27_oom). The checkout itself is never modified. Every target links `po_jsonc`.
set(_jsonc "${PO_JSONC_SOURCE_DIR}")
if(NOT EXISTS "${_jsonc}/json_tokener.c")
  message(FATAL_ERROR "json-c sources not found in PO_JSONC_SOURCE_DIR=${_jsonc}; run scripts/setup.sh "
                      "(or make), or pass -DPO_JSONC_SOURCE_DIR=<json-c 0.16 source tree>")
endif()
find_program(PO_PATCH patch REQUIRED)
# The series, in the order it is applied.
set(_jsonc_patches "${CMAKE_SOURCE_DIR}/cmake/json-c-patches/printbuf-oom.patch"
                   "${CMAKE_SOURCE_DIR}/cmake/json-c-patches/tokener-oom.patch")
# Configure time, not build time: json-c's own CMakeLists.txt (added below) must see the copy.
# Redone when a patch or the source directory changes (the stamp names both).
set(_jsonc_copy "${CMAKE_BINARY_DIR}/json-c-src/json-c")
set(_jsonc_stamp_want "${_jsonc}")
foreach(p ${_jsonc_patches})
  file(SHA256 "${p}" _h)
  string(APPEND _jsonc_stamp_want " ${_h}")
endforeach()
set(_jsonc_stamp "")
if(EXISTS "${_jsonc_copy}/.po-stamp")
  file(READ "${_jsonc_copy}/.po-stamp" _jsonc_stamp)
endif()
if(NOT _jsonc_stamp STREQUAL _jsonc_stamp_want)
  file(REMOVE_RECURSE "${_jsonc_copy}")
  file(COPY "${_jsonc}/" DESTINATION "${_jsonc_copy}")
  foreach(p ${_jsonc_patches})
    execute_process(COMMAND ${PO_PATCH} --quiet --forward -p1 -d "${_jsonc_copy}" -i "${p}"
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "json-c: ${p} does not apply to ${_jsonc}")
    endif()
  endforeach()
  file(WRITE "${_jsonc_copy}/.po-stamp" "${_jsonc_stamp_want}")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_jsonc_patches})

# json-c's options are cache entries (its cmake_minimum_required predates CMP0077): static only,
# position-independent (test shims are shared objects), its warnings its own.
set(BUILD_SHARED_LIBS OFF CACHE BOOL "json-c: static (cmake/jsonc.cmake)" FORCE)
set(BUILD_STATIC_LIBS OFF CACHE BOOL "json-c: one static library (cmake/jsonc.cmake)" FORCE)
set(DISABLE_WERROR ON CACHE BOOL "json-c: its own warnings are not ours" FORCE)
set(DISABLE_EXTRA_LIBS ON CACHE BOOL "json-c: no libbsd" FORCE)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
# The binary directory ends in json-c/, so <json-c/json.h> finds the generated json.h in it.
set(CMAKE_WARN_DEPRECATED OFF) # json-c 0.16 asks for CMake 2.8
add_subdirectory("${_jsonc_copy}" "${CMAKE_BINARY_DIR}/json-c-build/json-c" EXCLUDE_FROM_ALL)
unset(CMAKE_POSITION_INDEPENDENT_CODE)
unset(CMAKE_WARN_DEPRECATED)
add_library(po_jsonc INTERFACE)
target_link_libraries(po_jsonc INTERFACE json-c)
target_include_directories(po_jsonc SYSTEM INTERFACE "${CMAKE_BINARY_DIR}/json-c-build" "${CMAKE_BINARY_DIR}/json-c-src")
