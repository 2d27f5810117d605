/* Fault injection: counters set by flags or POST /admin/faults, consumed as requests arrive. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "apiserver.h"

bool po_As_Faults_Roll(int percent) {
  if (percent <= 0) return false;
  /* splitmix64: small, and the same sequence for the same seed */
  uint64_t z = (po_as.faults.seed += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (int)(z % 100) < percent;
}

bool po_As_Faults_Intercept(po_As_Reply *r) {
  po_As_Faults *f = &po_as.faults;
  if (po_As_Faults_Roll(f->server_error_percent)) f->server_errors++;
  if (f->throttle > 0) {
    f->throttle--;
    int ra = f->retry_after > 0 ? f->retry_after : 1;
    json_object *d = json_object_new_object();
    json_object_object_add(d, "retryAfterSeconds", json_object_new_int(ra));
    po_As_Reply_Status(r, 429, "TooManyRequests", "Too many requests, please try again later.", d);
    r->retry_after = ra;
    return true;
  }
  if (f->server_errors > 0) {
    f->server_errors--;
    int code = f->server_error_code >= 500 ? f->server_error_code : 503;
    po_As_Reply_Status(r, code, NULL, code == 503 ? "the server is currently unable to handle the request" : "an error on the server has prevented the request from succeeding (injected fault)", NULL);
    return true;
  }
  return false;
}

static const struct {
  const char *name;
  size_t off;
} kFields[] = {
    {"dropWatchEvery", offsetof(po_As_Faults, drop_watch_every)}, {"force410", offsetof(po_As_Faults, force_410)},
    {"throttle", offsetof(po_As_Faults, throttle)}, {"retryAfterSeconds", offsetof(po_As_Faults, retry_after)},
    {"serverErrors", offsetof(po_As_Faults, server_errors)}, {"serverErrorCode", offsetof(po_As_Faults, server_error_code)},
    {"latencyMs", offsetof(po_As_Faults, latency_ms)},
    {"serverErrorPercent", offsetof(po_As_Faults, server_error_percent)},
    {"force410Percent", offsetof(po_As_Faults, force_410_percent)},
    {"holdWatchMs", offsetof(po_As_Faults, hold_watch_ms)},
};
/* The one field that is not a number: the resource whose watch events holdWatchMs holds. */
static const char kHoldResource[] = "holdWatchResource";

json_object *po_As_Faults_Json(void) {
  json_object *o = json_object_new_object();
  for (size_t i = 0; i < sizeof kFields / sizeof kFields[0]; i++)
    json_object_object_add(o, kFields[i].name, json_object_new_int(*(int *)((char *)&po_as.faults + kFields[i].off)));
  json_object_object_add(o, kHoldResource, json_object_new_string(po_as.faults.hold_watch_resource));
  return o;
}

bool po_As_Faults_Set(json_object *in, char *msg, size_t msgsz) {
  if (!in || !json_object_is_type(in, json_type_object)) {
    snprintf(msg, msgsz, "faults: the body must be a JSON object");
    return false;
  }
  json_object_object_foreach(in, k, v) {
    if (!strcmp(k, kHoldResource)) {
      if (!v || !json_object_is_type(v, json_type_string) ||
          json_object_get_string_len(v) >= (int)sizeof po_as.faults.hold_watch_resource) {
        snprintf(msg, msgsz, "faults: %s must be a resource's plural name (\"\" for every resource), shorter than %zu bytes",
                 kHoldResource, sizeof po_as.faults.hold_watch_resource);
        return false;
      }
      continue;
    }
    size_t i;
    for (i = 0; i < sizeof kFields / sizeof kFields[0]; i++)
      if (!strcmp(kFields[i].name, k)) break;
    if (i == sizeof kFields / sizeof kFields[0]) {
      snprintf(msg, msgsz, "faults: unknown field \"%s\" (valid: dropWatchEvery, force410, throttle, retryAfterSeconds, serverErrors, serverErrorCode, latencyMs, serverErrorPercent, force410Percent, holdWatchMs, holdWatchResource)", k);
      return false;
    }
    if (!v || !json_object_is_type(v, json_type_int) || json_object_get_int(v) < 0) {
      snprintf(msg, msgsz, "faults: %s must be a non-negative integer", k);
      return false;
    }
  }
  json_object_object_foreach(in, k2, v2) {
    if (!strcmp(k2, kHoldResource))
      snprintf(po_as.faults.hold_watch_resource, sizeof po_as.faults.hold_watch_resource, "%s", json_object_get_string(v2));
    for (size_t i = 0; i < sizeof kFields / sizeof kFields[0]; i++)
      if (!strcmp(kFields[i].name, k2)) *(int *)((char *)&po_as.faults + kFields[i].off) = json_object_get_int(v2);
  }
  return true;
}
