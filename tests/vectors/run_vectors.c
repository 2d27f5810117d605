/* Runs the vector files: tests as data (input, program, expected output or exact error).
 *   patch/NAME.json      {"cases":[{name, message, input, patches[], debug, output | error}]}
 *   constructor/NAME.json  {"cases":[{name, extension_name?, arguments, error | null}]}
 * Patch cases apply their patches in order with PatchStruct (typed convention), stopping at the
 * first error, which must equal `error` exactly (Consul's text), then optionally our hint on a
 * line of its own (exactly `hint` when the case gives one).
 * Outputs are compared as JSON trees after both go through upb, so formatting and map order
 * do not matter. Constructor cases compare Consul's aggregated text exactly.
 * Optional per case: "exact": true (the output as written, compared without a upb round trip);
 * "convention": "wire" (Consul's HTTP API typing; default "typed");
 * constructor cases also "envoy_rules": true (then `error` is the text with our further errors
 * and hints, po_Diagnostics_ConsulText(extras)), "warnings": [exact warning messages] and "text"
 * (po_Diagnostics_Text: everything, warnings included). Every case checks that Consul's own text
 * is a prefix of the fuller ones.
 *   ir/NAME.json  {"cases":[{name, arguments | spec, check_wire?, patches?: [{segments, typed, wire}],
 *                  errors?: ["kind index: message"], other?: arguments, conflicts?: [...]}]}
 * IR cases compile `arguments` once (po_Override_Build, typed convention) and check what the
 * compiled override says per patch: its resolved segments ("<field full name>#<number>", then
 * " oneof <name>" for a oneof member), its verdict per convention ("ok" or "<kind>: <message>"),
 * the errors (kind, patch index, message) when given, and the conflicts with `other` (or among
 * its own patches without it): "<kind> <a> <b> <where>", " (a is the parent)" when a's target is
 * the ancestor, in the order po_Override_Conflicts reports them.
 * Set PO_VECTORS_FILTER=substring to run only matching case names. */
#include <dirent.h>
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "po/engine.h"

static const char *g_dir;
static int g_failed, g_run;

static void failf(const char *file, const char *name, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "FAIL %s: %s: ", file, name);
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  g_failed++;
}

/* The current case as the engine's own JSON reader reads it (json-c's tree clamps integer
 * literals beyond int64; values and arguments come from this one). */
static const po_Value *g_case;

static po_Value *from_json(json_object *j, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  return po_Value_FromJsonC(j, a, &st);
}

static const po_Value *case_value(const char *key) { return po_Value_Get(g_case, key); }

/* A message's JSON as upb prints it, parsed back for a tree comparison. */
static json_object *canonical(const char *message, json_object *j, po_Arena *a, po_Status *st) {
  const char *text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
  po_Message *m = po_Message_ParseJson(NULL, message, text, strlen(text), a, st);
  if (!m) return NULL;
  char *out = po_Message_ToJson(m, a, NULL, st);
  return out ? json_tokener_parse(out) : NULL;
}

static po_Convention convention_of(json_object *c) {
  const char *s = json_object_get_string(json_object_object_get(c, "convention"));
  return s && !strcmp(s, "wire") ? kPo_Convention_Wire : kPo_Convention_Typed;
}

/* The same patches through the compiled override (po_Override_BuildFor + po_Override_Apply, what
 * the `patch` command runs): the first error, composed as po_PatchStruct composes it, or the
 * same message as PatchStruct's step-by-step result. */
