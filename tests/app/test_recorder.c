#define _GNU_SOURCE /* memmem, strcasestr */
/* controller/app's Event recorder: what reaches the API server for a sequence of Events. A
 * loopback HTTP server in the test answers every request 201 and keeps "METHOD path body" per
 * request, so each case checks the exact requests, not the recorder's own counters alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "po/kube/client.h"
#include "po/kube/config.h"
#include "po/runtime/clock.h"
#include "recorder.h"

/* ---- the loopback server ---- */

typedef struct {
  int listen_fd, port;
  pthread_t thread;
  pthread_mutex_t mu;
  char log[1 << 16]; /* one line per request */
  size_t len;
  int requests;
} Server;

static void *serve_conn(Server *s, int fd) {
  char buf[1 << 14];
  size_t have = 0;
  for (;;) {
    char *end;
    while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
      ssize_t n = read(fd, buf + have, sizeof buf - have);
      if (n <= 0) return NULL;
      have += (size_t)n;
    }
    size_t head = (size_t)(end - buf) + 4, body_len = 0;
    char *cl = strcasestr(buf, "content-length:");
    if (cl && cl < end) body_len = strtoul(cl + 15, NULL, 10);
    while (have < head + body_len) {
      ssize_t n = read(fd, buf + have, sizeof buf - have);
      if (n <= 0) return NULL;
      have += (size_t)n;
    }
    char method[16], path[512];
    if (sscanf(buf, "%15s %511s", method, path) != 2) return NULL;
    pthread_mutex_lock(&s->mu);
    s->len += (size_t)snprintf(s->log + s->len, sizeof s->log - s->len, "%s %s %.*s\n", method, path, (int)body_len, buf + head);
    s->requests++;
    pthread_mutex_unlock(&s->mu);
    static const char ok[] = "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
    if (write(fd, ok, sizeof ok - 1) < 0) return NULL;
    memmove(buf, buf + head + body_len, have - head - body_len);
    have -= head + body_len;
  }
}

static void *serve(void *arg) {
  Server *s = arg;
  for (;;) {
    int fd = accept(s->listen_fd, NULL, NULL);
    if (fd < 0) return NULL;
    serve_conn(s, fd);
    close(fd);
  }
}

static Server srv;
static char kubeconfig[64];

static int setup(void **state) {
  (void)state;
  srv.listen_fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  if (bind(srv.listen_fd, (struct sockaddr *)&a, sizeof a) || listen(srv.listen_fd, 8) ||
      getsockname(srv.listen_fd, (struct sockaddr *)&a, &al)) {
    return -1;
  }
  srv.port = ntohs(a.sin_port);
  pthread_mutex_init(&srv.mu, NULL);
  pthread_create(&srv.thread, NULL, serve, &srv);
  snprintf(kubeconfig, sizeof kubeconfig, "/tmp/po-test-recorder-XXXXXX");
  int fd = mkstemp(kubeconfig);
  if (fd < 0) return -1;
  dprintf(fd,
          "apiVersion: v1\nkind: Config\ncurrent-context: t\n"
          "clusters: [{name: t, cluster: {server: 'http://127.0.0.1:%d'}}]\n"
          "users: [{name: t, user: {token: x}}]\n"
          "contexts: [{name: t, context: {cluster: t, user: t, namespace: ops}}]\n",
          srv.port);
  close(fd);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  shutdown(srv.listen_fd, SHUT_RDWR);
  close(srv.listen_fd);
  pthread_join(srv.thread, NULL);
  unlink(kubeconfig);
  return 0;
}

/* The requests since the last call, and their number. */
static int take(char *out, size_t cap) {
  pthread_mutex_lock(&srv.mu);
  size_t n0 = srv.len < cap - 1 ? srv.len : cap - 1;
  memcpy(out, srv.log, n0);
  out[n0] = 0;
  int n = srv.requests;
  srv.len = 0;
  srv.log[0] = 0;
  srv.requests = 0;
  pthread_mutex_unlock(&srv.mu);
  return n;
}

static size_t occurrences(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p++) n++;
  return n;
}

typedef struct {
  po_KubeConfig *cfg;
  po_KubeClient *client;
  po_EventRecorder *r;
} Fixture;

static Fixture open_recorder(po_EventRecorderOptions o) {
  Fixture f = {0};
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_true(po_KubeConfig_Load(&(po_KubeConfigOptions){.kubeconfig = kubeconfig}, &f.cfg, &st));
  assert_true(po_KubeClient_New(f.cfg, &(po_KubeClientOptions){0}, &f.client, &st));
  assert_non_null(f.r = po_EventRecorder_New(f.client, &o));
  char drop[16];
  take(drop, sizeof drop);
  return f;
}

