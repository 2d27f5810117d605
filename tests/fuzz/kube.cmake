# Fuzz targets of controller/kube (included by tests/fuzz/CMakeLists.txt).
po_fuzzer(fuzz_kubeconfig SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_kubeconfig.c DEPS po_kube)
po_fuzzer(fuzz_watch_stream SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_watch_stream.c DEPS po_kube)
