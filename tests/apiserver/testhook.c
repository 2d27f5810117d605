/* po-apiserver-testhook: a tiny HTTPS admission webhook for the API server's tests.
 *   po-apiserver-testhook --cert F --key F --ready-file F [--log F]
 * Denies (403) objects labelled deny=..., warns for warn=..., sleeps 3 s for slow=...,
 * answers 500 for broken=...; appends "OPERATION namespace/name" (or "MUTATE ..." on /mutate)
 * to --log for every review. On /mutate it answers a JSONPatch: label patch=V adds the label
 * mutated=V (V "deny" adds deny=yes instead, for the validating call after it; V "bad" a patch
 * that cannot apply), label pin=... sets spec.size back to 1. */
#include <arpa/inet.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *log_path;

typedef struct Body {
  char *p;
  size_t n;
} Body;

static char *read_all(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = calloc(1, (size_t)n + 1);
  if (fread(b, 1, (size_t)n, f) != (size_t)n) n = 0;
  fclose(f);
  return b;
}

static json_object *get(json_object *o, const char *k) {
  json_object *v = NULL;
  return o && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static enum MHD_Result reply(struct MHD_Connection *c, int code, const char *text) {
  struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(r, "Content-Type", "application/json");
  enum MHD_Result ret = MHD_queue_response(c, (unsigned)code, r);
  MHD_destroy_response(r);
  return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **ctx) {
  (void)cls, (void)method, (void)version;
  Body *b = *ctx;
  if (!b) {
    *ctx = calloc(1, sizeof *b);
    return MHD_YES;
  }
  if (*size) {
    b->p = realloc(b->p, b->n + *size + 1);
    memcpy(b->p + b->n, data, *size);
    b->n += *size;
    b->p[b->n] = 0;
    *size = 0;
    return MHD_YES;
  }
  json_object *rev = b->p ? json_tokener_parse(b->p) : NULL;
  json_object *req = get(rev, "request");
  json_object *obj = get(req, "object");
  if (!obj || json_object_get_type(obj) != json_type_object) obj = get(req, "oldObject");
  json_object *labels = get(get(obj, "metadata"), "labels");
  const char *op = json_object_get_string(get(req, "operation"));
  const char *ns = json_object_get_string(get(req, "namespace"));
  const char *name = json_object_get_string(get(req, "name"));
  if (log_path) {
    FILE *f = fopen(log_path, "a");
    if (f) {
      bool m = url && !strcmp(url, "/mutate");
      fprintf(f, "%s %s/%s\n", m ? "MUTATE" : op ? op : "?", ns ? ns : "", name ? name : "");
      fclose(f);
    }
  }
  if (get(labels, "slow")) sleep(3);
  if (get(labels, "broken")) {
    json_object_put(rev);
    return reply(c, 500, "{}");
  }
  json_object *resp = json_object_new_object();
  json_object_object_add(resp, "uid", json_object_get(get(req, "uid")));
  bool deny = get(labels, "deny") != NULL;
  json_object_object_add(resp, "allowed", json_object_new_boolean(!deny));
  if (deny) {
    json_object *st = json_object_new_object();
    json_object_object_add(st, "code", json_object_new_int(403));
    json_object_object_add(st, "message", json_object_new_string("label deny is set"));
    json_object_object_add(resp, "status", st);
  }
  const char *pv = json_object_get_string(get(labels, "patch"));
  if (url && !strcmp(url, "/mutate") && (pv || get(labels, "pin"))) {
    char ops[512];
    if (get(labels, "pin")) snprintf(ops, sizeof ops, "[{\"op\":\"replace\",\"path\":\"/spec/size\",\"value\":1}]");
    else if (!strcmp(pv, "bad")) snprintf(ops, sizeof ops, "[{\"op\":\"replace\",\"path\":\"/no/such/member\",\"value\":1}]");
    else if (!strcmp(pv, "deny")) snprintf(ops, sizeof ops, "[{\"op\":\"add\",\"path\":\"/metadata/labels/deny\",\"value\":\"yes\"}]");
    else snprintf(ops, sizeof ops, "[{\"op\":\"add\",\"path\":\"/metadata/labels/mutated\",\"value\":\"%.100s\"}]", pv);
    /* base64 by hand: this test double links no codec */
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char b64[800];
    size_t n = strlen(ops), k = 0;
    for (size_t i = 0; i < n; i += 3) {
      unsigned v = (unsigned char)ops[i] << 16 | (i + 1 < n ? (unsigned char)ops[i + 1] << 8 : 0) | (i + 2 < n ? (unsigned char)ops[i + 2] : 0);
      b64[k++] = a[v >> 18 & 63];
      b64[k++] = a[v >> 12 & 63];
      b64[k++] = i + 1 < n ? a[v >> 6 & 63] : '=';
      b64[k++] = i + 2 < n ? a[v & 63] : '=';
    }
    b64[k] = 0;
    json_object_object_add(resp, "patchType", json_object_new_string("JSONPatch"));
    json_object_object_add(resp, "patch", json_object_new_string(b64));
  }
  if (get(labels, "warn")) {
    json_object *w = json_object_new_array();
    json_object_array_add(w, json_object_new_string("this object is warned"));
    json_object_object_add(resp, "warnings", w);
  }
  json_object *out = json_object_new_object();
  json_object_object_add(out, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
  json_object_object_add(out, "kind", json_object_new_string("AdmissionReview"));
  json_object_object_add(out, "response", resp);
  enum MHD_Result ret = reply(c, 200, json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
  json_object_put(out);
  json_object_put(rev);
  return ret;
}

static void done(void *cls, struct MHD_Connection *c, void **ctx, enum MHD_RequestTerminationCode t) {
  (void)cls, (void)c, (void)t;
  Body *b = *ctx;
  if (b) {
    free(b->p);
    free(b);
  }
  *ctx = NULL;
}

int main(int argc, char **argv) {
  const char *cert = NULL, *key = NULL, *ready = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--cert")) cert = argv[i + 1];
    else if (!strcmp(argv[i], "--key")) key = argv[i + 1];
    else if (!strcmp(argv[i], "--ready-file")) ready = argv[i + 1];
    else if (!strcmp(argv[i], "--log")) log_path = argv[i + 1];
  }
  char *cp = cert ? read_all(cert) : NULL, *kp = key ? read_all(key) : NULL;
  if (!cp || !kp || !ready) {
    fprintf(stderr, "usage: po-apiserver-testhook --cert F --key F --ready-file F [--log F]\n");
    return 2;
  }
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, NULL);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* loopback only */
  struct MHD_Daemon *d = MHD_start_daemon(
      MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_TLS | MHD_USE_ERROR_LOG, 0, NULL,
      NULL, handler, NULL, MHD_OPTION_HTTPS_MEM_CERT, cp, MHD_OPTION_HTTPS_MEM_KEY, kp, MHD_OPTION_NOTIFY_COMPLETED,
      done, NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_END);
  if (!d) {
    fprintf(stderr, "testhook: cannot start\n");
    return 1;
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", ready);
  FILE *f = fopen(tmp, "w");
  if (!f) return 1;
  fprintf(f, "%d\n", info ? info->port : 0);
  fclose(f);
  rename(tmp, ready);
  int sig;
  sigwait(&sigs, &sig);
  MHD_stop_daemon(d);
  free(cp);
  free(kp);
  return 0;
}
