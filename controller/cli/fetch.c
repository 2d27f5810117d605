/* preview --envoy-admin: GET of Envoy's /config_dump with libcurl, loaded at run time.
 *
 * Why dlopen and not a link: libcurl.so.4 brings 32 shared libraries (TLS, HTTP/2, LDAP,
 * Kerberos...), and the one-shot binary's start-up cost is a target (docs/benchmarks.md,
 * "CLI": validate -f within 5 M instructions; linking them cost about 13 M on every command).
 * Only `preview --envoy-admin` pays for them, once, when it runs. The API is libcurl's own
 * header's (types taken with __typeof__), never declared here. */
#define CURL_DISABLE_TYPECHECK 1 /* curl_easy_setopt as the function, not the checking macro */
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "preview.h"

typedef struct {
  __typeof__(&curl_easy_init) init;
  __typeof__(&curl_easy_setopt) setopt;
  __typeof__(&curl_easy_perform) perform;
  __typeof__(&curl_easy_getinfo) getinfo;
  __typeof__(&curl_easy_cleanup) cleanup;
  __typeof__(&curl_easy_strerror) strerror_;
} Curl;

static bool load(Curl *c, po_Status *st) {
  void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    po_Status_Set(st, kPo_Status_Io, "--envoy-admin needs libcurl (Debian: libcurl4): %s; or save the dump with "
                  "`curl URL/config_dump > dump.json` and use --config-dump", dlerror());
    return false;
  }
  /* The process ends after one command: the library stays loaded until then. */
  *(void **)&c->init = dlsym(h, "curl_easy_init");
  *(void **)&c->setopt = dlsym(h, "curl_easy_setopt");
  *(void **)&c->perform = dlsym(h, "curl_easy_perform");
  *(void **)&c->getinfo = dlsym(h, "curl_easy_getinfo");
  *(void **)&c->cleanup = dlsym(h, "curl_easy_cleanup");
  *(void **)&c->strerror_ = dlsym(h, "curl_easy_strerror");
  if (!c->init || !c->setopt || !c->perform || !c->getinfo || !c->cleanup || !c->strerror_) {
    po_Status_Set(st, kPo_Status_Io, "--envoy-admin: libcurl.so.4 lacks the easy interface");
    return false;
  }
  return true;
}

typedef struct {
  char *buf;
  size_t len, cap, max;
  bool over;
} Body;

static size_t on_data(char *p, size_t size, size_t n, void *ctx) {
  Body *b = ctx;
  size_t add = size * n;
  if (add > b->max - b->len) {
    b->over = true;
    return 0; /* libcurl stops the transfer: CURLE_WRITE_ERROR */
  }
  if (b->len + add + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 1 << 16;
    while (cap < b->len + add + 1) cap *= 2;
    char *nb = realloc(b->buf, cap);
    if (!nb) return 0;
    b->buf = nb;
    b->cap = cap;
  }
  memcpy(b->buf + b->len, p, add);
  b->len += add;
  return add;
}

char *po_Preview_Fetch(const char *url, size_t max_bytes, long timeout_ms, po_Arena *a, size_t *len, po_Status *st) {
  if (strncmp(url, "http://", 7) != 0) {
    po_Status_Set(st, kPo_Status_Usage, "--envoy-admin %s: expected an http:// URL of Envoy's admin endpoint (e.g. "
                  "http://127.0.0.1:19000 after `kubectl port-forward POD 19000`)", url);
    return NULL;
  }
  Curl c;
  if (!load(&c, st)) return NULL;
  /* The URL given is the admin endpoint; /config_dump is added unless it is there already.
   * include_eds: endpoints are in the dump only when asked for. */
  const char *path = strstr(url + 7, "/config_dump") ? "" : "/config_dump?include_eds";
  size_t ul = strlen(url);
  char *full = po_Arena_Printf(a, "%.*s%s", (int)(ul && url[ul - 1] == '/' && *path ? ul - 1 : ul), url, path);
  CURL *h = full ? c.init() : NULL;
  if (!h) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory"), NULL;
  Body b = {.max = max_bytes};
  char err[CURL_ERROR_SIZE] = "";
  c.setopt(h, CURLOPT_URL, full);
  c.setopt(h, CURLOPT_PROTOCOLS_STR, "http");
  c.setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  c.setopt(h, CURLOPT_NOSIGNAL, 1L);
  c.setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  c.setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  c.setopt(h, CURLOPT_NOPROXY, "*"); /* the admin port is local (or port-forwarded): never a proxy */
  c.setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  c.setopt(h, CURLOPT_WRITEDATA, &b);
  c.setopt(h, CURLOPT_ERRORBUFFER, err);
  CURLcode rc = c.perform(h);
  long status = 0;
  c.getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  c.cleanup(h);
  char *out = NULL;
  if (b.over) {
    po_Status_Set(st, kPo_Status_Limit, "%s: the config dump is over the %zu-byte limit", full,
                  max_bytes);
  } else if (rc != CURLE_OK) {
    po_Status_Set(st, kPo_Status_Io, "%s: %s", full, err[0] ? err : c.strerror_(rc));
  } else if (status != 200) {
    po_Status_Set(st, kPo_Status_Io, "%s: HTTP status %ld, expected 200 (is this Envoy's admin port?)", full, status);
  } else if ((out = po_Arena_Malloc(a, b.len + 1)) != NULL) {
    if (b.len) memcpy(out, b.buf, b.len);
    out[b.len] = '\0';
    *len = b.len;
  } else {
    po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  }
  free(b.buf);
  return out;
}
