/* po_Owned_Plan as data: owned/plan.in.yaml holds one case a document (the object there, the
 * object wanted, the PropertyOverride's uid, the uid our own create returned, the kind), and
 * owned/plan.out.yaml what the plan decided for each (its action, the sentence a look-alike gets,
 * the object it would write), so a change of the ownership rules is reviewed as a diff.
 *
 *   PO_UPDATE_GOLDEN=1 ctest -R test_owned_plan    rewrites plan.out.yaml
 *
 * Case document:
 *   case: NAME
 *   kind: EnvoyFilter | EnvoyPatchPolicy
 *   ownerUID: the PropertyOverride's uid
 *   createdUID: the uid our create returned (absent: we created nothing)
 *   current: the object as the server has it (absent: none)
 *   desired: the adapter's object (absent: the PropertyOverride wants none) */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gitops.h"
#include "golden.h"
#include "po/engine.h"
#include "po/targets/owned.h"


static const char *str(json_object *o, const char *k) {
  json_object *v = NULL;
  return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                          : NULL;
}

static const char *action_name(po_OwnedPlanAction a) {
  static const char *const kNames[] = {"None", "Create", "Update", "Delete", "Foreign"};
  return (size_t)a < sizeof kNames / sizeof kNames[0] ? kNames[a] : "?";
}

/* One case's decision, as the document of plan.out.yaml that says it. */
static json_object *decide(json_object *c) {
  const char *name = str(c, "case"), *kind = str(c, "kind");
  if (!name || !kind) fail_msg("a case without case or kind: %s", json_object_to_json_string(c));
  po_OwnedKind k = kPo_Owned_EnvoyFilter;
  if (!strcmp(kind, "EnvoyPatchPolicy")) k = kPo_Owned_EnvoyPatchPolicy;
  else if (strcmp(kind, "EnvoyFilter") != 0) fail_msg("%s: kind %s: EnvoyFilter or EnvoyPatchPolicy", name, kind);
  json_object *current = json_object_object_get(c, "current"), *desired = json_object_object_get(c, "desired");
  po_OwnedPlan p = po_Owned_Plan(current, desired, str(c, "ownerUID"), str(c, "createdUID"), k);
  if (p.out_of_memory) fail_msg("%s: out of memory", name);
  json_object *out = json_object_new_object();
  json_object_object_add(out, "case", json_object_new_string(name));
  json_object_object_add(out, "action", json_object_new_string(action_name(p.action)));
  if (p.why) json_object_object_add(out, "why", json_object_new_string(p.why));
  if (p.object) json_object_object_add(out, "object", p.object); /* taken */
  return out;
}

static void test_owned_plan(void **state) {
  (void)state;
  const char *in = PO_OWNED_DIR "/plan.in.yaml", *out_path = PO_OWNED_DIR "/plan.out.yaml";
  size_t len = 0, ndocs = 0;
  char *text = po_Golden_Read(in, &len);
  if (!text) fail_msg("%s: cannot read", in);
  po_Arena *a = po_Arena_New();
  po_Value **docs = NULL;
  po_Status st;
  po_Status_Clear(&st);
  if (!po_Value_ParseYaml(text, len, a, &docs, &ndocs, &st)) fail_msg("%s: %s", in, st.message);
  if (ndocs < 10) fail_msg("%s: %zu cases, fewer than the 10 it holds", in, ndocs);
  json_object **outs = calloc(ndocs, sizeof *outs);
  assert_non_null(outs);
  for (size_t i = 0; i < ndocs; i++) {
    json_object *c = po_Value_ToJsonC(docs[i]);
    assert_non_null(c);
    outs[i] = decide(c);
    json_object_put(c);
  }
  char *got = NULL;
  size_t got_len = 0;
  FILE *mem = open_memstream(&got, &got_len);
  assert_non_null(mem);
  assert_true(po_Cli_EmitYaml(outs, ndocs, mem));
  fclose(mem);
  if (!po_Golden_Check(out_path, got, got_len)) fail_msg("%s: po_Owned_Plan decides otherwise now", out_path);
  for (size_t i = 0; i < ndocs; i++) json_object_put(outs[i]);
  free(outs);
  free(got);
  po_Arena_Free(a);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_owned_plan)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
