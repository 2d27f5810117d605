/* PropertyOverride status: conditions as metav1.Condition, changed only when they change. */
#include <json-c/json.h>
#include <string.h>

#include "po/base/json.h"
#include "status.h"

static json_object *find_condition(json_object *status, const char *type) {
  json_object *list = po_Json_Get(status, "conditions");
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *c = json_object_array_get_idx(list, i);
    if (strcmp(po_Json_StringOr(c, "type", ""), type) == 0) return c;
  }
  return NULL;
}

/* A new condition object; NULL when memory ran out (nothing half built is returned). */
static json_object *condition(json_object *old_status, const po_Condition *c, int64_t gen, const char *now) {
  json_object *prev = find_condition(old_status, c->type);
  /* lastTransitionTime moves only when the status does (metav1.Condition's contract). */
  const char *when = prev && strcmp(po_Json_StringOr(prev, "status", ""), c->status) == 0 && *po_Json_StringOr(prev, "lastTransitionTime", "")
                         ? po_Json_StringOr(prev, "lastTransitionTime", "")
                         : now;
  /* The CRD bounds messages at 32768 characters. */
  char msg[32768];
  snprintf(msg, sizeof msg, "%s", c->message);
  json_object *o = json_object_new_object();
  if (!o || !po_Json_Put(o, "type", json_object_new_string(c->type)) ||
      !po_Json_Put(o, "status", json_object_new_string(c->status)) ||
      !po_Json_Put(o, "observedGeneration", json_object_new_int64(gen)) ||
      !po_Json_Put(o, "lastTransitionTime", json_object_new_string(when)) ||
      !po_Json_Put(o, "reason", json_object_new_string(c->reason)) ||
      !po_Json_Put(o, "message", json_object_new_string(msg))) {
    json_object_put(o);
    return NULL;
  }
  return o;
}

static const char *t_api(const po_OverrideStatus *s) {
  return s->target_api_version ? s->target_api_version : "consul.hashicorp.com/v1alpha1";
}
static const char *t_kind(const po_OverrideStatus *s) {
  return s->target_kind_name ? s->target_kind_name : po_TargetKind_Name(s->target_kind);
}
static const char *t_ns(const po_OverrideStatus *s) { return s->target_ns ? s->target_ns : s->ns; }

/* Every member is checked: memory running out anywhere gives NULL, never a status with a
 * field missing or null (a write of it would say something this reconcile did not decide). */
json_object *po_Status_Build(json_object *old_status, const po_OverrideStatus *s, const char *now) {
  json_object *st = json_object_new_object(), *conds = NULL, *c = NULL;
  if (!st || !po_Json_Put(st, "observedGeneration", json_object_new_int64(s->generation)) ||
      !(conds = json_object_new_array()) || !po_Json_Put(st, "conditions", conds) || /* conds owned by st now */
      !po_Json_Append(conds, condition(old_status, &s->accepted, s->generation, now)) ||
      !po_Json_Append(conds, condition(old_status, &s->programmed, s->generation, now)) ||
      (s->deprecated.type && !po_Json_Append(conds, condition(old_status, &s->deprecated, s->generation, now))))
    goto oom;
  if (s->api_snapshot) {
    json_object *api = json_object_new_object();
    if (!api || !po_Json_Put(api, "mesh", json_object_new_string(s->api_mesh ? s->api_mesh : "")) ||
        !po_Json_Put(api, "release", json_object_new_string(s->api_release ? s->api_release : "")) ||
        !po_Json_Put(api, "snapshot", json_object_new_string(s->api_snapshot))) {
      json_object_put(api);
      json_object_put(st);
      return NULL;
    }
    if (!po_Json_Put(st, "envoyApi", api)) { /* api released by it */
      json_object_put(st);
      return NULL;
    }
  }
  json_object *t = json_object_new_object();
  if (!t || !po_Json_Put(st, "target", t) || /* t owned by st now */
      !po_Json_Put(t, "apiVersion", json_object_new_string(t_api(s))) ||
      !po_Json_Put(t, "kind", json_object_new_string(t_kind(s))) ||
      !po_Json_Put(t, "namespace", json_object_new_string(t_ns(s))) ||
      !po_Json_Put(t, "name", json_object_new_string(s->target_name)))
    goto oom;
  if (s->live_generation > 0 && !po_Json_Put(st, "programmedGeneration", json_object_new_int64(s->live_generation)))
    goto oom;
  if (s->last_valid_spec) {
    json_object *spec = NULL;
    c = json_object_new_object();
    if (!c || !po_Json_Put(c, "generation", json_object_new_int64(s->last_valid_generation)) ||
        json_object_deep_copy((json_object *)s->last_valid_spec, &spec, NULL) != 0 || !po_Json_Put(c, "spec", spec))
      goto oom;
  } else {
    json_object *lv = po_Json_Get(old_status, "lastValid");
    if (lv && json_object_deep_copy(lv, &c, NULL) != 0) goto oom;
  }
  if (c && !po_Json_Put(st, "lastValid", c)) { /* c released by it */
    c = NULL;
    goto oom;
  }
  c = NULL;
  if (s->created_uid) {
    c = json_object_new_object();
    if (!c || !po_Json_Put(c, "namespace", json_object_new_string(s->created_ns ? s->created_ns : "")) ||
        !po_Json_Put(c, "name", json_object_new_string(s->created_name ? s->created_name : "")) ||
        !po_Json_Put(c, "uid", json_object_new_string(s->created_uid))) {
      goto oom;
    }
  } else {
    json_object *cr = po_Json_Get(old_status, "created");
    if (cr && json_object_deep_copy(cr, &c, NULL) != 0) goto oom;
  }
  if (c && !po_Json_Put(st, "created", c)) {
    c = NULL;
    goto oom;
  }
  return st;
oom:
  json_object_put(c);
  json_object_put(st);
  return NULL;
}