static void check_ir_agrees(const char *file, const char *name, json_object *c, const char *message,
                            const char *text, bool debug, const char *ps_err, po_Message *ps_out, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  json_object *patches = json_object_object_get(c, "patches");
  po_Arguments args = {.debug = debug, .proxy_type = ""};
  args.patch_count = json_object_array_length(patches);
  args.patches = po_Arena_Malloc(a, (args.patch_count + 1) * sizeof *args.patches);
  for (size_t i = 0; i < args.patch_count; i++) {
    json_object *p = json_object_array_get_idx(patches, i), *val = NULL;
    bool has_val = json_object_object_get_ex(p, "value", &val);
    po_Patch *pt = &args.patches[i];
    pt->op = json_object_get_string(json_object_object_get(p, "op"));
    pt->path = json_object_get_string(json_object_object_get(p, "path"));
    pt->value = has_val && val ? po_Value_Get(po_Value_At(case_value("patches"), i), "value") : NULL;
    if (!pt->op) pt->op = "";
    if (!pt->path) pt->path = "";
  }
  po_CompileOptions co = po_CompileOptions_Default();
  co.convention = convention_of(c);
  co.envoy_rules = co.deprecations = false;
  po_Diagnostics *d = po_Diagnostics_New(a);
  po_Override *o = po_Override_BuildFor(message, &args, &co, a, d);
  if (!o) {
    failf(file, name, "IR: not built");
    return;
  }
  if (!po_Override_Valid(o)) {
    const po_Diagnostic *x = NULL;
    for (size_t i = 0; !x && i < po_Diagnostics_Count(d); i++) {
      if (po_Diagnostics_At(d, i)->severity == kPo_Severity_Error) x = po_Diagnostics_At(d, i);
    }
    snprintf(st.message, sizeof st.message, "%s", x ? x->message : "");
    size_t len = strlen(st.message);
    if (x && x->hint) snprintf(st.message + len, sizeof st.message - len, "%s%s", len && st.message[len - 1] == '\n' ? "" : "\n", x->hint);
    if (!ps_err) failf(file, name, "IR: failed where PatchStruct did not: %s", st.message);
    else if (strcmp(ps_err, st.message)) failf(file, name, "IR: error differs:\n--- IR\n%s\n--- PatchStruct\n%s", st.message, ps_err);
    return;
  }
  if (ps_err) {
    failf(file, name, "IR: compiled where PatchStruct failed: %s", ps_err);
    return;
  }
  po_Message *m = po_Message_ParseJson(NULL, message, text, strlen(text), a, &st);
  if (!m || !po_Override_Apply(o, m, NULL, NULL, &st)) {
    failf(file, name, "IR: apply failed: %s", st.message);
    return;
  }
  char *got = po_Message_ToJson(m, a, NULL, &st);
  char *want = po_Message_ToJson(ps_out, a, NULL, &st);
  if (!got != !want || (got && strcmp(got, want))) {
    failf(file, name, "IR: output differs:\n--- IR\n%s\n--- PatchStruct\n%s", got ? got : "(none)", want ? want : "(none)");
  }
}

static void run_patch_case(const char *file, json_object *c) {
  const char *name = json_object_get_string(json_object_object_get(c, "name"));
  const char *message = json_object_get_string(json_object_object_get(c, "message"));
  json_object *input = json_object_object_get(c, "input");
  json_object *patches = json_object_object_get(c, "patches");
  json_object *want_out = json_object_object_get(c, "output");
  json_object *want_err = json_object_object_get(c, "error");
  bool debug = json_object_get_boolean(json_object_object_get(c, "debug"));
  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  const char *text = json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN);
  po_Message *m = po_Message_ParseJson(NULL, message, text, strlen(text), a, &st);
  g_run++;
  if (!m) {
    failf(file, name, "input does not parse: %s", st.message);
    po_Arena_Free(a);
    return;
  }
  const char *err = NULL;
  for (size_t i = 0; i < json_object_array_length(patches); i++) {
    json_object *p = json_object_array_get_idx(patches, i);
    json_object *val = NULL;
    bool has_val = json_object_object_get_ex(p, "value", &val);
    po_Patch patch = {.op = json_object_get_string(json_object_object_get(p, "op")),
                      .path = json_object_get_string(json_object_object_get(p, "path")),
                      .value = has_val && val ? po_Value_Get(po_Value_At(case_value("patches"), i), "value") : NULL};
    if (!patch.op) patch.op = "";
    if (!patch.path) patch.path = "";
    if (!po_PatchStruct(m, &patch, debug, convention_of(c), &st)) {
      err = st.message;
      break;
    }
  }
  check_ir_agrees(file, name, c, message, text, debug, err, m, a);
  if (want_err) {
    const char *want = json_object_get_string(want_err);
    if (!err) {
      failf(file, name, "succeeded, want error:\n%s", want);
    } else {
      /* Consul's text must be exact; only our hint may follow it, on a line of its own
       * ("hint": its exact text, when the case gives one). */
      size_t wl = strlen(want);
      const char *rest = strncmp(err, want, wl) == 0 ? err + wl : NULL;
      if (rest && *rest == '\n' && (wl == 0 || want[wl - 1] != '\n')) rest++;
      else if (rest && *rest && wl && want[wl - 1] != '\n') rest = NULL;
      const char *want_hint = json_object_get_string(json_object_object_get(c, "hint"));
      if (!rest || (want_hint && strcmp(rest, want_hint))) {
        failf(file, name, "error differs:\n--- got\n%s\n--- want\n%s%s%s", err, want,
              want_hint ? "\n" : "", want_hint ? want_hint : "");
      }
    }
  } else if (err) {
    failf(file, name, "failed: %s", err);
  } else {
    char *got = po_Message_ToJson(m, a, NULL, &st);
    json_object *gj = got ? json_tokener_parse(got) : NULL;
    /* "exact": the expected JSON as written, not itself passed through upb (for codec bugs
     * that would otherwise change both sides alike). */
    bool exact = json_object_get_boolean(json_object_object_get(c, "exact"));
    json_object *wj = exact ? json_object_get(want_out) : canonical(message, want_out, a, &st);
    if (!wj) failf(file, name, "expected output does not parse: %s", st.message);
    else if (!json_object_equal(gj, wj)) {
      failf(file, name, "output differs:\n--- got\n%s\n--- want\n%s", got,
            json_object_to_json_string_ext(wj, JSON_C_TO_STRING_PLAIN));
    }
    json_object_put(gj);
    json_object_put(wj);
  }
  po_Arena_Free(a);
}

