# upb at commit e4635f2 (the copy in Debian's grpc 1.51.1 source package), as a static library.
# The source list is the one grpc's own CMake target `upb` compiles. descriptor.upb.c is
# generated code that grpc keeps outside the upb folder; a plain upb checkout keeps it in cmake/.
set(_upb "${PO_UPB_SOURCE_DIR}")
if(NOT EXISTS "${_upb}/upb/def.c")
  message(FATAL_ERROR "upb sources not found in PO_UPB_SOURCE_DIR=${_upb}; run scripts/setup.sh "
                      "(or make), or pass -DPO_UPB_SOURCE_DIR=<upb checkout at e4635f2>")
endif()
set(_upb_gen "")
foreach(cand "${_upb}/../../src/core/ext/upb-generated" "${_upb}/cmake")
  if(EXISTS "${cand}/google/protobuf/descriptor.upb.c")
    get_filename_component(_upb_gen "${cand}" ABSOLUTE)
    break()
  endif()
endforeach()
if(NOT _upb_gen)
  message(FATAL_ERROR "descriptor.upb.c not found next to ${_upb}")
endif()

set(_upb_src)
foreach(f arena array decode_fast encode extension_registry
          map mini_table reflection status text_encode upb)
  list(APPEND _upb_src "${_upb}/upb/${f}.c")
endforeach()
# The JSON codec, def.c, table.c, msg.c and decode.c are compiled from copies with proto/upb-patches
# applied (negative Durations, the empty Any, Any type URLs as Envoy resolves them, strings copied
# once, a def pool's arena and a compacted table checked, quoted integers in any number form, an Any
# encoded when memory runs out, a map's table and a decoded map entry checked: see each patch's
# header); the
# checkout itself is never modified.
find_program(PO_PATCH patch REQUIRED)
set(_upb_patched "${CMAKE_BINARY_DIR}/upb-patched")
# The series, in the order it is applied (each patch's header says what and why).
set(_upb_patches "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-wkt.patch"
                 "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-string-copy.patch"
                 "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-base64-index.patch"
                 "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-number-assert.patch"
                 "${CMAKE_SOURCE_DIR}/proto/upb-patches/defpool-arena-oom.patch"
                 "${CMAKE_SOURCE_DIR}/proto/upb-patches/inttable-compact-oom.patch"
                 "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-decode-oom.patch"
                  "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-any-type-url.patch"
                  "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-quoted-int.patch"
                  "${CMAKE_SOURCE_DIR}/proto/upb-patches/strtable-resize-oom.patch"
                  "${CMAKE_SOURCE_DIR}/proto/upb-patches/json-encode-oom.patch"
                  "${CMAKE_SOURCE_DIR}/proto/upb-patches/map-new-oom.patch")
set(_upb_patch_cmds)
foreach(p ${_upb_patches})
  list(APPEND _upb_patch_cmds COMMAND ${PO_PATCH} --quiet --forward -p1 -d "${_upb_patched}" -i "${p}")
endforeach()
add_custom_command(
  OUTPUT "${_upb_patched}/upb/json_encode.c" "${_upb_patched}/upb/json_decode.c" "${_upb_patched}/upb/def.c"
         "${_upb_patched}/upb/table.c" "${_upb_patched}/upb/msg.c" "${_upb_patched}/upb/decode.c"
  COMMAND ${CMAKE_COMMAND} -E make_directory "${_upb_patched}/upb"
  COMMAND ${CMAKE_COMMAND} -E copy "${_upb}/upb/json_encode.c" "${_upb}/upb/json_decode.c" "${_upb}/upb/def.c"
          "${_upb}/upb/table.c" "${_upb}/upb/msg.c" "${_upb}/upb/decode.c" "${_upb_patched}/upb/"
  ${_upb_patch_cmds}
  DEPENDS "${_upb}/upb/json_encode.c" "${_upb}/upb/json_decode.c" "${_upb}/upb/def.c" "${_upb}/upb/table.c"
          "${_upb}/upb/msg.c" "${_upb}/upb/decode.c" ${_upb_patches}
  COMMENT "upb JSON codec, def.c, table.c, msg.c and decode.c with proto/upb-patches"
  VERBATIM)
list(APPEND _upb_src "${_upb_patched}/upb/json_encode.c" "${_upb_patched}/upb/json_decode.c"
     "${_upb_patched}/upb/def.c" "${_upb_patched}/upb/table.c" "${_upb_patched}/upb/msg.c"
     "${_upb_patched}/upb/decode.c")
list(APPEND _upb_src "${_upb}/third_party/utf8_range/naive.c")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm")
  list(APPEND _upb_src "${_upb}/third_party/utf8_range/range2-neon.c")
else()
  list(APPEND _upb_src "${_upb}/third_party/utf8_range/range2-sse.c")
endif()
list(APPEND _upb_src "${_upb_gen}/google/protobuf/descriptor.upb.c")

add_library(po_upb STATIC ${_upb_src})
target_include_directories(po_upb SYSTEM PUBLIC "${_upb}" "${_upb}/third_party/utf8_range" "${_upb_gen}")
# Third-party code: no warnings of ours, and asserts stay on in Debug so misuse is caught in tests.
target_compile_options(po_upb PRIVATE -w)
set_target_properties(po_upb PROPERTIES POSITION_INDEPENDENT_CODE ON)
