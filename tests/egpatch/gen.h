/* The seeded generator of PropertyOverride patches for the Envoy Gateway oracle test: paths walked
 * through Envoy's schema (po_Explain), values of every kind the schema names. */
#ifndef PO_TESTS_EGPATCH_GEN_H
#define PO_TESTS_EGPATCH_GEN_H

#include <stdint.h>

#include <json-c/json.h>

#include "po/engine.h"

typedef struct {
  uint64_t state;
} po_EgRng;

uint64_t po_EgRng_Next(po_EgRng *r);
/* 0 <= result < n (n > 0). */
uint32_t po_EgRng_Below(po_EgRng *r, uint32_t n);
/* true with probability percent/100. */
bool po_EgRng_Chance(po_EgRng *r, uint32_t percent);

/* 1 to 3 patches of one PropertyOverride's spec.patches (a new json array), all outbound. */
struct json_object *po_EgGen_Patches(po_EgRng *r, po_Arena *a);

#endif
