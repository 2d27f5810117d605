/* adv-27: po_CompiledOverride_FromObject when memory runs out. The Nth allocation fails, for every
 * N until a compile runs through: the outcome must be Accepted (the failure did not matter) or
 * NoMemory, never Refused, the verdict that the spec is invalid. The override is valid and uses
 * what the compile rewrites before checking (po_Arguments_Friendly: a Duration as "7s", an enum
 * by number, a map's children): an allocation failing there left "7s" as it was, and the compile
 * then refused the spec ("unsupported target field type 'google.protobuf.Duration'"), so
 * preview printed that for a valid override (exit 1) and the webhook would have denied it.
 *
 * The allocator is replaced in this binary (as test_reconcile_oom does), armed only around the
 * compile; each compile runs in a child process, since json-c aborts on some failures of its own
 * (counted, not failed). The schema loads whole before the first arming. */
#include <json-c/json.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "po/engine.h"
#include "po/meshes/mesh.h"

#include "fail_alloc.h"

static const char kValid[] =
    "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
    "\"metadata\":{\"name\":\"a\",\"namespace\":\"default\"},"
    "\"spec\":{\"targetRef\":{\"kind\":\"ServiceDefaults\",\"name\":\"web\"},\"patches\":["
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    " \"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"7s\"},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    " \"op\":\"add\",\"path\":\"/lb_policy\",\"value\":2},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    " \"op\":\"add\",\"path\":\"/outlier_detection\",\"value\":{\"max_ejection_percent\":50,\"consecutive_5xx\":7}}]}}";

/* Whether compile_once says on stderr what it accepted (test_accepted_keeps_route_namespaces). */
static bool g_say_accepted;

/* The child's exit: 0 accepted, 1 refused (its errors on stderr), 2 no memory, 3 the compile
 * made fewer than n allocations (the end of the torture). */
static int compile_once(const json_object *obj, long n) {
  g_count = 0;
  g_fail_at = n;
  po_Arena *a = po_Arena_New();
  po_CompiledOverride c;
  po_CompileOutcome got = a ? po_CompiledOverride_FromObject(obj, NULL, a, &c) : kPo_CompileOutcome_NoMemory;
  g_fail_at = -1;
  if (g_count < n) return 3;
  if (got == kPo_CompileOutcome_Refused) {
    const char *d = po_CompiledOverride_Describe(&c, true, false, 400, a);
    fprintf(stderr, "allocation %ld: refused: %s\n", n, d ? d : "");
  }
  if (got == kPo_CompileOutcome_Accepted && g_say_accepted)
    fprintf(stderr, "allocation %ld: accepted: %zu route namespaces [%s %s %s %s]\n", n, c.route_namespace_count,
            c.ns ? c.ns : "(null)", c.name ? c.name : "(null)", c.target_ns ? c.target_ns : "(null)",
            c.target_name ? c.target_name : "(null)");
  return got == kPo_CompileOutcome_Accepted ? 0 : got == kPo_CompileOutcome_Refused ? 1 : 2;
}

/* One compile in a child process, the schema loaded on demand there (as the one-shot commands
 * load it): the loads the compile asks for fail too. */
typedef struct {
  const json_object *obj;
  const po_Arguments *args;
  const char *want;
  size_t fill;
  long n;
  int fd; /* in the child of in_child_output: the pipe's write end */
} Armed;

/* fn(a) in a child process: its exit status (-1 when it crashed), what it writes to a->fd (or
 * to stderr, as_stderr) read into out. */
static int in_child_output(int (*fn)(const Armed *a), Armed *a, bool as_stderr, char *out, size_t size) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    if (as_stderr && dup2(fd[1], 2) < 0) _exit(5);
    a->fd = fd[1];
    _exit(fn(a));
  }
  close(fd[1]);
  size_t got = 0;
  ssize_t r;
  while ((r = read(fd[0], out + got, size - 1 - got)) > 0) got += (size_t)r;
  out[got] = '\0';
  close(fd[0]);
  int ws;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

