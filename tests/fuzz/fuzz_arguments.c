/* libFuzzer target: an envoyExtensions `arguments` object (JSON, or YAML when it is not JSON)
 * through Consul's decoder and Constructor under both conventions, the PropertyOverride spec
 * decoder and compiler on the same tree, and the decode -> ToConsul -> decode round trip.
 * Nothing may crash, assert, leak or hang, and:
 *   - the Constructor returns an override exactly when it reports no error, and then
 *     po_Diagnostics_ConsulText has nothing to say;
 *   - arguments written back for Consul (po_Arguments_ToConsul) decode again, to arguments
 *     that write back identically and that the Constructor judges exactly as the original. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_diags(const po_Diagnostics *d, bool compiled, po_Arena *a) {
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, i);
    if (!x || !x->message) abort();
  }
  const char *consul = po_Diagnostics_ConsulText(d, false, a);
  const char *all = po_Diagnostics_ConsulText(d, true, a);
  if (compiled != (po_Diagnostics_ErrorCount(d) == 0)) abort();
  if (compiled && (consul || all)) abort();
  if (!compiled && !all) abort();
}

/* Consul's text for these arguments (with our extras), or NULL when they compile. */
static const char *construct(const po_Value *args, const po_CompileOptions *opts, po_Arena *a) {
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!d) abort();
  po_Override *o = po_Constructor(NULL, args, opts, a, d);
  check_diags(d, o != NULL, a);
  if (o && po_Override_PatchCount(o) != po_Override_Arguments(o)->patch_count) abort();
  return po_Diagnostics_ConsulText(d, true, a);
}

static bool same(const char *x, const char *y) { return x == y || (x && y && !strcmp(x, y)); }

/* An invariant failed: show both sides (for triage of the reproducer), then crash. */
static void differ(const char *what, const char *x, const char *y) {
  fprintf(stderr, "fuzz_arguments: %s differ:\n--- first\n%s\n--- second\n%s\n", what,
          x ? x : "(none)", y ? y : "(none)");
  abort();
}

/* Decode, write back, and decode again: the second write-back is a fixed point (the first
 * may still normalise, e.g. a one-element list holding null becomes "Value": null), and the
 * Constructor judges the write-back exactly as the original. */
static po_Value *write_back(const po_Value *args, po_Arena *a, bool must_decode) {
  po_Arguments decoded;
  po_Status st;
  po_Status_Clear(&st);
  if (!po_Arguments_Decode(args, a, &decoded, &st)) {
    if (must_decode || st.message[0] == '\0') abort();
    return NULL;
  }
  po_Value *back = po_Arguments_ToConsul(&decoded, a);
  if (!back) abort();
  return back;
}

static void round_trip(const po_Value *args, po_Arena *a) {
  po_Value *back = write_back(args, a, false);
  if (!back) return;
  po_Value *back2 = write_back(back, a, true);
  po_Value *back3 = write_back(back2, a, true);
  const char *j2 = po_Value_ToJson(back2, a), *j3 = po_Value_ToJson(back3, a);
  if (!j2 || !j3 || strcmp(j2, j3) != 0) differ("arguments written back twice", j2, j3);
  po_CompileOptions opts = po_CompileOptions_Default();
  const char *t1 = construct(args, &opts, a), *t2 = construct(back, &opts, a);
  if (!same(t1, t2)) differ("Constructor texts of the arguments and of their write-back", t1, t2);
}

static void spec(const po_Value *v, po_Arena *a) {
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!d) abort();
  po_Arguments args;
  bool ok = po_Arguments_DecodeSpec(v, a, &args, d);
  if (!ok && po_Diagnostics_ErrorCount(d) == 0) abort();
  if (!ok) {
    check_diags(d, false, a);
    return;
  }
  po_CompileOptions opts = po_CompileOptions_Default();
  po_Override *o = po_Override_Compile(&args, &opts, a, d);
  check_diags(d, o != NULL, a);
  /* What the Consul target adapter writes for this spec must be decodable by Consul. It writes
   * only a spec that compiled: a refused one may hold what Consul's decoder cannot take (a
   * one-element list holding null, refused by the compile as a value its field cannot hold),
   * and then the decoder must still say why. */
  po_Value *consul = po_Arguments_ToConsul(o ? po_Override_Arguments(o) : &args, a);
  if (!consul) abort();
  po_Arguments back;
  po_Status st;
  po_Status_Clear(&st);
  if (!po_Arguments_Decode(consul, a, &back, &st)) {
    if (o) differ("a compiled spec written for Consul, refused by Consul's decoder", po_Value_ToJson(consul, a), st.message);
    if (st.message[0] == '\0') abort();
    return;
  }
  po_CompileOptions wire = po_CompileOptions_Default();
  wire.convention = kPo_Convention_Wire;
  construct(consul, &wire, a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  po_Arena *a = po_Arena_New();
  if (!a) return 0;
  po_Status st;
  po_Status_Clear(&st);
  const po_Value *args = po_Value_ParseJson((const char *)data, size, a, &st);
  if (!args) {
    po_Value **docs = NULL;
    size_t n = 0;
    po_Status_Clear(&st);
    if (!po_Value_ParseYaml((const char *)data, size, a, &docs, &n, &st)) {
      if (st.message[0] == '\0') abort();
      po_Arena_Free(a);
      return 0;
    }
    args = n ? docs[0] : NULL;
  }
  po_CompileOptions typed = po_CompileOptions_Default();
  po_CompileOptions wire = po_CompileOptions_Default();
  wire.convention = kPo_Convention_Wire;
  wire.envoy_rules = wire.deprecations = wire.hints = false;
  construct(args, &typed, a);
  construct(args, &wire, a);
  round_trip(args, a);
  spec(args, a);
  po_Arena_Free(a);
  return 0;
}
