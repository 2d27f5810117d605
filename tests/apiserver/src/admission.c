/* Admission webhooks, mutating then validating: rule matching under the lock, then AdmissionReview
 * v1 POSTs with libcurl (caBundle verified; services dialled through --webhook-host-override or
 * --webhook-service so the TLS name stays NAME.NAMESPACE.svc). A mutating webhook's JSONPatch is
 * applied to the object the next webhook (and the store) sees. */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

typedef struct Hook {
  char *name;
  char *url, *connect_to; /* connect_to: "host:port:ahost:aport" or NULL */
  unsigned char *ca;
  size_t ca_len;
  long timeout;
  bool ignore;
  char *body; /* the AdmissionReview request (validating: built at prepare) */
  json_object *req; /* mutating: the request without its object, which is added per call */
  bool reinvoke;    /* mutating: reinvocationPolicy IfNeeded */
  char *av;         /* mutating: the apiVersion the object is sent in */
  char *refused; /* matchConditions failed to evaluate under failurePolicy Fail: the 403 text */
  char uid[37];
} Hook;

struct po_As_AdmissionJob {
  Hook hooks[32];
  int n;
};

static bool str_in(json_object *arr, const char *v) {
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(arr, i));
    if (s && (!strcmp(s, "*") || !strcmp(s, v))) return true;
  }
  return false;
}

static bool resource_in(json_object *arr, const char *plural, const char *sub) {
  for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
    const char *s = json_object_get_string(json_object_array_get_idx(arr, i));
    if (!s) continue;
    char want[300];
    snprintf(want, sizeof want, "%s%s%s", plural, sub ? "/" : "", sub ? sub : "");
    if (!strcmp(s, "*/*") || !strcmp(s, want)) return true;
    if (!sub && !strcmp(s, "*")) return true;
    if (sub) {
      char a[300], b[300];
      snprintf(a, sizeof a, "%s/*", plural);
      snprintf(b, sizeof b, "*/%s", sub);
      if (!strcmp(s, a) || !strcmp(s, b)) return true;
    }
  }
  return false;
}

static bool rules_match(json_object *rules, po_As_Resource *r, const char *version, const char *op, const char *sub) {
  for (size_t i = 0; rules && i < json_object_array_length(rules); i++) {
    json_object *rule = json_object_array_get_idx(rules, i);
    const char *scope = po_As_GetStr(rule, "scope");
    if (scope && !strcmp(scope, "Namespaced") && !r->namespaced) continue;
    if (scope && !strcmp(scope, "Cluster") && r->namespaced) continue;
    if (str_in(po_As_Get(rule, "operations"), op) && str_in(po_As_Get(rule, "apiGroups"), r->group) &&
        str_in(po_As_Get(rule, "apiVersions"), version) && resource_in(po_As_Get(rule, "resources"), r->plural, sub))
      return true;
  }
  return false;
}

static unsigned char *b64decode(const char *s, size_t *outlen) {
  size_t n = strlen(s);
  unsigned char *out = malloc(n + 1);
  size_t o = 0;
  unsigned v = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    int d;
    if (c >= 'A' && c <= 'Z') d = c - 'A';
    else if (c >= 'a' && c <= 'z') d = c - 'a' + 26;
    else if (c >= '0' && c <= '9') d = c - '0' + 52;
    else if (c == '+') d = 62;
    else if (c == '/') d = 63;
    else continue;
    v = (v << 6) | (unsigned)d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (unsigned char)((v >> bits) & 0xff);
    }
  }
  out[o] = 0;
  *outlen = o;
  return out;
}

static const char *svc_target(const char *ns, const char *name) {
  char key[300];
  snprintf(key, sizeof key, "%s/%s=", ns, name);
  for (int i = 0; i < po_as.nsvc_map; i++)
    if (!strncmp(po_as.svc_map[i], key, strlen(key))) return po_as.svc_map[i] + strlen(key);
  return po_as.webhook_override;
}