static int in_child(int (*fn)(const Armed *a), const Armed *a) {
  char none[1];
  Armed b = *a;
  return in_child_output(fn, &b, false, none, sizeof none);
}

static int compile_armed(const Armed *a) { return po_EnvoyApi_LoadOnDemand() ? compile_once(a->obj, a->n) : 4; }

static int child(const json_object *obj, long n) { return in_child(compile_armed, &(Armed){.obj = obj, .n = n}); }

static void test_compile_never_refuses_for_memory(void **state) {
  (void)state;
  json_object *obj = json_tokener_parse(kValid);
  assert_non_null(obj);
  assert_int_equal(child(obj, 1L << 60), 3); /* accepted, and it never reached that allocation */
  long refused = 0, crashed = 0, n;
  int rc = 0;
  for (n = 1; n < 1000000 && rc != 3; n++) {
    rc = child(obj, n);
    refused += rc == 1;
    crashed += rc < 0;
  }
  json_object_put(obj);
  printf("allocations 1 to %ld failed in turn: %ld refused, %ld crashed (json-c's asserts)\n", n - 2, refused, crashed);
  assert_true(n > 100);
  assert_int_equal(refused, 0);
}

/* adv-27b: an invalid override's refusal quotes the wrong value, which json-c's writer prints
 * (json_object_to_json_string_ext: malloc, outside the arena). Its NULL was printed as "?", and
 * the compile refused with that message: `validate -f examples/invalid` said "spec.priority: ? is
 * not valid" with allocation 1990 of 4356 failed, a verdict in a run whose memory ran out. Each
 * allocation failed in turn: NoMemory, or the refusal the unarmed compile gives, word for word. */
static const char *const kQuoted[] = {
    "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"kind\":"
    "\"ServiceDefaults\",\"name\":\"web\"},\"priority\":3000000000,\"patches\":[]}}",
    "{\"metadata\":{\"name\":\"n\",\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"kind\":"
    "\"ServiceDefaults\",\"name\":\"web\",\"namespace\":{\"a\":[1,2]}},\"patches\":[]}}",
    "{\"metadata\":{\"name\":\"r\",\"namespace\":\"default\"},\"spec\":{\"targetRef\":{\"group\":"
    "\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"gw\"},\"routeNamespaces\":[\"a\",[7]],"
    "\"patches\":[]}}",
};

/* A compile with allocation n failing, in a child: its exit as compile_once's, and what a
 * refusal says into why (the description, read from a pipe). */
static int child_says(const json_object *obj, long n, char *why, size_t size) {
  int rc = in_child_output(compile_armed, &(Armed){.obj = obj, .n = n}, true, why, size);
  /* the message without compile_once's "allocation N: " */
  char *colon = strncmp(why, "allocation ", 11) ? NULL : strstr(why, ": ");
  if (colon) memmove(why, colon + 2, strlen(colon + 2) + 1);
  return rc;
}

static void test_refusal_quotes_or_no_memory(void **state) {
  (void)state;
  for (size_t k = 0; k < sizeof kQuoted / sizeof kQuoted[0]; k++) {
    json_object *obj = json_tokener_parse(kQuoted[k]);
    assert_non_null(obj);
    static char want[8192], got[8192];
    /* unarmed: the refusal, and it never reached that allocation (compile_once says 3) */
    assert_int_equal(child_says(obj, 1L << 60, want, sizeof want), 3);
    assert_int_equal(child_says(obj, -1, want, sizeof want), 1);
    long other = 0, n;
    int rc = 0;
    for (n = 1; n < 1000000 && rc != 3; n++) {
      rc = child_says(obj, n, got, sizeof got);
      if (rc == 1 && strcmp(got, want) != 0) {
        if (other++ < 3) print_error("case %zu, allocation %ld: refused otherwise: %s(want %s)\n", k, n, got, want);
      }
    }
    json_object_put(obj);
    printf("case %zu: allocations 1 to %ld failed in turn, %ld refused with another message\n", k, n - 2, other);
    assert_true(n > 3);
    assert_int_equal(other, 0);
  }
}

