# The admission webhook's decision (included by tests/fuzz/CMakeLists.txt).
po_fuzzer(fuzz_admission SOURCES ${CMAKE_CURRENT_LIST_DIR}/fuzz_admission.c DEPS po_webhook)
