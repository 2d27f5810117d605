/* The memory deciding a review costs, against what the server reserves for it on its budget
 * (po_Admission_Cost): each shape of tests/webhook/reviews.h is decided, and its answer
 * serialized, in a fresh process (this binary again, `--measure N`), whose peak resident memory
 * (VmHWM, reset through /proc/self/clear_refs once the body is built) over its resident memory
 * then is what deciding it held. The reservation must cover it; for the maximal review it must
 * not be more than 3 times it either (the budget would refuse what fits). Prints each shape's
 * body, peak and factor. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "po/engine.h"
#include "po/webhook/admission.h"
#include "po/webhook/mutate.h"
#include "reviews.h"

static size_t status_kb(const char *field) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  size_t kb = 0, n = strlen(field);
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, field, n) == 0 && line[n] == ':') kb = strtoul(line + n + 1, NULL, 10);
  }
  if (f) fclose(f);
  return kb;
}

/* In the fresh process: decide the shape (validate, or mutate when `mutate`), print the bytes. */
static int measure(int which, bool mutate) {
  size_t len;
  /* The engine loads its schemas on first use, once per process (about 8 MB, part of the steady
   * state): a typical review first, so that the peak is the review's alone. */
  char *warm = po_TestReview_Body(kReview_Typical, &len);
  po_Arena *wa = po_Arena_New();
  po_CtlStatus wst;
  if (!warm || !wa) return 1;
  json_object_put(po_Admission_Review(warm, len, NULL, wa, &wst));
  po_Arena_Free(wa);
  free(warm);
  char *body = po_TestReview_Body((po_TestReview)which, &len);
  if (!body) return 1;
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f || fputs("5", f) < 0 || fclose(f) != 0) return 2;
  size_t before = status_kb("VmRSS");
  po_CtlStatus st;
  json_object *out;
  po_Arena *a = po_Arena_New();
  if (mutate) {
    po_MutateOptions mo = {0};
    out = po_Admission_Mutate(body, len, &mo, &st, NULL);
  } else {
    out = po_Admission_Review(body, len, NULL, a, &st);
  }
  if (!out) return 3;
  const char *text = json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
  char *copy = strdup(text); /* the HTTP layer copies the answer */
  size_t peak = status_kb("VmHWM");
  printf("%zu\n", (peak > before ? peak - before : 0) * 1024);
  free(copy);
  json_object_put(out);
  po_Arena_Free(a);
  free(body);
  return 0;
}

static size_t measured(int which, bool mutate) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fd[1], 1);
    char n[16];
    snprintf(n, sizeof n, "%d", which);
    execl("/proc/self/exe", "test_webhook_cost", mutate ? "--measure-mutate" : "--measure", n, (char *)NULL);
    _exit(127);
  }
  close(fd[1]);
  char buf[64] = "";
  ssize_t got = read(fd[0], buf, sizeof buf - 1);
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || got <= 0) fail_msg("measuring %s failed (status %d)", po_kTestReviewNames[which], st);
  return strtoull(buf, NULL, 10);
}

/* Measures one shape, validated and mutated; prints each and returns how many were over. */
static int over(int which) {
  size_t len;
  char *body = po_TestReview_Body((po_TestReview)which, &len);
  assert_non_null(body);
  size_t cost = po_Admission_Cost(body, len);
  int bad = 0;
  for (int m = 0; m < 2; m++) {
    size_t peak = measured(which, m == 1);
    printf("%-15s %-8s body %8zu B  peak %10zu B (%5.1fx the body)  reserved %10zu B (%5.1fx)%s\n",
           po_kTestReviewNames[which], m ? "mutate" : "validate", len, peak, (double)peak / (double)len, cost,
           (double)cost / (double)len, peak > cost ? "  OVER" : "");
    bad += peak > cost;
    if (which == kReview_Maximal && m == 0 && cost > 3 * peak) {
      fail_msg("the maximal review reserves %zu bytes for a peak of %zu: over 3 times", cost, peak);
    }
  }
  free(body);
  return bad;
}

static void check(int which) {
  if (po_TestSanitized()) skip();
  if (over(which)) fail_msg("%s: deciding it held more than the reservation (above)", po_kTestReviewNames[which]);
}

static void test_typical(void **state) { (void)state; check(kReview_Typical); }
static void test_maximal(void **state) { (void)state; check(kReview_Maximal); }
static void test_maximal_denied(void **state) { (void)state; check(kReview_MaximalDenied); }
static void test_containers(void **state) { (void)state; check(kReview_Containers); }
static void test_scalars(void **state) { (void)state; check(kReview_Scalars); }
static void test_strings(void **state) { (void)state; check(kReview_Strings); }
static void test_value_lists(void **state) {
  (void)state;
  if (po_TestSanitized()) skip();
  int bad = 0;
  for (int w = kReview_EfStrings; w <= kReview_PoObjects; w++) bad += over(w);
  if (bad) fail_msg("%d of the value lists held more than their reservation (above)", bad);
}

/* A kind or a "value" key may be written with \\u escapes: priced as written plainly. A \\u escape
 * elsewhere (Go's encoder writes & < > as \\u0026 ...) changes nothing. */
static size_t cost_of(const char *kind, const char *key, const char *pad) {
  char body[4096];
  int n = snprintf(body, sizeof body,
                   "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\","
                   "\"kind\":{\"kind\":\"%s\"},\"pad\":\"%s\",\"object\":{\"spec\":{\"%s\":[1,2,3,4,5,6,7,8,9,10]}}}}",
                   kind, pad, key);
  return po_Admission_Cost(body, (size_t)n);
}

static void test_escaped_names_priced(void **state) {
  (void)state;
  size_t plain = cost_of("EnvoyFilter", "value", "");
  assert_true(cost_of("Envoy\\u0046ilter", "value", "") >= plain);
  assert_true(cost_of("EnvoyFilter", "v\\u0061lue", "") >= plain);
  assert_true(cost_of("\\u0045nvoyFilter", "\\u0056alue", "") >= plain);
  size_t other = cost_of("Thing", "value", ""), keyless = cost_of("Thing", "items", "");
  assert_true(other < plain);
  assert_true(keyless < other);
  assert_true(cost_of("Thing", "v\\u0061lue", "") > keyless);
  /* an escape that spells nothing of it: no more than its bytes */
  assert_true(cost_of("Thing", "items", "a\\u0026b") == keyless + 8 * 5); /* its 8 bytes */
}

int main(int argc, char **argv) {
  if (argc == 3 && (!strcmp(argv[1], "--measure") || !strcmp(argv[1], "--measure-mutate"))) {
    return measure(atoi(argv[2]), !strcmp(argv[1], "--measure-mutate"));
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_typical),    cmocka_unit_test(test_maximal), cmocka_unit_test(test_maximal_denied),
      cmocka_unit_test(test_containers), cmocka_unit_test(test_scalars), cmocka_unit_test(test_strings),
      cmocka_unit_test(test_value_lists),
      cmocka_unit_test(test_escaped_names_priced),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