/* An accepted Gateway target keeps its routeNamespaces: when the arena could not hold their list
 * the compile went on without it and accepted the override, whose policy then followed no
 * HTTPRoute of those namespaces. The most there may be (kPo_MaxRouteNamespaces), each of the
 * longest (63 characters), so the arena grows while it copies them. Each allocation failed in
 * turn: NoMemory, or all of them kept (and the names: its own, its target's, as unarmed). */
static void test_accepted_keeps_route_namespaces(void **state) {
  (void)state;
  char text[4096];
  size_t at = (size_t)snprintf(text, sizeof text,
                               "{\"metadata\":{\"name\":\"g\",\"namespace\":\"edge\"},\"spec\":{\"targetRef\":{"
                               "\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"public\","
                               "\"namespace\":\"edge\"},"
                               "\"routeNamespaces\":[");
  for (int i = 0; i < kPo_MaxRouteNamespaces; i++)
    at += (size_t)snprintf(text + at, sizeof text - at, "%s\"ns%02d-%.58s\"", i ? "," : "", i,
                           "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghij");
  snprintf(text + at, sizeof text - at,
           "],\"patches\":[{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":"
           "\"outbound\"},\"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"3s\"}]}}");
  json_object *obj = json_tokener_parse(text);
  assert_non_null(obj);
  g_say_accepted = true;
  static char want[512], got[512];
  assert_int_equal(child_says(obj, -1, want, sizeof want), 0);
  char all[64];
  snprintf(all, sizeof all, "accepted: %d route namespaces", (int)kPo_MaxRouteNamespaces);
  assert_true(strncmp(want, all, strlen(all)) == 0);
  long other = 0, n;
  int rc = 0;
  for (n = 1; n < 1000000 && rc != 3; n++) {
    rc = child_says(obj, n, got, sizeof got);
    if (rc == 0 && strcmp(got, want) != 0 && other++ < 3) print_error("allocation %ld: %s", n, got);
  }
  g_say_accepted = false;
  json_object_put(obj);
  printf("routeNamespaces: allocations 1 to %ld failed in turn, %ld accepted without them\n", n - 2, other);
  assert_true(n > 100);
  assert_int_equal(other, 0);
}

/* po_Arguments_ToConsul when memory runs out: po_Value_MapPut appended its entry with a NULL key
 * when the key's copy failed, and the next put to that map compared its key with the NULL (a crash,
 * found when the compile's spec tree left its arena and the block boundaries moved:
 * test_oom_passes); a put that failed was not checked, so arguments with a field missing could come
 * back as if whole. Each allocation fails in turn, in a child, with the arena filled before by 0 to
 * 2,040 bytes so that its blocks end at every put: NULL, or exactly the arguments of the unarmed
 * call. */
static int to_consul_once(const po_Arguments *args, const char *want, size_t fill, long n) {
  po_Arena *a = po_Arena_New();
  if (!a || (fill && !po_Arena_Malloc(a, fill))) return 4;
  g_count = 0;
  g_fail_at = n;
  po_Value *v = po_Arguments_ToConsul(args, a);
  g_fail_at = -1;
  if (g_count < n) return 3;
  const char *got = v ? po_Value_ToJson(v, a) : NULL;
  if (v && !got) return 2; /* the check itself could not print it: no verdict */
  if (v && strcmp(got, want) != 0) fprintf(stderr, "allocation %ld: %s\n", n, got);
  return !v ? 0 : strcmp(got, want) == 0 ? 0 : 1;
}

/* The map under the puts: long keys, so that copying a key is what takes a new block of the
 * arena, and the allocation that fails is the key's. 0: each put true with its entry whole, or
 * false and the map as before; 1: a put false that left an entry (a NULL key) or true without it. */
static int puts_once(long n) {
  po_Arena *a = po_Arena_New();
  po_Value *m = a ? po_Value_NewMap(a) : NULL;
  if (!m) return 4;
  g_count = 0;
  g_fail_at = n;
  int r = 0;
  for (int i = 0; i < 24 && !r; i++) {
    char key[160];
    snprintf(key, sizeof key, "%0150d", i);
    size_t before = po_Value_Size(m);
    bool ok = po_Value_MapPut(a, m, key, NULL);
    r = ok ? po_Value_Size(m) != before + 1 || strcmp(po_Value_KeyAt(m, before), key) != 0 : po_Value_Size(m) != before;
  }
  g_fail_at = -1;
  return r ? 1 : g_count < n ? 3 : 0;
}

