/* scratch: one reconcile of a 50-entry target after one PO was added */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake_api.h"

static void apply(Fake *fx, int i, int gen, int value) {
  char name[32], patches[512];
  snprintf(name, sizeof name, "po-%03d", i);
  snprintf(patches, sizeof patches,
           "[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
           "\"op\":\"add\",\"path\":\"/outlier_detection/max_ejection_percent\",\"value\":%d}]",
           value);
  apply_override(fx, name, gen, "web", patches);
}

__attribute__((noinline)) po_ReconcileResult measured(Fake *fx) { return reconcile_key(fx, "ServiceDefaults/default/web"); }

int main(int argc, char **argv) {
  int k = argc > 1 ? atoi(argv[1]) : 50;
  Fake *fx = fake_new();
  for (int i = 0; i < k - 1; i++) apply(fx, i, 1, 1 + i % 90);
  for (int pass = 0; pass < 3; pass++) reconcile_key(fx, "ServiceDefaults/default/web");
  apply(fx, k - 1, 1, 7);
  po_ReconcileResult r = measured(fx);
  printf("ok=%d checks=%zu writes=%d\n", r.ok, r.overlap_checks, fx->target_writes);
  fake_free(fx);
  return 0;
}
