/* A reference model of the workqueue's single-threaded semantics, and a driver that runs a byte
 * string of operations against both and aborts on the first difference. Shared by the fuzz
 * target (tests/fuzz/runtime.cmake) and the seeded ctest test_runtime_workqueue_model. */
#ifndef PO_TESTS_WORKQUEUE_MODEL_H
#define PO_TESTS_WORKQUEUE_MODEL_H

#include <stddef.h>
#include <stdint.h>

/* Returns 0 when the queue behaved like the model; otherwise prints the step and aborts. */
int po_WorkqueueModel_Run(const uint8_t *data, size_t size);

#endif