bool po_Status_Same(json_object *a, json_object *b) { return a && b && json_object_equal(a, b); }

/* What every create of a valid PropertyOverride comes to: Accepted, then Programmed (or Pending
 * while consul-k8s has not synced the write). */
static bool expected_first(const po_Condition *c) {
  if (!strcmp(c->type, "Accepted")) return !strcmp(c->status, "True") && !strcmp(c->reason, "Accepted");
  if (!strcmp(c->type, "Programmed")) {
    return (!strcmp(c->status, "True") && !strcmp(c->reason, "Programmed")) ||
           (!strcmp(c->status, "False") && !strcmp(c->reason, "Pending"));
  }
  return false;
}

/* The way every write of a valid generation goes, under --consul-sync-status=require: Pending
 * until consul-k8s reports the target synced, then Programmed. */
static bool on_a_writes_way(const char *type, const char *from, const char *to) {
  return !strcmp(type, "Programmed") && ((!strcmp(from, "Pending") && !strcmp(to, "Programmed")) ||
                                         (!strcmp(from, "Programmed") && !strcmp(to, "Pending")));
}

bool po_Status_IsNews(json_object *old_status, const po_Condition *c, bool old_unknown) {
  json_object *prev = find_condition(old_status, c->type);
  /* a later step that gave the condition another reason wrote its own message (Pending, ...) */
  bool caveat = c->caveat && !strcmp(c->reason, "Programmed");
  if (prev) {
    const char *was = po_Json_StringOr(prev, "reason", "");
    return strcmp(was, c->reason) != 0 && (caveat || !on_a_writes_way(c->type, was, c->reason));
  }
  return old_unknown || caveat || !expected_first(c);
}

/* ---- the same without building it ---- */

static bool is_int(json_object *o, int64_t v) { return o && json_object_is_type(o, json_type_int) && json_object_get_int64(o) == v; }
static bool is_str(json_object *o, const char *v) {
  return o && json_object_is_type(o, json_type_string) && strcmp(json_object_get_string(o), v) == 0;
}

static bool condition_matches(json_object *c, const po_Condition *want, int64_t gen) {
  json_object *ltt = po_Json_Get(c, "lastTransitionTime");
  return c && json_object_is_type(c, json_type_object) && json_object_object_length(c) == 6 && is_str(po_Json_Get(c, "type"), want->type) &&
         is_str(po_Json_Get(c, "status"), want->status) && is_int(po_Json_Get(c, "observedGeneration"), gen) && ltt &&
         json_object_is_type(ltt, json_type_string) && *json_object_get_string(ltt) && is_str(po_Json_Get(c, "reason"), want->reason) &&
         is_str(po_Json_Get(c, "message"), want->message);
}