static json_object *object_for_review(json_object *o, const char *av) {
  if (!o) return NULL;
  char *s = po_As_Serialize(o, av);
  json_tokener *t = s ? json_tokener_new_ex(kPo_As_MaxJsonDepth) : NULL;
  json_object *c = t ? json_tokener_parse_ex(t, s, (int)strlen(s)) : NULL;
  json_tokener_free(t);
  free(s);
  return c;
}

/* matchConditions, as the real dispatcher evaluates them after the rules and selectors: any
 * condition false skips the webhook (whatever errors the others raised); otherwise an
 * evaluation error skips it under failurePolicy Ignore and, under Fail, refuses the request
 * without calling anything. The variables are object, oldObject (null where the operation has
 * none) and request (the AdmissionRequest without its objects); an expression outside this
 * server's CEL subset counts as an evaluation error (the VWC write refuses those anyway).
 * Returns 1 call, 0 skip, -1 refuse (errs filled as Kubernetes aggregates them). */
static int match_conditions(json_object *conds, json_object *obj, json_object *old, json_object *req, bool ignore,
                            char *errs, size_t errsz) {
  size_t n = conds && json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
  const char *names[] = {"object", "oldObject", "request"};
  json_object *values[] = {obj, old, req};
  int nerr = 0;
  char first[768] = "", all[1536] = "";
  for (size_t i = 0; i < n; i++) {
    const char *e = po_As_GetStr(json_object_array_get_idx(conds, i), "expression");
    char err[256] = "";
    int res = e ? po_As_Cel_EvalVars(e, names, values, 3, err, sizeof err) : -1;
    if (res == 0) return 0;
    if (res == 1) continue;
    if (res == -1) snprintf(err, sizeof err, "outside the CEL subset of this local API server");
    char one[768];
    snprintf(one, sizeof one, "expression '%s' resulted in error: %s", e ? e : "", err);
    if (!nerr) snprintf(first, sizeof first, "%s", one);
    size_t used = strlen(all);
    snprintf(all + used, sizeof all - used, "%s%s", nerr ? ", " : "", one);
    nerr++;
  }
  if (!nerr) return 1;
  if (ignore) return 0;
  if (nerr == 1) snprintf(errs, errsz, "%s", first);
  else snprintf(errs, errsz, "[%s]", all);
  return -1;
}

bool po_As_Admission_CheckConfig(json_object *vwc, char *field, size_t fieldsz, char *reason, size_t reasonsz, char *msg,
                                 size_t msgsz) {
  json_object *hooks = po_As_Get(vwc, "webhooks");
  const char *names[] = {"object", "oldObject", "request"};
  json_object *values[] = {NULL, NULL, NULL};
  for (size_t i = 0; hooks && json_object_is_type(hooks, json_type_array) && i < json_object_array_length(hooks); i++) {
    json_object *conds = po_As_Get(json_object_array_get_idx(hooks, i), "matchConditions");
    size_t n = conds && json_object_is_type(conds, json_type_array) ? json_object_array_length(conds) : 0;
    if (n > 64) {
      snprintf(field, fieldsz, "webhooks[%zu].matchConditions", i);
      snprintf(reason, reasonsz, "FieldValueTooMany");
      snprintf(msg, msgsz, "Too many: %zu: must have at most 64 items", n);
      return false;
    }
    for (size_t j = 0; j < n; j++) {
      json_object *c = json_object_array_get_idx(conds, j);
      const char *nm = po_As_GetStr(c, "name"), *e = po_As_GetStr(c, "expression");
      if (!nm || !nm[0] || !e || !e[0]) {
        snprintf(field, fieldsz, "webhooks[%zu].matchConditions[%zu].%s", i, j, !nm || !nm[0] ? "name" : "expression");
        snprintf(reason, reasonsz, "FieldValueRequired");
        snprintf(msg, msgsz, "Required value");
        return false;
      }
      for (size_t k = 0; k < j; k++) {
        const char *other = po_As_GetStr(json_object_array_get_idx(conds, k), "name");
        if (other && !strcmp(other, nm)) {
          snprintf(field, fieldsz, "webhooks[%zu].matchConditions[%zu].name", i, j);
          snprintf(reason, reasonsz, "FieldValueDuplicate");
          snprintf(msg, msgsz, "Duplicate value: \"%s\"", nm);
          return false;
        }
      }
      /* A real server accepts any CEL that compiles; this one refuses what it cannot evaluate,
       * so no test runs against a condition it would silently get wrong. */
      char err[256];
      if (po_As_Cel_EvalVars(e, names, values, 3, err, sizeof err) == -1) {
        snprintf(field, fieldsz, "webhooks[%zu].matchConditions[%zu].expression", i, j);
        snprintf(reason, reasonsz, "FieldValueInvalid");
        snprintf(msg, msgsz, "Invalid value: \"%.200s\": compilation failed: outside the CEL subset of this local API server (tests/apiserver/src/cel.c)", e);
        return false;
      }
    }
  }
  return true;
}