static void close_recorder(Fixture *f) {
  po_EventRecorder_Free(f->r);
  po_KubeClient_Free(f->client);
  po_KubeConfig_Free(f->cfg);
}

static json_object *obj(const char *name, const char *uid) {
  char text[256];
  snprintf(text, sizeof text, "{\"metadata\":{\"namespace\":\"ns1\",\"name\":\"%s\",\"uid\":\"%s\"}}", name, uid);
  return json_tokener_parse(text);
}

static void rec(Fixture *f, json_object *about, const char *type, const char *reason, const char *msg) {
  po_EventRecorder_Record(f->r, "propertyoverride.io/v1alpha1", "PropertyOverride", about, type, reason, msg);
}

/* Accepted and then Programmed on one object within the hold: one Event, the newer. */
static void test_newer_normal_replaces_pending(void **state) {
  (void)state;
  Fixture f = open_recorder((po_EventRecorderOptions){.hold_ms = 60000});
  json_object *a = obj("a", "uid-a");
  rec(&f, a, "Normal", "Accepted", "1 patch is valid");
  rec(&f, a, "Normal", "Programmed", "generation 1 is live");
  po_EventRecorder_Flush(f.r);
  char log[8192];
  assert_int_equal(take(log, sizeof log), 1);
  assert_non_null(strstr(log, "POST /api/v1/namespaces/ns1/events "));
  assert_non_null(strstr(log, "\"reason\":\"Programmed\""));
  assert_null(strstr(log, "Accepted"));
  assert_int_equal(po_EventRecorder_Stats(f.r).superseded, 1);
  json_object_put(a);
  close_recorder(&f);
}

/* A Warning is never replaced; other objects never coalesce. */
static void test_warnings_and_other_objects_kept(void **state) {
  (void)state;
  Fixture f = open_recorder((po_EventRecorderOptions){.hold_ms = 60000});
  json_object *a = obj("a", "uid-a"), *b = obj("b", "uid-b");
  rec(&f, a, "Warning", "Invalid", "patch[0]: bad");
  rec(&f, a, "Normal", "Accepted", "1 patch is valid");
  rec(&f, b, "Normal", "Accepted", "1 patch is valid");
  po_EventRecorder_Flush(f.r);
  char log[8192];
  assert_int_equal(take(log, sizeof log), 3);
  assert_int_equal(occurrences(log, "\"reason\":\"Invalid\""), 1);
  assert_int_equal(occurrences(log, "\"reason\":\"Accepted\""), 2);
  assert_int_equal(occurrences(log, "\"uid\":\"uid-b\""), 1);
  json_object_put(a);
  json_object_put(b);
  close_recorder(&f);
}

/* The same Event three times: one POST with count 3; again after it was posted: a PATCH of the
 * count on the posted Event, no new object. */
static void test_repeats_are_a_series(void **state) {
  (void)state;
  Fixture f = open_recorder((po_EventRecorderOptions){.hold_ms = 60000});
  json_object *a = obj("a", "uid-a");
  for (int i = 0; i < 3; i++) rec(&f, a, "Warning", "TargetError", "409 conflict");
  po_EventRecorder_Flush(f.r);
  char log[8192];
  assert_int_equal(take(log, sizeof log), 1);
  assert_non_null(strstr(log, "\"count\":3"));
  char name[128] = "";
  const char *n = strstr(log, "\"name\":\"a.");
  assert_non_null(n);
  sscanf(n + 8, "%127[^\"]", name);
  rec(&f, a, "Warning", "TargetError", "409 conflict");
  po_EventRecorder_Flush(f.r);
  assert_int_equal(take(log, sizeof log), 1);
  char want[256];
  snprintf(want, sizeof want, "PATCH /api/v1/namespaces/ns1/events/%s {\"count\":4,", name);
  assert_non_null(strstr(log, want));
  /* Nothing new: nothing sent. */
  po_EventRecorder_Flush(f.r);
  assert_int_equal(take(log, sizeof log), 0);
  po_EventRecorderStats s = po_EventRecorder_Stats(f.r);
  assert_int_equal(s.posted, 1);
  assert_int_equal(s.patched, 1);
  assert_int_equal(s.coalesced, 3);
  json_object_put(a);
  close_recorder(&f);
}