static void run_constructor_case(const char *file, json_object *c) {
  const char *name = json_object_get_string(json_object_object_get(c, "name"));
  json_object *ext = NULL;
  const char *ext_name = json_object_object_get_ex(c, "extension_name", &ext) ? json_object_get_string(ext) : NULL;
  json_object *want_err = json_object_object_get(c, "error");
  po_Arena *a = po_Arena_New();
  const po_Value *args = case_value("arguments");
  (void)from_json;
  po_Diagnostics *d = po_Diagnostics_New(a);
  po_CompileOptions co = po_CompileOptions_Default();
  co.convention = convention_of(c);
  co.envoy_rules = json_object_get_boolean(json_object_object_get(c, "envoy_rules"));
  po_Override *o = po_Constructor(ext_name, args, &co, a, d);
  const char *got = po_Diagnostics_ConsulText(d, co.envoy_rules, a);
  g_run++;
  /* Consul's own text is a prefix of every fuller text, whatever the case. */
  const char *consul = po_Diagnostics_ConsulText(d, false, a);
  const char *all = po_Diagnostics_Text(d, a);
  const char *extras = po_Diagnostics_ConsulText(d, true, a);
  if (consul && (!extras || strncmp(extras, consul, strlen(consul)) || !all || strncmp(all, consul, strlen(consul)))) {
    failf(file, name, "Consul's text is not a prefix:\n--- consul\n%s\n--- with ours\n%s", consul, all ? all : "(none)");
  }
  json_object *want_text = json_object_object_get(c, "text");
  if (want_text && strcmp(json_object_get_string(want_text), all ? all : "")) {
    failf(file, name, "text differs:\n--- got\n%s\n--- want\n%s", all ? all : "", json_object_get_string(want_text));
  }
  json_object *warnings = json_object_object_get(c, "warnings");
  if (warnings) {
    size_t k = 0;
    for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
      const po_Diagnostic *x = po_Diagnostics_At(d, i);
      if (x->severity != kPo_Severity_Warning) continue;
      const char *want = json_object_get_string(json_object_array_get_idx(warnings, k++));
      if (!want || strcmp(want, x->message)) failf(file, name, "warning %zu: got %s, want %s", k - 1, x->message, want ? want : "(none)");
    }
    if (k != json_object_array_length(warnings)) failf(file, name, "%zu warnings, want %zu", k, json_object_array_length(warnings));
  }
  if (want_err) {
    const char *want = json_object_get_string(want_err);
    if (o || !got) failf(file, name, "valid, want error:\n%s", want);
    else if (strcmp(got, want) != 0) failf(file, name, "error differs:\n--- got\n%s\n--- want\n%s", got, want);
  } else if (!o) {
    failf(file, name, "invalid, want valid:\n%s", got ? got : "(no text)");
  }
  po_Arena_Free(a);
}

/* ---- the compiled override's IR ------------------------------------------------------------- */

static const char *kind_name(po_DiagKind k) {
  switch (k) {
    case kPo_DiagKind_Consul: return "consul";
    case kPo_DiagKind_EnvoyRule: return "envoy-rule";
    case kPo_DiagKind_WireFormat: return "wire-format";
    case kPo_DiagKind_WireArray: return "wire-array";
    case kPo_DiagKind_Deprecated: return "deprecated";
    case kPo_DiagKind_Decode: return "decode";
    case kPo_DiagKind_Target: return "target";
    case kPo_DiagKind_EnvoyRuleIfResource: return "envoy-rule-if-resource";
    case kPo_DiagKind_EnvoyRuleNotJudged: return "envoy-rule-not-judged";
  }
  return "?";
}

