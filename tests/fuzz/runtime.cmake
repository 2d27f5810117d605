# Fuzz targets of controller/runtime (included by tests/fuzz/CMakeLists.txt).
po_fuzzer(fuzz_workqueue
  SOURCES ${CMAKE_SOURCE_DIR}/tests/runtime/fuzz_workqueue.c ${CMAKE_SOURCE_DIR}/tests/runtime/workqueue_model.c
  DEPS po_runtime)
