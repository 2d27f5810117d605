/* libFuzzer target: the YAML reader (manifests, CLI files, `validate --consul-arguments`).
 * Nothing may crash, leak or hang, however the anchors and aliases are arranged; a failure
 * carries a message with its line and column; every document prints as JSON, and JSON that
 * prints from a document reads back to the same JSON. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { kMaxWalkDepth = 256, kMaxExpansion = 1000000 };

/* Aliases share their anchor's value, so a document is a DAG. It must not be a cycle (every
 * recursive consumer would loop), nor expand, when walked as a tree, beyond what its bytes
 * could spell (the reader bounds aliases so that a "billion laughs" file cannot explode its
 * consumers). Returns false when the JSON round trip must skip the document: NaN and the
 * infinities have no JSON spelling, and aliases can nest deeper than the JSON reader's bound. */
static bool strict(void) {
  static int on = -1;
  if (on < 0) on = getenv("PO_FUZZ_STRICT") != NULL;
  return on;
}

/* Known, reported: the reader bounds nesting (64) and expansion (10^6 nodes) but not nesting
 * through aliases: 150 anchors of 62 levels, each holding an alias of the previous, make a
 * value 9,300 levels deep, which recursive consumers (decode.c go_v, json-c) overflow the stack
 * on. PO_FUZZ_STRICT=1 fails on any document deeper than kMaxWalkDepth; otherwise the walk
 * stops there. */
static bool walk(const po_Value *v, const po_Value **stack, int depth, size_t *visits) {
  if (++*visits > kMaxExpansion) abort();
  if (depth >= kMaxWalkDepth) {
    if (strict()) abort();
    return false;
  }
  for (int i = 0; i < depth; i++) {
    if (stack[i] == v) abort(); /* a cycle through an alias */
  }
  switch (po_Value_Kind(v)) {
    case kPo_ValueKind_Float: return isfinite(po_Value_Float(v));
    case kPo_ValueKind_List:
    case kPo_ValueKind_Map: {
      stack[depth] = v;
      bool safe = depth < 60;
      for (size_t i = 0; i < po_Value_Size(v); i++) {
        if (!walk(po_Value_At(v, i), stack, depth + 1, visits)) safe = false;
      }
      return safe;
    }
    default: return true;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  po_Arena *a = po_Arena_New();
  if (!a) return 0;
  po_Status st;
  po_Status_Clear(&st);
  po_Value **docs = NULL;
  size_t n = 0;
  if (!po_Value_ParseYaml((const char *)data, size, a, &docs, &n, &st)) {
    if (po_Status_IsOk(&st) || strncmp(st.message, "line ", 5) != 0) {
      /* Allocation failures are the only errors without a place. */
      if (st.code != kPo_Status_NoMemory) abort();
    }
    po_Arena_Free(a);
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    const po_Value *stack[kMaxWalkDepth];
    size_t visits = 0;
    if (!walk(docs[i], stack, 0, &visits)) continue;
    char *json = po_Value_ToJson(docs[i], a);
    if (!json) abort();
    po_Status_Clear(&st);
    po_Value *back = po_Value_ParseJson(json, strlen(json), a, &st);
    if (!back) abort();
    char *json2 = po_Value_ToJson(back, a);
    if (!json2 || strcmp(json, json2) != 0) abort();
  }
  po_Arena_Free(a);
  return 0;
}
