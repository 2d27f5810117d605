# The local API server's request-body parsers (tests/apiserver): YAML, protobuf bodies, merge /
# strategic / JSON patches, server-side apply, schema checks, selectors, JSONPath.
po_fuzzer(fuzz_apiserver SOURCES ${PROJECT_SOURCE_DIR}/tests/apiserver/fuzz_apiserver.c DEPS po_apiserver_core)
target_compile_options(fuzz_apiserver PRIVATE ${PO_WARNINGS} -Wno-missing-prototypes)
