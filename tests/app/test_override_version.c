#define _GNU_SOURCE /* memmem */
/* What the reconcile learns of a cached PropertyOverride without parsing it (io->override_version:
 * kube_io.c over po_Informer_Version, informer.c's version_of): its resourceVersion and uid,
 * NUL-terminated, cut to 127 bytes when the server's are as long as the 128-byte buffers or
 * longer (a hostile or broken API server: the cache keeps them whole), exactly what
 * snprintf("%s") gave before issue 26 copied them with strnlen and memcpy; every byte after the
 * text zero, as the table's callers got it. A loopback HTTP server in the test answers the
 * informer's list with PropertyOverrides whose versions are 0, 126, 127, 128, 129 and 300 bytes
 * long, and every watch with an empty stream. */
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
#include <unistd.h>

#include "kube_io.h"
#include "po/kube/client.h"
#include "po/kube/config.h"
#include "po/kube/informer.h"

static const size_t kLens[] = {0, 1, 126, 127, 128, 129, 300};
enum { kN = sizeof kLens / sizeof kLens[0] };

/* rv and uid of item i: `len` bytes, rv of digits (the server's kind of text), uid of letters */
static void text_of(char *out, size_t len, char c0, size_t i) {
  for (size_t k = 0; k < len; k++) out[k] = (char)(c0 + (k + i) % 10);
  out[len] = '\0';
}

static char *list_body(void) {
  size_t cap = 1 << 16, len = 0;
  char *b = malloc(cap);
  assert_non_null(b);
  len += (size_t)snprintf(b + len, cap - len,
                          "{\"kind\":\"PropertyOverrideList\",\"apiVersion\":\"propertyoverride.io/v1alpha1\","
                          "\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[");
  for (size_t i = 0; i < kN; i++) {
    char rv[400], uid[400];
    text_of(rv, kLens[i], '0', i);
    text_of(uid, kLens[i], 'a', i);
    len += (size_t)snprintf(b + len, cap - len,
                            "%s{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":"
                            "{\"name\":\"p%zu\",\"namespace\":\"default\",\"resourceVersion\":\"%s\",\"uid\":\"%s\","
                            "\"generation\":%zu},\"spec\":{}}",
                            i ? "," : "", i, rv, uid, i + 1);
  }
  snprintf(b + len, cap - len, "]}");
  return b;
}

/* ---- the loopback server: a list, then empty watches ---- */

static int g_listen = -1;
static pthread_t g_thread;
static char *g_list;

static void serve_conn(int fd) {
  char buf[1 << 14];
  size_t have = 0;
  for (;;) {
    char *end;
    while (!(end = memmem(buf, have, "\r\n\r\n", 4))) {
      if (have == sizeof buf) return;
      ssize_t n = read(fd, buf + have, sizeof buf - have);
      if (n <= 0) return;
      have += (size_t)n;
    }
    size_t head = (size_t)(end - buf) + 4;
    *end = '\0'; /* the request's head read as a string (the buffer is not one past what was read) */
    char path[1024] = "";
    if (sscanf(buf, "%*15s %1023s", path) != 1) return;
    char hdr[256];
    if (strstr(path, "watch=")) { /* nothing happens: the stream ends at once */
      int n = snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 0\r\n\r\n");
      if (write(fd, hdr, (size_t)n) < 0) return;
      usleep(20000);
    } else {
      size_t bl = strlen(g_list);
      int n = snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n", bl);
      if (write(fd, hdr, (size_t)n) < 0 || write(fd, g_list, bl) < 0) return;
    }
    memmove(buf, buf + head, have - head);
    have -= head;
  }
}

static void *serve(void *arg) {
  (void)arg;
  for (;;) {
    int fd = accept(g_listen, NULL, NULL);
    if (fd < 0) return NULL;
    serve_conn(fd);
    close(fd);
  }
}

static void test_versions_cut_as_snprintf_cut_them(void **state) {
  (void)state;
  g_list = list_body();
  g_listen = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t al = sizeof a;
  assert_int_equal(bind(g_listen, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(g_listen, 8), 0);
  assert_int_equal(getsockname(g_listen, (struct sockaddr *)&a, &al), 0);
  assert_int_equal(pthread_create(&g_thread, NULL, serve, NULL), 0);
  char config[512];
  int cl = snprintf(config, sizeof config,
                    "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster: {server: "
                    "'http://127.0.0.1:%d'}\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n"
                    "  user: {token: t}\n",
                    ntohs(a.sin_port));
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st = {0};
  assert_true(po_KubeConfig_ParseYaml(config, (size_t)cl, "test", NULL, &cfg, &st));
  po_KubeClientOptions co = {.max_retries = -1, .connect_timeout_ms = 1000, .timeout_ms = 2000};
  po_KubeClient *c = NULL;
  assert_true(po_KubeClient_New(cfg, &co, &c, &st));
  for (int keep_parsed = 0; keep_parsed < 2; keep_parsed++) {
    po_InformerOptions io = {.ref = kPo_OverridesRef, .backoff_initial_ns = 50000000, .backoff_max_ns = 100000000,
                             .keep_parsed = keep_parsed};
    po_InformerHandlers h = {0};
    po_Informer *inf = NULL;
    assert_true(po_Informer_New(c, &io, &h, &inf, &st));
    assert_true(po_Informer_Start(inf, &st));
    assert_true(po_Informer_WaitForSync(inf, 10000));
    po_KubeIO k = {.client = c, .ns_count = 1, .namespaces = {""}, .overrides = {inf}};
    po_ReconcileIO t = po_KubeIO_Table(&k);
    for (size_t i = 0; i < kN; i++) {
      char name[16], rv[400], uid[400];
      snprintf(name, sizeof name, "p%zu", i);
      text_of(rv, kLens[i], '0', i);
      text_of(uid, kLens[i], 'a', i);
      po_OverrideVersion want;
      memset(&want, 0, sizeof want);
      /* what it was before issue 26 (the counts used: the cut is meant) */
      assert_true(snprintf(want.rv, sizeof want.rv, "%s", rv) >= 0 && snprintf(want.uid, sizeof want.uid, "%s", uid) >= 0);
      want.generation = (int64_t)i + 1;
      po_OverrideVersion v;
      memset(&v, 0x5a, sizeof v); /* whatever the caller's stack held */
      assert_true(t.override_version(t.ctx, "default", name, &v));
      assert_string_equal(v.rv, want.rv);
      assert_string_equal(v.uid, want.uid);
      assert_int_equal(strlen(v.rv), kLens[i] < 127 ? kLens[i] : 127);
      assert_int_equal(v.generation, want.generation);
      assert_memory_equal(v.rv, want.rv, sizeof v.rv); /* the bytes after the text too */
      assert_memory_equal(v.uid, want.uid, sizeof v.uid);
      po_InformerVersion iv;
      memset(&iv, 0x5a, sizeof iv);
      assert_true(po_Informer_Version(inf, "default", name, &iv));
      assert_memory_equal(iv.rv, want.rv, sizeof iv.rv);
      assert_memory_equal(iv.uid, want.uid, sizeof iv.uid);
    }
    po_OverrideVersion none;
    memset(&none, 0x5a, sizeof none);
    assert_false(t.override_version(t.ctx, "default", "absent", &none)); /* not cached: all zero, as before */
    assert_string_equal(none.rv, "");
    assert_string_equal(none.uid, "");
    po_Informer_Stop(inf);
    po_Informer_Free(inf);
  }
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
  shutdown(g_listen, SHUT_RDWR);
  close(g_listen);
  pthread_join(g_thread, NULL);
  free(g_list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_versions_cut_as_snprintf_cut_them),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
