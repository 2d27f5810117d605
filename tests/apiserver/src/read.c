/* GET of one object and of a collection (selectors, limit/continue, Table output). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"
#include "objects_internal.h"

bool po_As_WantsTable(const char *accept) { return accept && strstr(accept, "as=Table") != NULL; }

static bool include_object(po_As_Request *q) { return q->include_object && !strcmp(q->include_object, "Object"); }

void po_As_Read_Get(po_As_Request *q, po_As_Reply *r) {
  if (q->sub && (strcmp(q->sub, "status") != 0 || !q->res->has_status)) {
    po_As_Reply_Status(r, 404, "NotFound", "the server could not find the requested resource", NULL);
    return;
  }
  pthread_mutex_lock(&po_as.mu);
  po_As_Entry *e = po_As_Store_Get(q->res, q->ns, q->name);
  if (!e) {
    po_As_NotFound(r, q->res, q->name);
  } else if (po_As_WantsTable(q->accept)) {
    po_As_Reply_Json(r, 200, po_As_Table(q->res, q->version, &e->obj, 1, include_object(q)));
  } else {
    char *av = po_As_ApiVersion(q->res, q->version);
    r->code = 200;
    r->body = po_As_Serialize(e->obj, av);
    r->content_type = "application/json";
    free(av);
  }
  pthread_mutex_unlock(&po_as.mu);
}

/* Continue tokens: base64 of {"rv":N,"start":"last key"}; they stay valid (the list continues
 * from the current state after that key). */
static char *make_token(uint64_t rv, const char *key) {
  json_object *t = json_object_new_object();
  json_object_object_add(t, "v", json_object_new_string("meta.k8s.io/v1"));
  json_object_object_add(t, "rv", json_object_new_int64((int64_t)rv));
  json_object_object_add(t, "start", json_object_new_string(key));
  const char *s = json_object_to_json_string_ext(t, JSON_C_TO_STRING_PLAIN);
  char *b = po_As_Base64((const unsigned char *)s, strlen(s));
  json_object_put(t);
  /* URL-safe alphabet so the token can travel unescaped in a query string */
  for (char *p = b; *p; p++) {
    if (*p == '+') *p = '-';
    else if (*p == '/') *p = '_';
  }
  return b;
}

static char *read_token(const char *tok) {
  size_t n = strlen(tok);
  unsigned char *out = malloc(n + 1);
  size_t o = 0;
  unsigned v = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    char c = tok[i];
    int d;
    if (c >= 'A' && c <= 'Z') d = c - 'A';
    else if (c >= 'a' && c <= 'z') d = c - 'a' + 26;
    else if (c >= '0' && c <= '9') d = c - '0' + 52;
    else if (c == '+' || c == '-') d = 62;
    else if (c == '/' || c == '_') d = 63;
    else if (c == '=') break;
    else {
      free(out);
      return NULL;
    }
    v = (v << 6) | (unsigned)d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (unsigned char)((v >> bits) & 0xff);
    }
  }
  out[o] = 0;
  json_object *t = json_tokener_parse((const char *)out);
  free(out);
  const char *start = po_As_GetStr(t, "start");
  char *k = po_As_Strdup(start);
  json_object_put(t);
  return k;
}

typedef struct Buf {
  char *p;
  size_t n, cap;
} Buf;

static void buf_add(Buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    b->cap = (b->n + n + 1) * 2;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}

static void buf_str(Buf *b, const char *s) { buf_add(b, s, strlen(s)); }

void po_As_Read_List(po_As_Request *q, po_As_Reply *r) {
  char msg[512] = "";
  po_As_Selector *sel = po_As_Selector_Parse(q->label_selector, q->field_selector, msg, sizeof msg);
  if (!sel) {
    po_As_Reply_Status(r, 400, "BadRequest", msg, NULL);
    return;
  }
  char *start = NULL;
  if (q->continue_token && q->continue_token[0]) {
    start = read_token(q->continue_token);
    if (!start) {
      po_As_Reply_Status(r, 400, "BadRequest", "continue key is not valid: illegal base64 data", NULL);
      po_As_Selector_Free(sel);
      return;
    }
  }
  pthread_mutex_lock(&po_as.mu);
  if (q->rv_match && !strcmp(q->rv_match, "Exact") && q->resource_version &&
      strtoull(q->resource_version, NULL, 10) < po_as.rv) {
    pthread_mutex_unlock(&po_as.mu);
    po_As_Reply_Status(r, 410, "Expired", "The resourceVersion for the provided list is too old.", NULL);
    po_As_Selector_Free(sel);
    free(start);
    return;
  }
  po_As_Resource *res = q->res;
  size_t i = po_As_Store_Lower(res, start);
  char nsprefix[300];
  snprintf(nsprefix, sizeof nsprefix, "%s/", q->ns ? q->ns : "");
  json_object **hits = malloc((res->nitems + 1) * sizeof *hits);
  size_t nh = 0, remaining = 0;
  const char *last = NULL;
  for (; i < res->nitems; i++) {
    po_As_Entry *e = &res->items[i];
    if (res->namespaced && q->ns && strncmp(e->key, nsprefix, strlen(nsprefix)) != 0) continue;
    if (!po_As_Selector_Match(sel, e->obj)) continue;
    if (q->limit > 0 && (long)nh >= q->limit) {
      remaining++;
      continue;
    }
    hits[nh++] = e->obj;
    last = e->key;
  }
  char rvs[32];
  snprintf(rvs, sizeof rvs, "%" PRIu64, po_as.rv);
  char *token = remaining && last ? make_token(po_as.rv, last) : NULL;
  char *av = po_As_ApiVersion(res, q->version);
  if (po_As_WantsTable(q->accept)) {
    json_object *t = po_As_Table(res, q->version, hits, nh, include_object(q));
    json_object *meta = po_As_Meta(t);
    json_object_object_add(meta, "resourceVersion", json_object_new_string(rvs));
    if (token) {
      json_object_object_add(meta, "continue", json_object_new_string(token));
      json_object_object_add(meta, "remainingItemCount", json_object_new_int64((int64_t)remaining));
    }
    po_As_Reply_Json(r, 200, t);
  } else {
    Buf b = {0};
    char head[1024];
    snprintf(head, sizeof head, "{\"kind\":\"%s\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%s\"", res->list_kind, av, rvs);
    buf_str(&b, head);
    if (token) {
      snprintf(head, sizeof head, ",\"continue\":\"%s\",\"remainingItemCount\":%zu", token, remaining);
      buf_str(&b, head);
    }
    buf_str(&b, "},\"items\":[");
    for (size_t k = 0; k < nh; k++) {
      char *s = po_As_Serialize(hits[k], av);
      if (k) buf_str(&b, ",");
      buf_str(&b, s);
      free(s);
    }
    buf_str(&b, "]}");
    r->code = 200;
    r->body = b.p;
    r->content_type = "application/json";
  }
  pthread_mutex_unlock(&po_as.mu);
  free(av);
  free(token);
  free(hits);
  free(start);
  po_As_Selector_Free(sel);
}
