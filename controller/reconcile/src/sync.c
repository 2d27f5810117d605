/* Whether consul-k8s synced a target after our write (sync.h says how that is decided). */
#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* timegm */
#endif
#include "sync.h"

#include <ctype.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "compiled.h"
#include "po/base/json.h"

int64_t po_Sync_ParseTime(const char *s) {
  struct tm tm = {0};
  int y, mo, d, h, mi, se, n = 0;
  if (!s || sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &se, &n) != 6 || n != 19) return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60) return -1;
  const char *p = s + n;
  if (*p == '.') /* a fraction: metav1.Time has none, MicroTime has; seconds are what is compared */
    for (p++; isdigit((unsigned char)*p); p++) {}
  int64_t off = 0;
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int oh, om, k = 0;
    if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &k) != 2 || k != 5) return -1;
    off = (oh * 3600 + om * 60) * (*p == '+' ? 1 : -1);
    p += 6;
  } else {
    return -1;
  }
  if (*p) return -1;
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  tm.tm_sec = se;
  return (int64_t)timegm(&tm) - off;
}

static void format_time(int64_t t, char buf[32]) {
  time_t tt = (time_t)t;
  struct tm tm;
  gmtime_r(&tt, &tm);
  strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

po_WriteRecord po_Sync_ReadRecord(const json_object *target) {
  po_WriteRecord r = {0};
  const char *v = po_Json_String(po_Json_Get(po_Json_Get(target, "metadata"), "annotations"), PO_WRITTEN_ANNOTATION);
  char at[40];
  uint64_t spec, status;
  int n = 0;
  if (!v || sscanf(v, "at=%39s spec=%16" SCNx64 " status=%16" SCNx64 "%n", at, &spec, &status, &n) != 3 || v[n]) return r;
  int64_t t = po_Sync_ParseTime(at);
  if (t < 0) return r;
  r = (po_WriteRecord){.present = true, .at = t, .spec_hash = spec, .status_hash = status};
  return r;
}

bool po_Sync_SetRecord(json_object *target, const po_WriteRecord *r) {
  json_object *meta = po_Json_Get(target, "metadata"), *ann = po_Json_Get(meta, "annotations");
  if (!meta) return false;
  if (!ann || !json_object_is_type(ann, json_type_object)) {
    ann = json_object_new_object();
    if (!ann || json_object_object_add(meta, "annotations", ann) != 0) {
      json_object_put(ann);
      return false;
    }
  }
  char at[32], v[128];
  format_time(r->at, at);
  snprintf(v, sizeof v, "at=%s spec=%016" PRIx64 " status=%016" PRIx64, at, r->spec_hash, r->status_hash);
  json_object *s = json_object_new_string(v);
  if (!s || json_object_object_add(ann, PO_WRITTEN_ANNOTATION, s) != 0) {
    json_object_put(s);
    return false;
  }
  return true;
}

uint64_t po_Sync_StatusHash(const json_object *target) { return po_Json_HashStable(po_Json_Get(target, "status")); }

static json_object *synced_condition(const json_object *target) {
  json_object *list = po_Json_Get(po_Json_Get(target, "status"), "conditions");
  for (size_t i = 0; list && json_object_is_type(list, json_type_array) && i < json_object_array_length(list); i++) {
    json_object *c = json_object_array_get_idx(list, i);
    if (strcmp(po_Json_StringOr(c, "type", ""), "Synced") == 0) return c;
  }
  return NULL;
}

int64_t po_Sync_LastStatusTime(const json_object *target) {
  int64_t a = po_Sync_ParseTime(po_Json_String(po_Json_Get(target, "status"), "lastSyncedTime"));
  int64_t b = po_Sync_ParseTime(po_Json_String(synced_condition(target), "lastTransitionTime"));
  return a > b ? a : b;
}

static void duration(int64_t s, char *buf, size_t size) {
  if (s % 60 == 0) snprintf(buf, size, "%" PRId64 "m", s / 60);
  else snprintf(buf, size, "%" PRId64 "s", s);
}

void po_Sync_Judge(const po_SyncPolicy *p, const json_object *target, const po_WriteRecord *w, int64_t now,
                   const char *where, po_SyncVerdict *v) {
  memset(v, 0, sizeof *v);
  if (!p || p->mode != kPo_SyncMode_Require) return;
  json_object *c = synced_condition(target);
  const char *status = po_Json_StringOr(c, "status", ""), *reason = po_Json_StringOr(c, "reason", "");
  /* Written by consul-k8s after our write: the status differs from the one recorded with it.
   * Without a record (entries written by an older version, or under ignore), the status as it
   * is is all there is to know. */
  bool after = !w->present || po_Sync_StatusHash(target) != w->status_hash;
  char at[32];
  format_time(w->present ? w->at : now, at);
  if (after && (!strcmp(status, "False") || (!strcmp(status, "Unknown") && *reason))) {
    v->state = kPo_SyncState_Failed;
    snprintf(v->message, sizeof v->message, "consul-k8s could not sync %s into Consul (Synced=%s, %s): %s", where, status,
             *reason ? reason : "no reason given", po_Json_StringOr(c, "message", ""));
    return;
  }
  if (after && !strcmp(status, "True")) return; /* Live */
  v->state = kPo_SyncState_Pending;
  char sync_state[96];
  if (!c) snprintf(sync_state, sizeof sync_state, "no Synced condition yet");
  else if (!after) snprintf(sync_state, sizeof sync_state, "its status predates the write");
  else snprintf(sync_state, sizeof sync_state, "Synced=%.32s", *status ? status : "\"\"");
  int64_t waited = w->present ? now - w->at : 0;
  /* A record from the future (edited by hand, or another replica's clock ahead): waited from
   * now, so the next look is at most the timeout away (a year-9999 record made the delay
   * overflow RequeueAfter's nanoseconds into a negative one). */
  if (waited < 0) waited = 0;
  if (w->present && p->timeout_s > 0 && waited >= p->timeout_s) {
    char d[32];
    duration(p->timeout_s, d, sizeof d);
    v->timed_out = true;
    snprintf(v->message, sizeof v->message,
             PO_SYNC_TIMEOUT_PREFIX " %s synced within %s of our write at %s (%s): is consul-k8s running and watching "
             "this namespace? Without consul-k8s, run the controller with --consul-sync-status=ignore",
             where, d, at, sync_state);
    return;
  }
  if (w->present && p->timeout_s > 0) v->recheck_in_s = p->timeout_s - waited;
  snprintf(v->message, sizeof v->message,
           "written to %s at %s; waiting for consul-k8s to sync it into Consul (%s)", where, at, sync_state);
}
