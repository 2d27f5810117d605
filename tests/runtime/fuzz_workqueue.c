/* libFuzzer target: any byte string is a sequence of workqueue operations, checked against the
 * reference model (workqueue_model.c). */
#include <stddef.h>
#include <stdint.h>

#include "workqueue_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096) return 0;
  return po_WorkqueueModel_Run(data, size);
}
