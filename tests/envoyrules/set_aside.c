/* The one list of what the comparison sets aside, each with its reason. The oracle is built from
 * the same go-control-plane envoy version as the snapshot a run judges with (version.c checks the
 * two agree on every message the walk reaches, and fails on any difference), so no version gap is
 * left to set aside: what is left is a check of Envoy's C++ that its Go validators do not make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "set_aside.h"

static const char *const kNegativeDuration =
    "a negative or out-of-range Duration: Envoy's C++ refuses one wherever a config holds it (\"Expected positive "
    "duration\", \"Duration out-of-range\"), beyond protoc-gen-validate, whose Go validators accept it where no rule "
    "says otherwise; compared only where they refuse it too";

/* Whether a time case sets a Duration (its forms: an object, /seconds, /nanos); *valid: its
 * seconds and nanos as Envoy's C++ takes them. */
static bool duration_of(const po_DiffCase *c, bool *valid) {
  const char *last = strrchr(c->path, '/');
  long long s = 0, n = 0;
  if (last && !strcmp(last, "/seconds")) s = strtoll(c->value, NULL, 10);
  else if (last && !strcmp(last, "/nanos")) n = strtoll(c->value, NULL, 10);
  else if (!strncmp(c->value, "{\"seconds\":", 11)) sscanf(c->value, "{\"seconds\":%lld,\"nanos\":%lld}", &s, &n);
  else if (strcmp(c->value, "{}") != 0) return false;
  *valid = s >= 0 && n >= 0 && s <= 315576000000LL && n <= 999999999;
  return true;
}

const char *po_Diff_SetAside(const po_DiffCase *c, bool oracle_refuses) {
  if (strncmp(c->form, "duration-", 9) != 0 && strcmp(c->form, "message-empty") != 0) return NULL;
  bool valid;
  if (!duration_of(c, &valid)) return NULL;
  return !valid && !oracle_refuses ? kNegativeDuration : NULL;
}

