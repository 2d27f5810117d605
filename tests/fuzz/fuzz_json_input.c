/* libFuzzer target: resources in proto3 JSON (the CLI's and the preview's input). Byte 0
 * chooses the message (Cluster, Listener, RouteConfiguration, ClusterLoadAssignment); the rest
 * is its JSON. Parse, print, and parse what was printed: nothing may crash, assert, leak or
 * hang; every failure carries a message; what the engine prints it reads back, and printing
 * that again gives text of the same length (map entries come out in hash order, so the texts
 * themselves may differ). Envoy's rules are walked on each decoded message as a native value
 * (po_Message_CheckRules, in the scope byte 0 picks). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const kMessages[] = {
    "envoy.config.cluster.v3.Cluster",
    "envoy.config.listener.v3.Listener",
    "envoy.config.route.v3.RouteConfiguration",
    "envoy.config.endpoint.v3.ClusterLoadAssignment",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *name = kMessages[data[0] % 4];
  po_Arena *a = po_Arena_New();
  if (!a) return 0;
  po_Status st;
  po_Status_Clear(&st);
  /* A copy of the input's bytes, so ASan sees any read past the end. upb's JSON decoder
   * (e4635f2) reads one byte past an unterminated string at the end of its input
   * (jsondec_string checks *d->ptr, not ch, for control characters), and the engine passes
   * its callers' buffers straight through: until the engine guards that, the copy carries a
   * NUL after the input, which the decoder then rejects as a control character. Set
   * PO_FUZZ_STRICT=1 to fuzz with exactly the input's bytes (reproducer:
   * {"respect_d: true} as a Cluster). */
  static int strict = -1;
  if (strict < 0) strict = getenv("PO_FUZZ_STRICT") != NULL;
  size_t len = size - 1;
  char *json = malloc(len + 1);
  if (!json) abort();
  memcpy(json, data + 1, len);
  json[len] = '\0';
  if (strict) {
    char *exact = malloc(len ? len : 1);
    if (!exact) abort();
    memcpy(exact, json, len);
    free(json);
    json = exact;
  }
  po_Message *m = po_Message_ParseJson(NULL, name, json, len, a, &st);
  free(json);
  if (!m) {
    if (po_Status_IsOk(&st) || st.message[0] == '\0') abort();
    po_Arena_Free(a);
    return 0;
  }
  /* Envoy's rules on it as a native value (byte 0 picks the scope): findings or none, never a
   * failure but out of memory; every finding a located error or the depth warning. */
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!d) abort();
  po_ValueScope scope = (po_ValueScope)((data[0] / 4) % 3);
  if (!po_Message_CheckRules(m, 0, NULL, scope, 0, d, &st) && st.code != kPo_Status_NoMemory) abort();
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, i);
    if (!x->path || !x->message || x->kind != kPo_DiagKind_EnvoyRule || (x->path[0] && x->path[0] != '/')) abort();
  }
  size_t out_len = 0;
  char *out = po_Message_ToJson(m, a, &out_len, &st);
  if (!out) {
    /* Some inputs decode but do not encode (e.g. a Duration beyond Envoy's range). */
    if (st.message[0] == '\0') abort();
    po_Arena_Free(a);
    return 0;
  }
  if (strlen(out) != out_len) abort();
  po_Message *again = po_Message_ParseJson(NULL, name, out, out_len, a, &st);
  if (!again) abort();
  size_t again_len = 0;
  char *out2 = po_Message_ToJson(again, a, &again_len, &st);
  if (!out2 || again_len != out_len) abort();
  po_Arena_Free(a);
  return 0;
}
