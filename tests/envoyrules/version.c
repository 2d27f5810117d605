/* The oracle's version against the snapshot a run judges with, on the messages the walk reached:
 * the oracle describes each (its fields, their validate.FieldRules, its required oneofs) and we
 * compare with the embedded schema's. Both come from the same go-control-plane envoy version
 * (envoy-validate-VERSION, the snapshot VERSION), so any difference (a field only one side has,
 * a rule or a required oneof that differs) is a fault of the extraction or of the oracle's build,
 * and fails the run. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct {
  size_t only_theirs, only_ours, rules_differ;
} Tally;

static json_object *our_rules(const po_Schema *s, const upb_FieldDef *f, upb_Arena *ua) {
  const upb_MessageDef *rd = NULL;
  const upb_Message *r = po_Schema_FieldRules(s, f, ua, &rd);
  if (!r) return NULL;
  po_Status st;
  po_Status_Clear(&st);
  char *json = po_Json_Encode(s, rd, r, ua, NULL, &st);
  return json ? json_tokener_parse(json) : NULL;
}

static void compare_field(const po_Schema *s, const upb_FieldDef *f, json_object *theirs, upb_Arena *ua, Tally *t) {
  json_object *ours = our_rules(s, f, ua);
  bool same = (!ours && !theirs) || (ours && theirs && json_object_equal(ours, theirs));
  if (!same) {
    t->rules_differ++;
    printf("  FAIL: rules differ: %s: ours %s, the oracle's %s\n", upb_FieldDef_FullName(f),
           ours ? json_object_to_json_string(ours) : "none", theirs ? json_object_to_json_string(theirs) : "none");
  }
  json_object_put(ours);
}

static bool has_field(json_object *fields, const char *name) {
  size_t n = fields ? json_object_array_length(fields) : 0;
  for (size_t k = 0; k < n; k++) {
    json_object *nm = NULL;
    json_object_object_get_ex(json_object_array_get_idx(fields, k), "name", &nm);
    if (!strcmp(json_object_get_string(nm), name)) return true;
  }
  return false;
}

static void compare_message(const po_Schema *s, const upb_MessageDef *m, json_object *answer, upb_Arena *ua, Tally *t) {
  json_object *fields = NULL;
  json_object_object_get_ex(answer, "fields", &fields);
  size_t n = fields ? json_object_array_length(fields) : 0;
  for (size_t i = 0; i < n; i++) {
    json_object *fi = json_object_array_get_idx(fields, i), *name = NULL, *rules = NULL;
    json_object_object_get_ex(fi, "name", &name);
    json_object_object_get_ex(fi, "rules", &rules);
    const upb_FieldDef *f = upb_MessageDef_FindFieldByName(m, json_object_get_string(name));
    if (!f) {
      t->only_theirs++;
      printf("  FAIL: only in the oracle's: %s.%s\n", upb_MessageDef_FullName(m), json_object_get_string(name));
      continue;
    }
    compare_field(s, f, rules, ua, t);
  }
  for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
    const char *name = upb_FieldDef_Name(upb_MessageDef_Field(m, i));
    if (has_field(fields, name)) continue;
    t->only_ours++;
    printf("  FAIL: only in our snapshot: %s.%s\n", upb_MessageDef_FullName(m), name);
  }
}

/* Required oneofs: the same names on both sides. */
static void compare_oneofs(const po_Schema *s, const upb_MessageDef *m, json_object *answer, upb_Arena *ua, Tally *t) {
  json_object *req = NULL;
  json_object_object_get_ex(answer, "required_oneofs", &req);
  size_t theirs = req ? json_object_array_length(req) : 0, ours = 0;
  for (int i = 0; i < upb_MessageDef_OneofCount(m); i++) {
    const upb_OneofDef *o = upb_MessageDef_Oneof(m, i);
    if (!po_Diff_OneofRequired(s, o, ua)) continue;
    ours++;
    bool found = false;
    for (size_t k = 0; k < theirs && !found; k++) found = !strcmp(json_object_get_string(json_object_array_get_idx(req, k)), upb_OneofDef_Name(o));
    if (!found) t->rules_differ++, printf("  FAIL: oneof %s.%s is required in our snapshot only\n", upb_MessageDef_FullName(m), upb_OneofDef_Name(o));
  }
  if (theirs > ours) t->rules_differ++, printf("  FAIL: %s has a required oneof only the oracle's has\n", upb_MessageDef_FullName(m));
}

size_t po_DiffVersion_Check(const char *oracle, const char *const *messages, size_t n, po_Arena *a) {
  const po_Schema *s = po_DiffSnapshot_Schema();
  const char **lines = calloc(n + 1, sizeof *lines);
  const char **raw = calloc(n + 1, sizeof *raw);
  upb_Arena *ua = upb_Arena_New();
  if (!s || !lines || !raw || !ua) return free(lines), free(raw), upb_Arena_Free(ua), 1;
  for (size_t i = 0; i < n; i++) lines[i] = po_Arena_Printf(a, "{\"type\":\"%s\",\"describe\":true}", messages[i]);
  bool ok = po_DiffOracle_RunRaw(oracle, lines, n, a, raw);
  Tally t = {0};
  size_t unread = 0;
  printf("\nthe oracle's version against our snapshot %s, on the %zu messages reached:\n", po_DiffSnapshot_Version(), n);
  for (size_t i = 0; ok && i < n; i++) {
    json_object *answer = json_tokener_parse(raw[i]);
    const upb_MessageDef *m = po_Schema_FindMessage(s, messages[i]);
    json_object *err = NULL;
    if (!answer || !m || json_object_object_get_ex(answer, "error", &err)) {
      unread++;
      printf("  FAIL: %s: %s\n", messages[i], err ? json_object_get_string(err) : "no answer");
    } else {
      compare_message(s, m, answer, ua, &t);
      compare_oneofs(s, m, answer, ua, &t);
    }
    json_object_put(answer);
  }
  size_t bad = t.only_theirs + t.only_ours + t.rules_differ + unread;
  printf("  %zu fields only in the oracle's, %zu only in our snapshot, %zu rules that differ, %zu messages unread: %s\n",
         t.only_theirs, t.only_ours, t.rules_differ, unread, bad ? "FAIL" : "the same");
  upb_Arena_Free(ua);
  free(lines);
  free(raw);
  return ok ? bad : bad + 1;
}
