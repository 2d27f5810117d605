/* A write whose answer is read for its metadata alone (po_KubeClient_PatchVersion,
 * po_KubeClient_UpdateVersion) asks kube-apiserver for a PartialObjectMetadata: a 24 KB object's
 * answer is then a few hundred bytes, and still says the uid, resourceVersion and finalizers the
 * caller reads (client.c, kAnswerMetadata). Only the real server serves one (tests/apiserver
 * answers the object whole, which written_of reads alike): run by t_meta_answer_real.sh
 * (kube_meta_answer_real) with KUBECONFIG set and the ConfigMap "answer" made (24 KB of data). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h" /* po_KubeClient_AnswerBytes_ */
#include "po/kube/client.h"
#include "po/kube/config.h"

static int failures;

static void expect(bool ok, const char *what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) failures++;
}

static const char *meta(json_object *o, const char *key) {
  json_object *m = NULL, *v = NULL;
  return json_object_object_get_ex(o, "metadata", &m) && json_object_object_get_ex(m, key, &v) ? json_object_get_string(v)
                                                                                                  : "";
}

/* The object as a GET has it (a new reference), and how many bytes that answer was. */
static json_object *get(po_KubeClient *c, const po_KubeRef *ref, uint64_t *bytes) {
  po_CtlStatus st;
  json_object *o = NULL;
  uint64_t before = po_KubeClient_AnswerBytes_(c);
  if (!po_KubeClient_Get(c, ref, &o, &st)) {
    fprintf(stderr, "GET: %s\n", st.message);
    exit(1);
  }
  *bytes = po_KubeClient_AnswerBytes_(c) - before;
  return o;
}

/* One write's answer against the object read right after it: small, and the same uid and version. */
static void check_written(po_KubeClient *c, const po_KubeRef *ref, const char *what, uint64_t answer,
                          const po_KubeWritten *w, uint64_t whole) {
  uint64_t bytes;
  json_object *now = get(c, ref, &bytes);
  char line[300];
  snprintf(line, sizeof line, "%s: answered in %llu bytes, the object is %llu (want under 2,048)", what,
           (unsigned long long)answer, (unsigned long long)whole);
  expect(answer > 0 && answer < 2048 && whole > 20000, line);
  snprintf(line, sizeof line, "%s: the answer's uid and resourceVersion (%s, %s) are the object's (%s, %s)", what, w->uid,
           w->rv, meta(now, "uid"), meta(now, "resourceVersion"));
  expect(*w->uid && !strcmp(w->uid, meta(now, "uid")) && *w->rv && !strcmp(w->rv, meta(now, "resourceVersion")), line);
  json_object_put(now);
}

int main(void) {
  po_KubeConfig *cfg = NULL;
  po_CtlStatus st;
  const char *kc = getenv("KUBECONFIG");
  if (!kc || !po_KubeConfig_LoadFiles(kc, NULL, &cfg, &st)) {
    fprintf(stderr, "test_kube_meta_answer: no kubeconfig in KUBECONFIG\n");
    return 1;
  }
  po_KubeClientOptions o = {.qps = -1};
  po_KubeClient *c = NULL;
  if (!po_KubeClient_New(cfg, &o, &c, &st)) {
    fprintf(stderr, "client: %s\n", st.message);
    return 1;
  }
  po_KubeRef cm = {.version = "v1", .resource = "configmaps", .ns = "default", .name = "answer"};
  uint64_t whole;
  json_object *obj = get(c, &cm, &whole);

  /* A JSON Patch over the version read, as a target's update is sent. */
  char patch[256];
  snprintf(patch, sizeof patch,
           "[{\"op\":\"replace\",\"path\":\"/metadata/resourceVersion\",\"value\":\"%s\"},"
           "{\"op\":\"add\",\"path\":\"/data/k\",\"value\":\"patched\"}]",
           meta(obj, "resourceVersion"));
  po_KubePatchOptions jp = {.type = kPo_KubePatch_Json};
  po_KubeWritten w;
  uint64_t before = po_KubeClient_AnswerBytes_(c);
  expect(po_KubeClient_PatchVersion(c, &cm, &jp, patch, strlen(patch), &w, &st), "PatchVersion (JSON Patch)");
  check_written(c, &cm, "PatchVersion", po_KubeClient_AnswerBytes_(c) - before, &w, whole);

  /* The same version again: the server's refusal is read as before (its Status, not metadata). */
  expect(!po_KubeClient_PatchVersion(c, &cm, &jp, patch, strlen(patch), &w, &st) && st.code == kPo_Ctl_Conflict,
         "a stale version is still a conflict");

  /* The whole object over the version it holds now (the fallback of a target's update). */
  json_object_put(obj);
  obj = get(c, &cm, &whole);
  before = po_KubeClient_AnswerBytes_(c);
  expect(po_KubeClient_UpdateVersion(c, &cm, obj, &w, &st), "UpdateVersion");
  check_written(c, &cm, "UpdateVersion", po_KubeClient_AnswerBytes_(c) - before, &w, whole);

  /* A finalizer's merge patch, the answer asked whether it lists the finalizer (a PropertyOverride's
   * first write): a PartialObjectMetadata carries metadata.finalizers. */
  po_KubePatchOptions mp = {.type = kPo_KubePatch_Merge, .answer_finalizer = "propertyoverride.io/test"};
  const char *add = "{\"metadata\":{\"finalizers\":[\"propertyoverride.io/test\"]}}";
  before = po_KubeClient_AnswerBytes_(c);
  expect(po_KubeClient_PatchVersion(c, &cm, &mp, add, strlen(add), &w, &st) && w.has_finalizer,
         "the finalizer's answer lists it");
  check_written(c, &cm, "the finalizer's PatchVersion", po_KubeClient_AnswerBytes_(c) - before, &w, whole);
  const char *drop = "{\"metadata\":{\"finalizers\":null}}";
  expect(po_KubeClient_PatchVersion(c, &cm, &mp, drop, strlen(drop), &w, &st) && !w.has_finalizer,
         "without it, the answer does not list it");

  json_object_put(obj);
  po_KubeClient_Free(c);
  po_KubeConfig_Free(cfg);
  return failures ? 1 : 0;
}