/* Bounded: with every slot pending, a new Event is dropped and counted; a posted one makes room. */
static void test_bounded(void **state) {
  (void)state;
  Fixture f = open_recorder((po_EventRecorderOptions){.hold_ms = 60000, .capacity = 2});
  json_object *o[4] = {obj("a", "1"), obj("b", "2"), obj("c", "3"), obj("d", "4")};
  for (int i = 0; i < 3; i++) rec(&f, o[i], "Warning", "Invalid", "x");
  assert_int_equal(po_EventRecorder_Stats(f.r).dropped, 1);
  po_EventRecorder_Flush(f.r);
  char log[8192];
  assert_int_equal(take(log, sizeof log), 2);
  rec(&f, o[3], "Warning", "Invalid", "x"); /* replaces the oldest posted one */
  po_EventRecorder_Flush(f.r);
  assert_int_equal(take(log, sizeof log), 1);
  assert_non_null(strstr(log, "\"uid\":\"4\""));
  assert_int_equal(po_EventRecorder_Stats(f.r).dropped, 1);
  for (int i = 0; i < 4; i++) json_object_put(o[i]);
  close_recorder(&f);
}

/* The runnable posts on its own after the hold, and its stop posts what is still pending. */
static void test_runnable_posts_and_stop_flushes(void **state) {
  (void)state;
  Fixture f = open_recorder((po_EventRecorderOptions){.hold_ms = 20});
  po_Runnable run = po_EventRecorder_Runnable(f.r);
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_true(run.start(run.ctx, &st));
  json_object *a = obj("a", "uid-a");
  rec(&f, a, "Normal", "Programmed", "live");
  int64_t until = po_RtClock_Now(po_RtClock_Real()) + 30 * PO_NS_PER_S;
  while (po_EventRecorder_Stats(f.r).posted < 1 && po_RtClock_Now(po_RtClock_Real()) < until) {
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  assert_int_equal(po_EventRecorder_Stats(f.r).posted, 1);
  char log[8192];
  assert_int_equal(take(log, sizeof log), 1);
  po_EventRecorder_Free(f.r); /* frees the first one (running): its stop flushes nothing new */
  f.r = po_EventRecorder_New(f.client, &(po_EventRecorderOptions){.hold_ms = 600000});
  run = po_EventRecorder_Runnable(f.r);
  assert_true(run.start(run.ctx, &st));
  rec(&f, a, "Warning", "Invalid", "bad");
  assert_true(run.stop(run.ctx, po_RtClock_Now(po_RtClock_Real()) + 30 * PO_NS_PER_S));
  assert_int_equal(take(log, sizeof log), 1);
  assert_non_null(strstr(log, "\"reason\":\"Invalid\""));
  json_object_put(a);
  close_recorder(&f);
}

/* A stream of Normal changes on one object does not hold its Events back: the newest is posted
 * when the first one was due, while the changes go on. */
static void test_replacements_keep_the_first_due_time(void **state) {
  (void)state;
  Fixture f = open_recorder((po_EventRecorderOptions){.hold_ms = 100});
  po_Runnable run = po_EventRecorder_Runnable(f.r);
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  assert_true(run.start(run.ctx, &st));
  json_object *a = obj("a", "uid-a");
  int64_t until = po_RtClock_Now(po_RtClock_Real()) + 30 * PO_NS_PER_S;
  for (int n = 0; po_EventRecorder_Stats(f.r).posted < 1 && po_RtClock_Now(po_RtClock_Real()) < until; n++) {
    char reason[32];
    snprintf(reason, sizeof reason, "Step%d", n); /* a new reason every 5 ms: always a replacement */
    rec(&f, a, "Normal", reason, "m");
    nanosleep(&(struct timespec){0, 5000000}, NULL);
  }
  assert_true(po_EventRecorder_Stats(f.r).posted >= 1);
  assert_true(run.stop(run.ctx, po_RtClock_Now(po_RtClock_Real()) + 30 * PO_NS_PER_S));
  char log[8192];
  assert_true(take(log, sizeof log) >= 1);
  json_object_put(a);
  close_recorder(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_newer_normal_replaces_pending),
      cmocka_unit_test(test_warnings_and_other_objects_kept),
      cmocka_unit_test(test_repeats_are_a_series),
      cmocka_unit_test(test_bounded),
      cmocka_unit_test(test_runnable_posts_and_stop_flushes),
      cmocka_unit_test(test_replacements_keep_the_first_due_time),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
