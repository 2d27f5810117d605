/* Request bodies in Kubernetes' protobuf encoding, for the few built-in kinds that kubectl's
 * typed generators send that way (`kubectl create namespace|configmap|secret|serviceaccount`).
 * The envelope is "k8s\0" + runtime.Unknown{typeMeta, raw}; raw is decoded by small field
 * tables taken from k8s.io/api/core/v1 generated.proto. Replies are always JSON (the client
 * accepts both). Unknown fields are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apiserver.h"

enum { kStr, kBytes, kInt, kBool, kMsg, kMapSS, kMapSB, kRepStr, kRepMsg };

typedef struct Field {
  int num;
  const char *name;
  int type;
  const struct Field *sub;
} Field;

static const Field kOwnerRef[] = {{1, "kind", kStr, NULL}, {3, "name", kStr, NULL}, {4, "uid", kStr, NULL},
                                  {5, "apiVersion", kStr, NULL}, {6, "controller", kBool, NULL},
                                  {7, "blockOwnerDeletion", kBool, NULL}, {0, NULL, 0, NULL}};
static const Field kMeta[] = {{1, "name", kStr, NULL}, {2, "generateName", kStr, NULL}, {3, "namespace", kStr, NULL},
                              {5, "uid", kStr, NULL}, {6, "resourceVersion", kStr, NULL}, {7, "generation", kInt, NULL},
                              {11, "labels", kMapSS, NULL}, {12, "annotations", kMapSS, NULL},
                              {13, "ownerReferences", kRepMsg, kOwnerRef}, {14, "finalizers", kRepStr, NULL},
                              {0, NULL, 0, NULL}};
static const Field kNsSpec[] = {{1, "finalizers", kRepStr, NULL}, {0, NULL, 0, NULL}};
static const Field kNamespace[] = {{1, "metadata", kMsg, kMeta}, {2, "spec", kMsg, kNsSpec}, {0, NULL, 0, NULL}};
static const Field kConfigMap[] = {{1, "metadata", kMsg, kMeta}, {2, "data", kMapSS, NULL}, {3, "binaryData", kMapSB, NULL},
                                   {4, "immutable", kBool, NULL}, {0, NULL, 0, NULL}};
static const Field kSecret[] = {{1, "metadata", kMsg, kMeta}, {2, "data", kMapSB, NULL}, {3, "type", kStr, NULL},
                                {4, "stringData", kMapSS, NULL}, {5, "immutable", kBool, NULL}, {0, NULL, 0, NULL}};
static const Field kObjRef[] = {{1, "kind", kStr, NULL}, {2, "namespace", kStr, NULL}, {3, "name", kStr, NULL},
                                {0, NULL, 0, NULL}};
static const Field kLocalRef[] = {{1, "name", kStr, NULL}, {0, NULL, 0, NULL}};
static const Field kServiceAccount[] = {{1, "metadata", kMsg, kMeta}, {2, "secrets", kRepMsg, kObjRef},
                                        {3, "imagePullSecrets", kRepMsg, kLocalRef},
                                        {4, "automountServiceAccountToken", kBool, NULL}, {0, NULL, 0, NULL}};

typedef struct Rd {
  const unsigned char *p, *end;
  bool bad;
} Rd;

static uint64_t varint(Rd *r) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (r->p >= r->end) {
      r->bad = true;
      return 0;
    }
    unsigned char b = *r->p++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  r->bad = true;
  return 0;
}

/* Reads one field header and, for length-delimited fields, its payload. */
static bool next_field(Rd *r, int *num, int *wt, Rd *payload, uint64_t *value) {
  if (r->p >= r->end || r->bad) return false;
  uint64_t key = varint(r);
  *num = (int)(key >> 3);
  *wt = (int)(key & 7);
  switch (*wt) {
    case 0: *value = varint(r); break;
    case 1:
      if (r->end - r->p < 8) r->bad = true;
      else r->p += 8;
      break;
    case 5:
      if (r->end - r->p < 4) r->bad = true;
      else r->p += 4;
      break;
    case 2: {
      uint64_t n = varint(r);
      if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = true;
        break;
      }
      payload->p = r->p;
      payload->end = r->p + n;
      payload->bad = false;
      r->p += n;
      break;
    }
    default: r->bad = true;
  }
  return !r->bad;
}

static json_object *decode(Rd *r, const Field *fields);

static json_object *str_of(Rd *p) { return json_object_new_string_len((const char *)p->p, (int)(p->end - p->p)); }