static const char *verdict_text(po_Verdict v, po_Arena *a) {
  return v.ok ? "ok" : po_Arena_Printf(a, "%s: %s", kind_name(v.kind), v.message ? v.message : "(null)");
}

/* From Consul-style `arguments`, or (`spec` set) from a PropertyOverride spec, whose decoder
 * does not unwrap one-element lists as Consul's does. */
static po_Override *build_ir(const po_Value *arguments, const po_Value *spec, bool check_wire, po_Arena *a,
                             po_Diagnostics *d) {
  po_Arguments args;
  po_Status st;
  po_Status_Clear(&st);
  if (spec ? !po_Arguments_DecodeSpec(spec, a, &args, d) : !po_Arguments_Decode(arguments, a, &args, &st)) return NULL;
  po_CompileOptions co = po_CompileOptions_Default();
  co.check_wire = check_wire;
  return po_Override_Build(&args, &co, a, d);
}

static void expect_str(const char *file, const char *name, const char *what, const char *got, json_object *want) {
  const char *w = json_object_get_string(want);
  if (!w || strcmp(got, w)) failf(file, name, "%s:\n--- got\n%s\n--- want\n%s", what, got, w ? w : "(none)");
}

typedef struct {
  po_Arena *a;
  const char **lines;
  size_t count, cap;
} Lines;

static void on_conflict(const po_Conflict *c, void *ctx) {
  Lines *l = ctx;
  if (l->count == l->cap) return;
  l->lines[l->count++] = po_Arena_Printf(l->a, "%s %zu %zu %s%s", po_ConflictKind_Name(c->kind), c->a_patch,
                                         c->b_patch, c->where,
                                         c->kind == kPo_ConflictKind_ParentReplaced && c->a_is_parent
                                             ? " (a is the parent)" : "");
}

static void run_ir_case(const char *file, json_object *c) {
  const char *name = json_object_get_string(json_object_object_get(c, "name"));
  po_Arena *a = po_Arena_New();
  po_Diagnostics *d = po_Diagnostics_New(a);
  bool check_wire = json_object_get_boolean(json_object_object_get(c, "check_wire"));
  po_Override *o = build_ir(case_value("arguments"), case_value("spec"), check_wire, a, d);
  g_run++;
  if (!o) {
    failf(file, name, "no IR was built");
    po_Arena_Free(a);
    return;
  }
  json_object *patches = json_object_object_get(c, "patches");
  for (size_t i = 0; patches && i < json_object_array_length(patches); i++) {
    json_object *want = json_object_array_get_idx(patches, i);
    const char *where = po_Arena_Printf(a, "patch %zu", i);
    json_object *segs = json_object_object_get(want, "segments");
    if (segs) {
      size_t n = po_Override_SegmentCount(o, i);
      if (n != json_object_array_length(segs)) {
        failf(file, name, "%s: %zu segments, want %zu", where, n, json_object_array_length(segs));
      }
      for (size_t k = 0; k < n && k < json_object_array_length(segs); k++) {
        po_PathSegment s;
        if (!po_Override_Segment(o, i, k, &s)) failf(file, name, "%s: segment %zu missing", where, k);
        const char *got = po_Arena_Printf(a, "%s#%d%s%s", s.full_name, s.number, s.oneof ? " oneof " : "",
                                          s.oneof ? s.oneof : "");
        expect_str(file, name, po_Arena_Printf(a, "%s segment %zu", where, k), got, json_object_array_get_idx(segs, k));
      }
    }
    json_object *typed = json_object_object_get(want, "typed"), *wire = json_object_object_get(want, "wire");
    if (typed) {
      expect_str(file, name, po_Arena_Printf(a, "%s typed verdict", where),
                 verdict_text(po_Override_Verdict(o, i, kPo_Convention_Typed), a), typed);
    }
    if (wire) {
      expect_str(file, name, po_Arena_Printf(a, "%s wire verdict", where),
                 verdict_text(po_Override_Verdict(o, i, kPo_Convention_Wire), a), wire);
    }
  }
  json_object *errors = json_object_object_get(c, "errors");
  if (errors) {
    size_t k = 0;
    for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
      const po_Diagnostic *x = po_Diagnostics_At(d, i);
      if (x->severity != kPo_Severity_Error) continue;
      const char *got = po_Arena_Printf(a, "%s %d: %s", kind_name(x->kind), x->patch_index, x->message);
      if (k < json_object_array_length(errors)) {
        expect_str(file, name, po_Arena_Printf(a, "error %zu", k), got, json_object_array_get_idx(errors, k));
      } else {
        failf(file, name, "unexpected error: %s", got);
      }
      k++;
    }
    if (k < json_object_array_length(errors)) failf(file, name, "%zu errors, want %zu", k, json_object_array_length(errors));
    if (po_Override_Valid(o) != (k == 0)) failf(file, name, "valid is %d with %zu errors", po_Override_Valid(o), k);
  }
  json_object *conflicts = json_object_object_get(c, "conflicts");
  if (conflicts) {
    po_Override *other = o;
    if (case_value("other")) {
      po_Diagnostics *d2 = po_Diagnostics_New(a);
      other = build_ir(case_value("other"), NULL, false, a, d2);
    }
    Lines l = {.a = a, .cap = 64};
    l.lines = po_Arena_Malloc(a, l.cap * sizeof *l.lines);
    size_t n = other ? po_Override_Conflicts(o, other, on_conflict, &l) : 0;
    if (n != l.count) failf(file, name, "po_Override_Conflicts returned %zu, reported %zu", n, l.count);
    size_t want_n = json_object_array_length(conflicts);
    for (size_t k = 0; k < l.count || k < want_n; k++) {
      const char *got = k < l.count ? l.lines[k] : "(none)";
      json_object *w = json_object_array_get_idx(conflicts, k);
      expect_str(file, name, po_Arena_Printf(a, "conflict %zu", k), got, w);
    }
  }
  po_Arena_Free(a);
}

