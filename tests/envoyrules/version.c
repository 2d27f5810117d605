/* Where the oracle's version and our snapshot differ, on the messages the walk reached: the
 * oracle describes each (its fields, their validate.FieldRules, its required oneofs) and we
 * compare with the embedded schema's. A field only one side has is said (never generated when
 * it is only theirs); a rule that differs must be in set_aside.c's list, and every entry of that
 * list must still differ, so the list stays exactly what the versions disagree on. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "set_aside.h"

typedef struct {
  size_t only_theirs, only_ours, rules_differ, unexplained;
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

static void compare_field(const po_Schema *s, const upb_FieldDef *f, json_object *theirs, upb_Arena *ua, Tally *t,
                          bool *known_seen) {
  json_object *ours = our_rules(s, f, ua);
  bool same = (!ours && !theirs) || (ours && theirs && json_object_equal(ours, theirs));
  const char *name = upb_FieldDef_FullName(f);
  long known = po_Diff_RuleDiffersIndex(name);
  if (known >= 0) known_seen[known] = true;
  if (!same) {
    t->rules_differ++;
    if (known < 0) t->unexplained++;
    printf("  rules differ%s: %s: ours %s, v1.32.4 %s\n", known < 0 ? " (not in set_aside.c: FAIL)" : " (set aside)", name,
           ours ? json_object_to_json_string(ours) : "none", theirs ? json_object_to_json_string(theirs) : "none");
  } else if (known >= 0) {
    t->unexplained++;
    printf("  FAIL: set_aside.c sets %s aside, but both versions have the same rules now\n", name);
  }
  json_object_put(ours);
}

static void compare_message(const po_Schema *s, const upb_MessageDef *m, json_object *answer, upb_Arena *ua, Tally *t,
                            bool *known_seen) {
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
      printf("  only in v1.32.4 (never generated): %s.%s\n", upb_MessageDef_FullName(m), json_object_get_string(name));
      continue;
    }
    compare_field(s, f, rules, ua, t, known_seen);
  }
  for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
    const char *name = upb_FieldDef_Name(upb_MessageDef_Field(m, i));
    bool found = false;
    for (size_t k = 0; k < n && !found; k++) {
      json_object *nm = NULL;
      json_object_object_get_ex(json_object_array_get_idx(fields, k), "name", &nm);
      found = !strcmp(json_object_get_string(nm), name);
    }
    if (found) continue;
    bool ours_only = po_Diff_OnlyOurs(upb_MessageDef_FullName(m), name);
    t->only_ours++;
    t->unexplained += !ours_only;
    printf("  only in our snapshot%s: %s.%s\n", ours_only ? " (set aside)" : " (not in set_aside.c: FAIL)", upb_MessageDef_FullName(m), name);
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
    if (!found) t->rules_differ++, t->unexplained++, printf("  FAIL: oneof %s.%s is required in our snapshot only\n", upb_MessageDef_FullName(m), upb_OneofDef_Name(o));
  }
  if (theirs > ours) t->rules_differ++, t->unexplained++, printf("  FAIL: %s has a required oneof only v1.32.4 has\n", upb_MessageDef_FullName(m));
}

/* m is the type of a field set_aside.c names as only our snapshot's, in one of the messages. */
static bool only_ours_leads_to(const po_Schema *s, const upb_MessageDef *m, const char *const *messages, size_t n) {
  for (size_t k = 0; k < n; k++) {
    const upb_MessageDef *p = po_Schema_FindMessage(s, messages[k]);
    for (int f = 0; p && f < upb_MessageDef_FieldCount(p); f++) {
      const upb_FieldDef *fd = upb_MessageDef_Field(p, f);
      if (upb_FieldDef_IsSubMessage(fd) && upb_FieldDef_MessageSubDef(fd) == m &&
          po_Diff_OnlyOurs(messages[k], upb_FieldDef_Name(fd))) {
        return true;
      }
    }
  }
  return false;
}

size_t po_DiffVersion_Check(const char *oracle, const char *const *messages, size_t n, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  const char **lines = calloc(n + 1, sizeof *lines);
  const char **raw = calloc(n + 1, sizeof *raw);
  if (!s || !lines || !raw) return free(lines), free(raw), 1;
  for (size_t i = 0; i < n; i++) lines[i] = po_Arena_Printf(a, "{\"type\":\"%s\",\"describe\":true}", messages[i]);
  bool ok = po_DiffOracle_RunRaw(oracle, lines, n, a, raw);
  Tally t = {0};
  size_t known = po_Diff_RuleDiffersCount();
  bool *known_seen = calloc(known + 1, sizeof *known_seen);
  upb_Arena *ua = upb_Arena_New();
  printf("\nthe oracle's version against our snapshot, on the %zu messages reached:\n", n);
  for (size_t i = 0; ok && ua && known_seen && i < n; i++) {
    json_object *answer = json_tokener_parse(raw[i]);
    const upb_MessageDef *m = po_Schema_FindMessage(s, messages[i]);
    json_object *err = NULL;
    if (!answer || !m || json_object_object_get_ex(answer, "error", &err)) {
      bool ours_only = m && only_ours_leads_to(s, m, messages, n);
      t.unexplained += !ours_only;
      printf("  %s%s: %s\n", ours_only ? "only in our snapshot (set aside): " : "FAIL: ", messages[i],
             err ? json_object_get_string(err) : "no answer");
    } else {
      compare_message(s, m, answer, ua, &t, known_seen);
      compare_oneofs(s, m, answer, ua, &t);
    }
    json_object_put(answer);
  }
  for (size_t k = 0; known_seen && k < known; k++) {
    if (!known_seen[k]) t.unexplained++, printf("  FAIL: set_aside.c names %s, which the walk no longer reaches\n", po_Diff_RuleDiffersField(k));
  }
  printf("  %zu fields only in v1.32.4, %zu only in our snapshot, %zu rules that differ, %zu not explained\n",
         t.only_theirs, t.only_ours, t.rules_differ, t.unexplained);
  upb_Arena_Free(ua);
  free(known_seen);
  free(lines);
  free(raw);
  return ok ? t.unexplained : t.unexplained + 1;
}
