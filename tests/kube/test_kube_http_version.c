/* The HTTP version of the client's requests and watches (po_KubeClientOptions.http2), asked of the
 * real kube-apiserver, which offers HTTP/2 in TLS's ALPN: HTTP/1.1 by default, HTTP/2 when asked.
 * The local API server (tests/apiserver) speaks HTTP/1.1 only, so only the real one can tell the
 * two apart. Run by t_http_version_real.sh (kube_http_version_real) with KUBECONFIG set. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "po/kube/client.h"
#include "po/kube/config.h"

static int failures;

static void expect(bool ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

static bool count_event(void *ctx, po_KubeWatchEventType type, json_object *object) {
  (void)type;
  (void)object;
  (*(int *)ctx)++;
  return true;
}

/* A GET, a PATCH and a watch the server ends after a second: three answers, all of one version. */
static void check(po_KubeConfig *cfg, bool http2) {
  po_KubeClientOptions o = {.qps = -1, .http2 = http2};
  po_KubeClient *c = NULL;
  po_CtlStatus st;
  if (!po_KubeClient_New(cfg, &o, &c, &st)) {
    fprintf(stderr, "client: %s\n", st.message);
    exit(1);
  }
  po_KubeRef ns = {.version = "v1", .resource = "namespaces", .name = "default"};
  json_object *got = NULL;
  expect(po_KubeClient_Get(c, &ns, &got, &st), "GET the default namespace");
  json_object_put(got);
  po_KubeRef cm = {.version = "v1", .resource = "configmaps", .ns = "default", .name = "http-version"};
  const char *patch = "{\"data\":{\"k\":\"v\"}}";
  po_KubePatchOptions po = {.type = kPo_KubePatch_Merge};
  expect(po_KubeClient_Patch(c, &cm, &po, patch, strlen(patch), NULL, &st), "PATCH a ConfigMap");
  po_KubeRef all = {.version = "v1", .resource = "configmaps", .ns = "default"};
  po_KubeWatchOptions wo = {.timeout_seconds = 1};
  int events = 0;
  expect(po_KubeClient_Watch(c, &all, &wo, count_event, &events, NULL, &st), "a watch the server ends");
  expect(events >= 1, "the watch saw the ConfigMap");
  uint64_t v[2];
  po_KubeClient_HttpVersions(c, v);
  char what[160];
  snprintf(what, sizeof what, "%s: %llu answers in HTTP/1.1, %llu in HTTP/2 (want 3 in %s)",
           http2 ? "http2 = true" : "http2 = false (the default)", (unsigned long long)v[0], (unsigned long long)v[1],
           http2 ? "HTTP/2" : "HTTP/1.1");
  expect(v[http2 ? 1 : 0] == 3 && v[http2 ? 0 : 1] == 0, what);
  po_KubeClient_Free(c);
}

int main(void) {
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st;
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !po_KubeConfig_LoadFiles(kc, NULL, &cfg, &st)) {
    fprintf(stderr, "test_kube_http_version: no kubeconfig in KUBECONFIG%s%s\n", kc ? ": " : "", kc ? st.message : "");
    return 1;
  }
  check(cfg, false);
  check(cfg, true);
  po_KubeConfig_Free(cfg);
  return failures ? 1 : 0;
}