static void run_dir(const char *sub, void (*run)(const char *, json_object *)) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_dir, sub);
  DIR *dir = opendir(path);
  assert_non_null(dir);
  const char *filter = getenv("PO_VECTORS_FILTER");
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json")) continue;
    char file[4400];
    snprintf(file, sizeof file, "%s/%s", path, e->d_name);
    json_object *root = json_object_from_file(file);
    po_Arena *fa = po_Arena_New();
    po_Value *tree = NULL;
    FILE *fp = fopen(file, "rb");
    if (fp) {
      static char text[1 << 22];
      size_t nread = fread(text, 1, sizeof text, fp);
      fclose(fp);
      po_Status st;
      po_Status_Clear(&st);
      tree = po_Value_ParseJson(text, nread, fa, &st);
    }
    if (!root || !tree) {
      failf(file, "-", "not valid JSON");
      json_object_put(root);
      po_Arena_Free(fa);
      continue;
    }
    json_object *cases = json_object_object_get(root, "cases");
    for (size_t i = 0; i < json_object_array_length(cases); i++) {
      json_object *c = json_object_array_get_idx(cases, i);
      const char *name = json_object_get_string(json_object_object_get(c, "name"));
      if (filter && (!name || !strstr(name, filter))) continue;
      g_case = po_Value_At(po_Value_Get(tree, "cases"), i);
      run(e->d_name, c);
    }
    json_object_put(root);
    po_Arena_Free(fa);
  }
  closedir(dir);
}

static void test_patch_vectors(void **state) {
  (void)state;
  g_failed = g_run = 0;
  run_dir("patch", run_patch_case);
  fprintf(stderr, "patch vectors: %d run, %d failed\n", g_run, g_failed);
  assert_true(g_run > 0);
  assert_int_equal(g_failed, 0);
}

static void test_constructor_vectors(void **state) {
  (void)state;
  g_failed = g_run = 0;
  run_dir("constructor", run_constructor_case);
  fprintf(stderr, "constructor vectors: %d run, %d failed\n", g_run, g_failed);
  assert_true(g_run > 0);
  assert_int_equal(g_failed, 0);
}

static void test_ir_vectors(void **state) {
  (void)state;
  g_failed = g_run = 0;
  run_dir("ir", run_ir_case);
  fprintf(stderr, "ir vectors: %d run, %d failed\n", g_run, g_failed);
  assert_true(g_run > 0);
  assert_int_equal(g_failed, 0);
}

int main(int argc, char **argv) {
  g_dir = argc > 1 ? argv[1] : "tests/vectors";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_patch_vectors),
      cmocka_unit_test(test_constructor_vectors),
      cmocka_unit_test(test_ir_vectors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
