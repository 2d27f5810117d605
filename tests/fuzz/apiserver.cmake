# The local API server's request-body parsers (tests/apiserver): YAML, protobuf bodies, merge /
# strategic / JSON patches, server-side apply, schema checks, selectors, JSONPath.
po_fuzzer(fuzz_apiserver SOURCES ${PROJECT_SOURCE_DIR}/tests/apiserver/fuzz_apiserver.c DEPS po_apiserver_core)
if(TARGET fuzz_apiserver) # po_fuzzer makes nothing without -DPO_FUZZ=ON
  target_compile_options(fuzz_apiserver PRIVATE ${PO_WARNINGS} -Wno-missing-prototypes)
endif()