po_As_AdmissionJob *po_As_Admission_Prepare(po_As_Resource *r, const char *version, const char *operation,
                                            const char *subresource, const char *ns, const char *name,
                                            json_object *obj, json_object *old, bool dry_run, bool mutating) {
  po_As_Resource *vwc = po_As_Registry_FindGR("admissionregistration.k8s.io", mutating ? "mutatingwebhookconfigurations"
                                                                                         : "validatingwebhookconfigurations");
  if (!vwc || vwc->nitems == 0) return NULL;
  po_As_AdmissionJob *job = NULL;
  json_object *nslabels = NULL;
  if (r->namespaced && ns) {
    po_As_Entry *ne = po_As_Store_Get(po_As_Registry_FindGR("", "namespaces"), NULL, ns);
    nslabels = ne ? po_As_Get(po_As_Get(ne->obj, "metadata"), "labels") : NULL;
  } else if (!strcmp(r->plural, "namespaces") && !r->group[0]) {
    nslabels = po_As_Get(po_As_Get(obj ? obj : old, "metadata"), "labels");
  }
  json_object *objlabels = po_As_Get(po_As_Get(obj ? obj : old, "metadata"), "labels");
  char *av = po_As_ApiVersion(r, version);
  for (size_t i = 0; i < vwc->nitems; i++) {
    json_object *cfg = vwc->items[i].obj;
    json_object *hooks = po_As_Get(cfg, "webhooks");
    for (size_t j = 0; hooks && j < json_object_array_length(hooks); j++) {
      json_object *h = json_object_array_get_idx(hooks, j);
      if (!rules_match(po_As_Get(h, "rules"), r, version, operation, subresource)) continue;
      if ((r->namespaced || nslabels) && !po_As_LabelSelectorObj_Match(po_As_Get(h, "namespaceSelector"), nslabels)) continue;
      if (!po_As_LabelSelectorObj_Match(po_As_Get(h, "objectSelector"), objlabels)) continue;
      /* the AdmissionRequest (its objects are added after the matchConditions, which see them
       * as the separate variables object and oldObject) */
      char uid[37];
      po_As_Uuid(uid);
      json_object *req = json_object_new_object();
      json_object_object_add(req, "uid", json_object_new_string(uid));
      json_object *kind = json_object_new_object();
      json_object_object_add(kind, "group", json_object_new_string(r->group));
      json_object_object_add(kind, "version", json_object_new_string(version));
      json_object_object_add(kind, "kind", json_object_new_string(r->kind));
      json_object *res = json_object_new_object();
      json_object_object_add(res, "group", json_object_new_string(r->group));
      json_object_object_add(res, "version", json_object_new_string(version));
      json_object_object_add(res, "resource", json_object_new_string(r->plural));
      json_object_object_add(req, "kind", kind);
      json_object_object_add(req, "resource", res);
      if (subresource) json_object_object_add(req, "subResource", json_object_new_string(subresource));
      json_object_object_add(req, "requestKind", po_As_Copy(kind));
      json_object_object_add(req, "requestResource", po_As_Copy(res));
      if (subresource) json_object_object_add(req, "requestSubResource", json_object_new_string(subresource));
      if (name) json_object_object_add(req, "name", json_object_new_string(name));
      if (r->namespaced && ns) json_object_object_add(req, "namespace", json_object_new_string(ns));
      json_object_object_add(req, "operation", json_object_new_string(operation));
      json_object *ui = json_object_new_object();
      json_object_object_add(ui, "username", json_object_new_string("po-apiserver-client"));
      json_object *groups = json_object_new_array();
      json_object_array_add(groups, json_object_new_string("system:authenticated"));
      json_object_object_add(ui, "groups", groups);
      json_object_object_add(req, "userInfo", ui);
      json_object_object_add(req, "dryRun", json_object_new_boolean(dry_run));
      json_object *opts = json_object_new_object();
      json_object_object_add(opts, "apiVersion", json_object_new_string("meta.k8s.io/v1"));
      const char *ok = !strcmp(operation, "CREATE") ? "CreateOptions" : !strcmp(operation, "DELETE") ? "DeleteOptions" : "UpdateOptions";
      json_object_object_add(opts, "kind", json_object_new_string(ok));
      json_object_object_add(req, "options", opts);
      json_object *vobj = object_for_review(obj, av), *vold = object_for_review(old, av);
      const char *fp = po_As_GetStr(h, "failurePolicy");
      bool ignore = fp && !strcmp(fp, "Ignore");
      char refused[2048] = "";
      int m = match_conditions(po_As_Get(h, "matchConditions"), vobj, vold, req, ignore, refused, sizeof refused);
      if (m == 0 || (job && job->n >= 32)) {
        json_object_put(vobj);
        json_object_put(vold);
        json_object_put(req);
        continue;
      }
      if (!job) job = calloc(1, sizeof *job);
      Hook *k = &job->hooks[job->n++];
      k->name = po_As_Strdup(po_As_GetStr(h, "name") ? po_As_GetStr(h, "name") : "");
      memcpy(k->uid, uid, sizeof uid);
      k->ignore = ignore;
      if (m < 0) {
        char qr[300];
        snprintf(qr, sizeof qr, "%s%s%s", r->plural, r->group[0] ? "." : "", r->group);
        k->refused = name && name[0] ? po_As_Printf("%s \"%s\" is forbidden: %s", qr, name, refused)
                                     : po_As_Printf("%s is forbidden: %s", qr, refused);
        json_object_put(vobj);
        json_object_put(vold);
        json_object_put(req);
        continue;
      }
      json_object *to = po_As_Get(h, "timeoutSeconds");
      k->timeout = to ? json_object_get_int(to) : 10;
      json_object *cc = po_As_Get(h, "clientConfig");
      const char *url = po_As_GetStr(cc, "url");
      json_object *svc = po_As_Get(cc, "service");
      if (url) {
        k->url = strdup(url);
      } else if (svc) {
        const char *sn = po_As_GetStr(svc, "name"), *sns = po_As_GetStr(svc, "namespace"), *path = po_As_GetStr(svc, "path");
        json_object *port = po_As_Get(svc, "port");
        int p = port ? json_object_get_int(port) : 443;
        k->url = po_As_Printf("https://%s.%s.svc:%d%s", sn ? sn : "", sns ? sns : "", p, path ? path : "");
        const char *target = svc_target(sns ? sns : "", sn ? sn : "");
        if (target) k->connect_to = po_As_Printf("%s.%s.svc:%d:%s", sn ? sn : "", sns ? sns : "", p, target);
      }
      const char *ca = po_As_GetStr(cc, "caBundle");
      if (ca) k->ca = b64decode(ca, &k->ca_len);
      json_object_object_add(req, "oldObject", vold);
      if (mutating) {
        const char *rp = po_As_GetStr(h, "reinvocationPolicy");
        k->reinvoke = rp && !strcmp(rp, "IfNeeded");
        k->req = req;
        k->av = strdup(av);
        json_object_put(vobj);
        continue;
      }
      json_object_object_add(req, "object", vobj);
      json_object *rev = json_object_new_object();
      json_object_object_add(rev, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
      json_object_object_add(rev, "kind", json_object_new_string("AdmissionReview"));
      json_object_object_add(rev, "request", req);
      k->body = strdup(json_object_to_json_string_ext(rev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
      json_object_put(rev);
    }
  }
  free(av);
  return job;
}

typedef struct Buf {
  char *p;
  size_t n;
} Buf;

static size_t on_data(char *data, size_t size, size_t nmemb, void *userp) {
  Buf *b = userp;
  size_t n = size * nmemb;
  if (b->n + n > (8u << 20)) return 0; /* a webhook reply over 8 MiB is an error */
  b->p = realloc(b->p, b->n + n + 1);
  memcpy(b->p + b->n, data, n);
  b->n += n;
  b->p[b->n] = 0;
  return n;
}

static void call_failed(po_As_Reply *r, Hook *k, const char *why) {
  char *m = po_As_Printf("Internal error occurred: failed calling webhook \"%s\": %s", k->name, why);
  json_object *d = json_object_new_object();
  json_object *causes = json_object_new_array();
  json_object *c = json_object_new_object();
  json_object_object_add(c, "message", json_object_new_string(m));
  json_object_array_add(causes, c);
  json_object_object_add(d, "causes", causes);
  po_As_Reply_Status(r, 500, "InternalError", m, d);
  free(m);
}

/* One call: 1 admitted, 0 denied (r filled), -1 failed (why filled). `patch` (mutating calls
 * only, else NULL) gets the response's JSONPatch operations, decoded (a new reference), or NULL. */
static int call(Hook *k, po_As_Reply *r, char *why, size_t whysz, json_object **patch) {
  if (!k->url) {
    snprintf(why, whysz, "failed to call webhook: no clientConfig url or service");
    return -1;
  }
  CURL *c = curl_easy_init();
  Buf b = {0};
  struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
  hdr = curl_slist_append(hdr, "Accept: application/json");
  struct curl_slist *conn = k->connect_to ? curl_slist_append(NULL, k->connect_to) : NULL;
  curl_easy_setopt(c, CURLOPT_URL, k->url);
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, k->body);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, k->timeout * 1000L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "kube-apiserver-admission");
  if (conn) curl_easy_setopt(c, CURLOPT_CONNECT_TO, conn);
  if (k->ca) {
    struct curl_blob blob = {.data = k->ca, .len = k->ca_len, .flags = CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
  }
  CURLcode rc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  char addr[80] = "";
  char *ip = NULL;
  long port = 0;
  if (curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip && *ip &&
      curl_easy_getinfo(c, CURLINFO_PRIMARY_PORT, &port) == CURLE_OK)
    snprintf(addr, sizeof addr, "%s:%ld", ip, port);
  curl_easy_cleanup(c);
  curl_slist_free_all(hdr);
  curl_slist_free_all(conn);
  int result = -1;
  if (rc != CURLE_OK) {
    /* kube-apiserver's words (Go's net and url errors), which clients tell apart: a dial that
     * nothing answered is not a timeout of a webhook that was reached */
    char cause[256];
    if (rc == CURLE_OPERATION_TIMEDOUT)
      snprintf(cause, sizeof cause, "context deadline exceeded");
    else if (rc == CURLE_COULDNT_CONNECT)
      snprintf(cause, sizeof cause, "dial tcp %s: connect: connection refused", addr);
    else if (rc == CURLE_COULDNT_RESOLVE_HOST)
      snprintf(cause, sizeof cause, "dial tcp: lookup: no such host");
    else
      snprintf(cause, sizeof cause, "%s", curl_easy_strerror(rc));
    snprintf(why, whysz, "failed to call webhook: Post \"%s\": %s", k->url, cause);
  } else if (code != 200) {
    snprintf(why, whysz, "failed to call webhook: the server responded with the status code %ld but did not return more information", code);
  } else {
    json_object *rev = b.p ? json_tokener_parse(b.p) : NULL;
    json_object *resp = po_As_Get(rev, "response");
    const char *uid = po_As_GetStr(resp, "uid");
    if (!resp) {
      snprintf(why, whysz, "received invalid webhook response: expected response in the AdmissionReview");
    } else if (!uid || strcmp(uid, k->uid) != 0) {
      snprintf(why, whysz, "expected response.uid=\"%s\", got \"%s\"", k->uid, uid ? uid : "");
    } else {
      json_object *warns = po_As_Get(resp, "warnings");
      for (size_t i = 0; warns && i < json_object_array_length(warns); i++)
        po_As_Reply_Warn(r, "%s", json_object_get_string(json_object_array_get_idx(warns, i)));
      const char *pt = po_As_GetStr(resp, "patchType"), *pb = po_As_GetStr(resp, "patch");
      if (json_object_get_boolean(po_As_Get(resp, "allowed"))) {
        result = 1;
        if (pb && !patch) {
          snprintf(why, whysz, "validating webhook may not return a patch");
          result = -1;
        } else if (pb && (!pt || strcmp(pt, "JSONPatch") != 0)) {
          snprintf(why, whysz, "received invalid webhook response: patchType %s is not JSONPatch", pt ? pt : "(none)");
          result = -1;
        } else if (pb) {
          size_t n;
          unsigned char *raw = b64decode(pb, &n);
          *patch = json_tokener_parse((const char *)raw);
          free(raw);
          if (!*patch || !json_object_is_type(*patch, json_type_array)) {
            json_object_put(*patch);
            *patch = NULL;
            snprintf(why, whysz, "received invalid webhook response: the patch is not a JSON array of operations");
            result = -1;
          }
        }
      } else {
        json_object *st = po_As_Get(resp, "status");
        int sc = json_object_get_int(po_As_Get(st, "code"));
        if (sc < 400) sc = 400;
        const char *msg = po_As_GetStr(st, "message"), *reason = po_As_GetStr(st, "reason");
        char *m;
        if (msg && msg[0]) m = po_As_Printf("admission webhook \"%s\" denied the request: %s", k->name, msg);
        else if (reason && reason[0]) m = po_As_Printf("admission webhook \"%s\" denied the request: %s", k->name, reason);
        else m = po_As_Printf("admission webhook \"%s\" denied the request without explanation", k->name);
        json_object *details = po_As_Copy(po_As_Get(st, "details"));
        po_As_Reply_Status(r, sc, reason && reason[0] ? reason : po_As_ReasonForCode(sc), m, details);
        free(m);
        result = 0;
      }
    }
    json_object_put(rev);
  }
  free(b.p);
  return result;
}

/* The matchConditions refusals of a job, decided before any webhook is called (as the real
 * dispatcher): false with r filled when one refuses. */
static bool conditions_pass(po_As_AdmissionJob *job, po_As_Reply *r) {
  for (int i = 0; i < job->n; i++) {
    Hook *k = &job->hooks[i];
    if (!k->refused) continue;
    po_As_Log(kPo_As_LogWarn, "failed evaluating match conditions, failing closed %s: %s", k->name, k->refused);
    po_As_Reply_Status(r, 403, "Forbidden", k->refused, NULL);
    return false;
  }
  return true;
}

bool po_As_Admission_Run(po_As_AdmissionJob *job, po_As_Reply *r) {
  if (!conditions_pass(job, r)) return false;
  for (int i = 0; i < job->n; i++) {
    Hook *k = &job->hooks[i];
    char why[1024] = "";
    int res = call(k, r, why, sizeof why, NULL);
    po_As_Log(kPo_As_LogDebug, "webhook %s: %s", k->name, res == 1 ? "allowed" : res == 0 ? "denied" : why);
    if (res == 0) return false;
    if (res < 0) {
      if (k->ignore) {
        po_As_Log(kPo_As_LogWarn, "failed calling webhook \"%s\" (failurePolicy Ignore): %s", k->name, why);
        continue;
      }
      call_failed(r, k, why);
      return false;
    }
  }
  return true;
}

void po_As_Admission_Free(po_As_AdmissionJob *job) {
  if (!job) return;
  for (int i = 0; i < job->n; i++) {
    Hook *k = &job->hooks[i];
    free(k->name);
    free(k->url);
    free(k->connect_to);
    free(k->ca);
    free(k->body);
    free(k->refused);
    free(k->av);
    json_object_put(k->req);
  }
  free(job);
}

/* One mutating call with the object as it is now: 1 admitted (*obj patched when the webhook
 * sent a patch, *changed said), 0 denied or failed under Fail (r filled), 2 failed under Ignore. */
static int mutate_one(Hook *k, json_object **obj, bool *changed, po_As_Reply *r) {
  json_object_object_add(k->req, "object", object_for_review(*obj, k->av));
  json_object *rev = json_object_new_object();
  json_object_object_add(rev, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
  json_object_object_add(rev, "kind", json_object_new_string("AdmissionReview"));
  json_object_object_add(rev, "request", json_object_get(k->req));
  free(k->body);
  k->body = strdup(json_object_to_json_string_ext(rev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put(rev);
  char why[1024] = "";
  json_object *patch = NULL;
  int res = call(k, r, why, sizeof why, &patch);
  po_As_Log(kPo_As_LogDebug, "mutating webhook %s: %s", k->name, res == 1 ? (patch ? "patched" : "allowed") : res == 0 ? "denied" : why);
  if (res == 1 && patch) {
    char msg[512] = "";
    json_object *next = po_As_JsonPatch(po_As_Copy(*obj), patch, msg, sizeof msg);
    json_object_put(patch);
    if (!next) {
      snprintf(why, sizeof why, "JSONPatch could not be applied: %s", msg);
      res = -1;
    } else {
      if (!json_object_equal(next, *obj)) *changed = true;
      json_object_put(*obj);
      *obj = next;
    }
  }
  if (res == 0) return 0;
  if (res < 0) {
    if (k->ignore) {
      po_As_Log(kPo_As_LogWarn, "failed calling webhook \"%s\" (failurePolicy Ignore): %s", k->name, why);
      return 2;
    }
    call_failed(r, k, why);
    return 0;
  }
  return 1;
}

bool po_As_Admission_Mutate(po_As_AdmissionJob *job, json_object **obj, po_As_Reply *r) {
  if (!conditions_pass(job, r)) return false;
  /* As the real dispatcher: in order, each seeing the object the previous ones made; then, when
   * some webhook changed it after a webhook with reinvocationPolicy IfNeeded had run, that
   * webhook is called once more (at most once). */
  int last_change = -1;
  for (int i = 0; i < job->n; i++) {
    bool changed = false;
    if (mutate_one(&job->hooks[i], obj, &changed, r) == 0) return false;
    if (changed) last_change = i;
  }
  for (int i = 0; i < job->n && last_change >= 0; i++) {
    Hook *k = &job->hooks[i];
    if (!k->reinvoke || i >= last_change) continue;
    bool changed = false;
    if (mutate_one(k, obj, &changed, r) == 0) return false;
  }
  return true;
}