bool po_Status_Matches(json_object *old, const po_OverrideStatus *s) {
  if (!old || !json_object_is_type(old, json_type_object)) return false;
  json_object *conds = po_Json_Get(old, "conditions"), *t = po_Json_Get(old, "target"), *lv = po_Json_Get(old, "lastValid");
  json_object *cr = po_Json_Get(old, "created");
  size_t keys = 3 + (s->live_generation > 0) + (lv != NULL) + (cr != NULL) + (s->api_snapshot != NULL);
  if (json_object_object_length(old) != (int)keys || !is_int(po_Json_Get(old, "observedGeneration"), s->generation)) return false;
  size_t n = s->deprecated.type ? 3 : 2;
  if (!conds || !json_object_is_type(conds, json_type_array) || json_object_array_length(conds) != n ||
      !condition_matches(json_object_array_get_idx(conds, 0), &s->accepted, s->generation) ||
      !condition_matches(json_object_array_get_idx(conds, 1), &s->programmed, s->generation) ||
      (n == 3 && !condition_matches(json_object_array_get_idx(conds, 2), &s->deprecated, s->generation))) {
    return false;
  }
  json_object *api = po_Json_Get(old, "envoyApi");
  if (s->api_snapshot && !(api && json_object_is_type(api, json_type_object) && json_object_object_length(api) == 3 &&
                           is_str(po_Json_Get(api, "mesh"), s->api_mesh ? s->api_mesh : "") &&
                           is_str(po_Json_Get(api, "release"), s->api_release ? s->api_release : "") &&
                           is_str(po_Json_Get(api, "snapshot"), s->api_snapshot))) {
    return false;
  }
  if (!t || !json_object_is_type(t, json_type_object) || json_object_object_length(t) != 4 ||
      !is_str(po_Json_Get(t, "apiVersion"), t_api(s)) || !is_str(po_Json_Get(t, "kind"), t_kind(s)) ||
      !is_str(po_Json_Get(t, "namespace"), t_ns(s)) || !is_str(po_Json_Get(t, "name"), s->target_name)) {
    return false;
  }
  if (s->live_generation > 0 && !is_int(po_Json_Get(old, "programmedGeneration"), s->live_generation)) return false;
  if (s->created_uid && !(cr && json_object_is_type(cr, json_type_object) && json_object_object_length(cr) == 3 &&
                          is_str(po_Json_Get(cr, "namespace"), s->created_ns ? s->created_ns : "") &&
                          is_str(po_Json_Get(cr, "name"), s->created_name ? s->created_name : "") &&
                          is_str(po_Json_Get(cr, "uid"), s->created_uid))) {
    return false;
  }
  if (s->last_valid_spec) {
    return lv && json_object_is_type(lv, json_type_object) && json_object_object_length(lv) == 2 &&
           is_int(po_Json_Get(lv, "generation"), s->last_valid_generation) &&
           json_object_equal(po_Json_Get(lv, "spec"), (json_object *)s->last_valid_spec);
  }
  return true;
}

void po_Condition_Init(po_Condition *c, const char *type, const char *status, const char *reason) {
  c->type = type;
  c->status = status;
  c->reason = reason;
  c->caveat = false;
  c->message[0] = '\0';
}

void po_OverrideStatus_Init(po_OverrideStatus *s) {
  /* every field but the conditions' message buffers, which need only their first byte */
  s->ns = s->target_name = s->target_api_version = s->target_kind_name = s->target_ns = NULL;
  s->generation = s->live_generation = s->last_valid_generation = 0;
  s->target_kind = (po_TargetKind)0;
  po_Condition_Init(&s->accepted, NULL, NULL, NULL);
  po_Condition_Init(&s->programmed, NULL, NULL, NULL);
  po_Condition_Init(&s->deprecated, NULL, NULL, NULL);
  s->api_mesh = s->api_release = s->api_snapshot = NULL;
  s->last_valid_spec = NULL;
  s->created_ns = s->created_name = s->created_uid = NULL;
}

/* Eight bytes a step (a byte a step was 9,500 instructions per status, its messages about 2 KB):
 * the hash only ever meets hashes of this process (the memo), never a stored one. */
static uint64_t mix(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (; n >= 8; b += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, b, sizeof w);
    h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
    h ^= h >> 32;
  }
  for (; n; b++, n--) h = (h ^ *b) * 0x100000001b3ULL;
  return h;
}
static uint64_t mix_str(uint64_t h, const char *s) { return mix(h, s ? s : "", (s ? strlen(s) : 0) + 1); }

uint64_t po_Status_Hash(const po_OverrideStatus *s, uint64_t spec_hash) {
  uint64_t h = 0xcbf29ce484222325ULL;
  int64_t n[4] = {s->generation, (int64_t)s->target_kind, s->live_generation, s->last_valid_generation};
  h = mix(h, n, sizeof n);
  h = mix(h, &spec_hash, sizeof spec_hash);
  h = mix_str(mix_str(h, s->ns), s->target_name);
  h = mix_str(mix_str(mix_str(h, t_api(s)), t_kind(s)), t_ns(s));
  h = mix_str(mix_str(mix_str(h, s->created_ns), s->created_name), s->created_uid);
  h = mix_str(mix_str(mix_str(h, s->api_mesh), s->api_release), s->api_snapshot);
  const po_Condition *cs[3] = {&s->accepted, &s->programmed, &s->deprecated};
  for (int i = 0; i < 3; i++) h = mix_str(mix_str(mix_str(mix_str(h, cs[i]->type), cs[i]->status), cs[i]->reason), cs[i]->message);
  return h | 1; /* never 0, which means none */
}