static int to_consul_armed(const Armed *a) { return to_consul_once(a->args, a->want, a->fill, a->n); }
static int puts_armed(const Armed *a) { return puts_once(a->n); }

static void test_consul_arguments_whole_or_none(void **state) {
  (void)state;
  json_object *obj = json_tokener_parse(kValid);
  po_Arena *a = po_Arena_New();
  po_CompiledOverride c;
  assert_int_equal(po_CompiledOverride_FromObject(obj, NULL, a, &c), kPo_CompileOutcome_Accepted);
  const char *want = po_Value_ToJson(po_Arguments_ToConsul(c.args, a), a);
  assert_non_null(want);
  long bad = 0, crashed = 0, runs = 0;
  for (size_t fill = 0; fill <= 2040; fill += 8) {
    int rc = 0;
    for (long n = 1; n < 100000 && rc != 3; n++, runs++) {
      rc = in_child(to_consul_armed, &(Armed){.args = c.args, .want = want, .fill = fill, .n = n});
      assert_int_not_equal(rc, 4);
      bad += rc == 1;
      crashed += rc < 0;
    }
  }
  int rc = 0;
  for (long n = 1; n < 100000 && rc != 3; n++, runs++) {
    rc = in_child(puts_armed, &(Armed){.n = n});
    assert_int_not_equal(rc, 4);
    bad += rc == 1;
    crashed += rc < 0;
  }
  printf("%ld runs, each failing one allocation of the Consul arguments or of map puts: %ld incomplete, %ld crashed\n",
         runs, bad, crashed);
  po_Arena_Free(a);
  json_object_put(obj);
  assert_true(runs > 256);
  assert_int_equal(bad, 0);
  assert_int_equal(crashed, 0);
}

/* po_Arguments_Friendly when memory runs out: its puts and appends were not checked, so a
 * Duration written "1.5s" could come out {"seconds": 1} (its nanos' put failed), a list of enums
 * by number without an element, an object value without a child, and the compile accepted that
 * other override. A Gateway target: Consul's wire typing refuses a repeated enum. Each allocation of a compile fails in turn, with the arena filled before by 0
 * to 4,088 bytes so that its blocks end at each of the rewrite's puts: NoMemory, or accepted with
 * exactly the arguments of the unarmed compile (the Consul arguments' JSON, written after). Each
 * child loads the schema and compiles once unarmed first, so the sweep is the compile's alone. */
static const char kFriendly[] =
    "{\"metadata\":{\"name\":\"f\",\"namespace\":\"edge\"},\"spec\":{\"targetRef\":{\"group\":"
    "\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"public\"},\"patches\":["
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    " \"op\":\"add\",\"path\":\"/connect_timeout\",\"value\":\"1.5s\"},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    " \"op\":\"add\",\"path\":\"/common_lb_config/override_host_status\",\"value\":{\"statuses\":[1,2,3,4,5]}},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    " \"op\":\"add\",\"path\":\"/lb_policy\",\"value\":2},"
    "{\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},"
    " \"op\":\"add\",\"path\":\"/outlier_detection\",\"value\":{\"max_ejection_percent\":50,\"consecutive_5xx\":7,"
    "\"success_rate_minimum_hosts\":3,\"enforcing_success_rate\":90}}]}}";

/* One compile with allocation n failing, the schema loaded and the arena filled: 0 no memory, or
 * accepted with want's arguments (into out); 1 accepted with others (on stderr); 2 refused; 3 the
 * compile made fewer than n allocations (its arguments into out); 4 the set-up failed. */
