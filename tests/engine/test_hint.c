/* The unknown-field did-you-mean (engine/src/hint.c): the ranked search over the schema's name
 * tables (issue 25: the per-message character classes, distances in order of a lower bound)
 * answers exactly what the plain scan in declaration order answers, for typos of every field of
 * every message reachable from the four resource types (a deletion, an insertion, a
 * substitution, a transposition, two edits, a JSON name, a name of another message). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "compiled.h"
#include "internal.h"

static int g_compared, g_hinted;

static void compare(const po_Schema *s, const upb_MessageDef *m, const char *name, po_Arena *a) {
  size_t len = strlen(name);
  if (upb_MessageDef_FindFieldByNameWithSize(m, name, len)) return; /* not unknown */
  /* a field another embedded snapshot has is said so instead of a did-you-mean (newer.c): not
   * the ranked search's answer to compare */
  if (po_Hint_NewerField(s, m, name, len, NULL, NULL, a)) return;
  const char *ranked = po_Hint_UnknownField(s, m, name, len, NULL, NULL, a);
  const char *plain = po_Hint_UnknownField(NULL, m, name, len, NULL, NULL, a);
  g_compared++;
  if (ranked) g_hinted++;
  if (!ranked != !plain || (ranked && strcmp(ranked, plain))) {
    fail_msg("%s '%s': ranked '%s', plain '%s'", upb_MessageDef_FullName(m), name, ranked ? ranked : "(none)",
             plain ? plain : "(none)");
  }
}

static void typos(const po_Schema *s, const upb_MessageDef *m, const char *f, const char *other, po_Arena *a) {
  char b[160];
  size_t n = strlen(f);
  if (n + 2 >= sizeof b) return;
  for (size_t i = 0; i < n; i++) {
    /* deletion */
    memcpy(b, f, i);
    memcpy(b + i, f + i + 1, n - i);
    compare(s, m, b, a);
    /* substitution */
    memcpy(b, f, n + 1);
    b[i] = b[i] == 'x' ? 'y' : 'x';
    compare(s, m, b, a);
    /* insertion */
    memcpy(b, f, i);
    b[i] = 'e';
    memcpy(b + i + 1, f + i, n - i + 1);
    compare(s, m, b, a);
    /* transposition, and two edits */
    if (i + 1 < n) {
      memcpy(b, f, n + 1);
      char t = b[i];
      b[i] = b[i + 1];
      b[i + 1] = t;
      compare(s, m, b, a);
      b[0] = b[0] == 'q' ? 'z' : 'q';
      compare(s, m, b, a);
    }
  }
  compare(s, m, other, a);
}

static void walk(const po_Schema *s, const upb_MessageDef *m, int depth, po_Arena *a) {
  int n = upb_MessageDef_FieldCount(m);
  for (int i = 0; i < n; i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(m, i);
    typos(s, m, upb_FieldDef_Name(f), upb_FieldDef_JsonName(f), a);
    typos(s, m, upb_FieldDef_Name(f), upb_FieldDef_Name(upb_MessageDef_Field(m, (i + 1) % n)), a);
    if (depth > 0 && upb_FieldDef_IsSubMessage(f)) walk(s, upb_FieldDef_MessageSubDef(f), depth - 1, a);
  }
}

static void test_ranked_equals_plain(void **state) {
  (void)state;
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_EnvoyApi_Schema_(NULL, NULL, &st);
  assert_non_null(s);
  static const char *const kRoots[] = {"envoy.config.cluster.v3.Cluster", "envoy.config.listener.v3.Listener",
                                       "envoy.config.route.v3.RouteConfiguration",
                                       "envoy.config.endpoint.v3.ClusterLoadAssignment"};
  for (size_t r = 0; r < 4; r++) {
    po_Arena *a = po_Arena_New();
    const upb_MessageDef *m = po_Schema_FindMessage(s, kRoots[r]);
    assert_non_null(m);
    walk(s, m, 1, a);
    po_Arena_Free(a);
  }
  /* enough of both kinds that the comparison means something */
  assert_true(g_compared > 10000);
  assert_true(g_hinted > 5000 && g_hinted < g_compared);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_ranked_equals_plain)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