static void map_entry(json_object *obj, Rd *p, bool bytes) {
  json_object *k = NULL, *v = NULL;
  int num, wt;
  Rd pl = {0};
  uint64_t val;
  while (next_field(p, &num, &wt, &pl, &val)) {
    if (wt != 2) continue;
    if (num == 1) {
      json_object_put(k);
      k = str_of(&pl);
    } else if (num == 2) {
      json_object_put(v);
      if (bytes) {
        char *b = po_As_Base64(pl.p, (size_t)(pl.end - pl.p));
        v = json_object_new_string(b);
        free(b);
      } else {
        v = str_of(&pl);
      }
    }
  }
  if (k) json_object_object_add(obj, json_object_get_string(k), v ? v : json_object_new_string(""));
  else json_object_put(v);
  json_object_put(k);
}

static json_object *decode(Rd *r, const Field *fields) {
  json_object *o = json_object_new_object();
  int num, wt;
  Rd pl = {0};
  uint64_t val = 0;
  while (next_field(r, &num, &wt, &pl, &val)) {
    const Field *f = fields;
    while (f->name && f->num != num) f++;
    if (!f->name) continue;
    json_object *cur = po_As_Get(o, f->name);
    switch (f->type) {
      /* gogo-protobuf writes every non-pointer string and int, even empty: empty means unset */
      case kStr: if (wt == 2 && pl.end > pl.p) json_object_object_add(o, f->name, str_of(&pl)); break;
      case kInt: if (wt == 0 && val) json_object_object_add(o, f->name, json_object_new_int64((int64_t)val)); break;
      case kBool: if (wt == 0) json_object_object_add(o, f->name, json_object_new_boolean(val != 0)); break;
      case kMsg: if (wt == 2) json_object_object_add(o, f->name, decode(&pl, f->sub)); break;
      case kMapSS:
      case kMapSB:
        if (wt != 2) break;
        if (!cur) {
          cur = json_object_new_object();
          json_object_object_add(o, f->name, cur);
        }
        map_entry(cur, &pl, f->type == kMapSB);
        break;
      case kRepStr:
      case kRepMsg:
        if (wt != 2) break;
        if (!cur) {
          cur = json_object_new_array();
          json_object_object_add(o, f->name, cur);
        }
        json_object_array_add(cur, f->type == kRepStr ? str_of(&pl) : decode(&pl, f->sub));
        break;
      default: break;
    }
  }
  if (r->bad) {
    json_object_put(o);
    return NULL;
  }
  return o;
}

json_object *po_As_Protobuf_Decode(const char *body, size_t len, char *msg, size_t msgsz) {
  if (len < 4 || memcmp(body, "k8s\0", 4) != 0) {
    snprintf(msg, msgsz, "provided object is not a Kubernetes protobuf object (no \"k8s\\x00\" prefix)");
    return NULL;
  }
  Rd r = {(const unsigned char *)body + 4, (const unsigned char *)body + len, false};
  Rd tm = {0}, raw = {0};
  bool have_tm = false, have_raw = false;
  int num, wt;
  Rd pl = {0};
  uint64_t val;
  while (next_field(&r, &num, &wt, &pl, &val)) {
    if (num == 1 && wt == 2) tm = pl, have_tm = true;
    if (num == 2 && wt == 2) raw = pl, have_raw = true;
  }
  static const Field kTypeMeta[] = {{1, "apiVersion", kStr, NULL}, {2, "kind", kStr, NULL}, {0, NULL, 0, NULL}};
  json_object *t = have_tm ? decode(&tm, kTypeMeta) : NULL;
  const char *kind = po_As_GetStr(t, "kind"), *av = po_As_GetStr(t, "apiVersion");
  const Field *fields = NULL;
  if (kind && av && !strcmp(av, "v1")) {
    if (!strcmp(kind, "Namespace")) fields = kNamespace;
    else if (!strcmp(kind, "ConfigMap")) fields = kConfigMap;
    else if (!strcmp(kind, "Secret")) fields = kSecret;
    else if (!strcmp(kind, "ServiceAccount")) fields = kServiceAccount;
  }
  if (r.bad || !have_raw || !fields) {
    snprintf(msg, msgsz, "protobuf bodies are supported only for v1 Namespace, ConfigMap, Secret and ServiceAccount (got %s %s)",
             av ? av : "?", kind ? kind : "?");
    json_object_put(t);
    return NULL;
  }
  json_object *o = decode(&raw, fields);
  if (!o) {
    snprintf(msg, msgsz, "malformed protobuf %s", kind);
    json_object_put(t);
    return NULL;
  }
  json_object_object_add(o, "apiVersion", json_object_new_string(av));
  json_object_object_add(o, "kind", json_object_new_string(kind));
  json_object_put(t);
  return o;
}