static int friendly_once(const json_object *obj, const char *want, size_t fill, long n, char *out, size_t size) {
  po_Arena *a = po_Arena_New();
  po_CompiledOverride c;
  if (!a || (fill && !po_Arena_Malloc(a, fill))) return 4;
  g_count = 0;
  g_fail_at = n;
  po_CompileOutcome got = po_CompiledOverride_FromObject(obj, NULL, a, &c);
  g_fail_at = -1;
  if (g_count < n && got != kPo_CompileOutcome_Accepted) return 4;
  if (got == kPo_CompileOutcome_NoMemory) return 0;
  if (got == kPo_CompileOutcome_Refused) return 2;
  const char *args = po_Value_ToJson(po_Arguments_ToConsul(c.args, a), a);
  if (!args) return 4;
  snprintf(out, size, "%s", args);
  if (g_count < n) return 3;
  if (strcmp(args, want) == 0) return 0;
  fprintf(stderr, "fill %zu, allocation %ld: %s\n", fill, n, args);
  return 1;
}

/* In a child, the schema loaded and one compile run unarmed (so that what the sweep fails is the
 * compile's alone), then each allocation failed in turn with the arena filled by `fill` bytes,
 * in that process (a compile that fails leaves nothing behind but its arena). What it counted
 * ("runs bad refused"), or with want NULL the unarmed arguments, into out through a pipe. */
static int friendly_armed(const Armed *a) {
  static char args[4096], counts[64];
  /* on demand, unless an earlier test of this binary loaded it whole in the parent */
  (void)po_EnvoyApi_LoadOnDemand();
  int rc = friendly_once(a->obj, "", 0, 1L << 60, args, sizeof args);
  long runs = 0, bad = 0, refused = 0;
  for (long n = 1; a->want && rc == 3 && n < 100000; n++, runs++) {
    int r = friendly_once(a->obj, a->want, a->fill, n, args, sizeof args);
    if (r == 4 || r == 3) break;
    bad += r == 1;
    refused += r == 2;
  }
  snprintf(counts, sizeof counts, "%ld %ld %ld", runs, bad, refused);
  const char *say = a->want ? counts : args;
  return rc != 3 || write(a->fd, say, strlen(say)) < 0 ? 4 : 0;
}

static int friendly_child(const json_object *obj, const char *want, size_t fill, char *out, size_t size) {
  return in_child_output(friendly_armed, &(Armed){.obj = obj, .want = want, .fill = fill}, false, out, size);
}

static void test_friendly_values_whole_or_no_memory(void **state) {
  (void)state;
  json_object *obj = json_tokener_parse(kFriendly);
  assert_non_null(obj);
  static char want[4096], got[64];
  assert_int_equal(friendly_child(obj, NULL, 0, want, sizeof want), 0);
  assert_non_null(strstr(want, "\"nanos\":500000000")); /* the rewrites are in what is compared */
  assert_non_null(strstr(want, "\"statuses\":[\"HEALTHY\",\"UNHEALTHY\",\"DRAINING\",\"TIMEOUT\",\"DEGRADED\"]"));
  long bad = 0, refused = 0, crashed = 0, runs = 0;
  for (size_t fill = 0; fill <= 4088; fill += 8) {
    int rc = friendly_child(obj, want, fill, got, sizeof got);
    long r = 0, b = 0, f = 0;
    if (rc == 0) assert_int_equal(sscanf(got, "%ld %ld %ld", &r, &b, &f), 3);
    assert_int_not_equal(rc, 4);
    crashed += rc != 0;
    runs += r, bad += b, refused += f;
  }
  json_object_put(obj);
  printf("%ld runs, each failing one allocation of a compile with friendly values: %ld incomplete, %ld refused, "
         "%ld fills crashed\n", runs, bad, refused, crashed);
  assert_true(runs > 256);
  assert_int_equal(bad, 0);
  assert_int_equal(refused, 0);
  assert_int_equal(crashed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_compile_never_refuses_for_memory),
                                     cmocka_unit_test(test_refusal_quotes_or_no_memory),
                                     cmocka_unit_test(test_accepted_keeps_route_namespaces),
                                     cmocka_unit_test(test_consul_arguments_whole_or_none),
                                     cmocka_unit_test(test_friendly_values_whole_or_no_memory)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
