/* The one list of what the comparison sets aside, each with its reason. The generator walks our
 * schema, so fields only the oracle's go-control-plane (envoy v1.32.4) has are never set; what is
 * left is where a field's rule differs between the two versions, and a check of Envoy's C++ that
 * its Go validators do not make. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "set_aside.h"

/* Rules that differ between the embedded snapshot and go-control-plane envoy v1.32.4: set aside
 * for the Durations in [lo, hi) nanoseconds, where the two versions disagree; compared elsewhere. */
static const struct {
  const char *field;
  long double lo, hi;
  const char *why;
} kRuleDiffers[] = {
    {"envoy.config.core.v3.QuicKeepAliveSettings.max_interval", 1, 1e9L,
     "the snapshot's rule is {lte: 0s, gte: 1s} (0s, or at least 1s); v1.32.4 has none, so it takes (0s, 1s) too"},
    {"envoy.config.core.v3.QuicKeepAliveSettings.initial_interval", 1e6L, 1e9L,
     "the snapshot's rule is {lte: 0s, gte: 1s}; v1.32.4's is {lte: 0s, gte: 1ms}: they differ on [1ms, 1s)"},
};

/* Fields only our snapshot has (Envoy's API dropped them before v1.32.4): the oracle cannot read
 * them, so a case through one is set aside. */
static const struct {
  const char *message, *field;
  const char *why;
} kOnlyOurs[] = {
    {"envoy.config.listener.v3.FilterChain", "on_demand_configuration",
     "FilterChain.on_demand_configuration (and its OnDemandConfiguration) is in the snapshot, not in v1.32.4: the "
     "oracle has no rule of it to judge"},
};

static const char *const kNegativeDuration =
    "a negative or out-of-range Duration: Envoy's C++ refuses one wherever a config holds it (\"Expected positive "
    "duration\", \"Duration out-of-range\"), beyond protoc-gen-validate, whose Go validators accept it where no rule "
    "says otherwise; compared only where they refuse it too";

/* The fields the case's path names, and the keys of its value when that is an object. */
static size_t fields_of(const po_DiffCase *c, const char **out, size_t cap) {
  po_Status st;
  po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  const char *root = po_ResourceType_Message(po_ResourceType_Parse(c->resource));
  const upb_MessageDef *m = s && root ? po_Schema_FindMessage(s, root) : NULL;
  size_t n = 0;
  for (const char *p = c->path; m && *p;) {
    while (*p == '/') p++;
    const char *end = strchr(p, '/');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const upb_FieldDef *f = len ? upb_MessageDef_FindFieldByNameWithSize(m, p, len) : NULL;
    if (!f) return n;
    if (n < cap) out[n++] = upb_FieldDef_FullName(f);
    m = upb_FieldDef_IsSubMessage(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
    p += len;
  }
  for (int i = 0; m && c->value[0] == '{' && i < upb_MessageDef_FieldCount(m); i++) {
    const upb_FieldDef *f = upb_MessageDef_Field(m, i);
    char key[300];
    snprintf(key, sizeof key, "\"%s\":", upb_FieldDef_Name(f));
    if (strstr(c->value, key) && n < cap) out[n++] = upb_FieldDef_FullName(f);
  }
  return n;
}

/* The Duration a time case sets (its forms: an object, /seconds, /nanos), in nanoseconds; false
 * for a case that sets none. *valid: seconds and nanos as Envoy's C++ takes them. */
static bool duration_of(const po_DiffCase *c, long double *ns, bool *valid) {
  const char *last = strrchr(c->path, '/');
  long long s = 0, n = 0;
  if (last && !strcmp(last, "/seconds")) s = strtoll(c->value, NULL, 10);
  else if (last && !strcmp(last, "/nanos")) n = strtoll(c->value, NULL, 10);
  else if (!strncmp(c->value, "{\"seconds\":", 11)) sscanf(c->value, "{\"seconds\":%lld,\"nanos\":%lld}", &s, &n);
  else if (strcmp(c->value, "{}") != 0) return false;
  *ns = (long double)s * 1e9L + n;
  *valid = s >= 0 && n >= 0 && s <= 315576000000LL && n <= 999999999;
  return true;
}

const char *po_Diff_SetAside(const po_DiffCase *c, bool oracle_refuses) {
  const char *fields[64];
  size_t n = fields_of(c, fields, 64);
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < sizeof kOnlyOurs / sizeof *kOnlyOurs; k++) {
      size_t ml = strlen(kOnlyOurs[k].message);
      if (!strncmp(fields[i], kOnlyOurs[k].message, ml) && fields[i][ml] == '.' && !strcmp(fields[i] + ml + 1, kOnlyOurs[k].field)) {
        return kOnlyOurs[k].why;
      }
    }
  }
  if (strncmp(c->form, "duration-", 9) != 0 && strcmp(c->form, "message-empty") != 0) return NULL;
  long double ns;
  bool valid;
  if (!duration_of(c, &ns, &valid)) return NULL;
  if (!valid && !oracle_refuses) return kNegativeDuration;
  for (size_t i = 0; i < n; i++) {
    for (size_t k = 0; k < sizeof kRuleDiffers / sizeof *kRuleDiffers; k++) {
      if (!strcmp(fields[i], kRuleDiffers[k].field) && ns >= kRuleDiffers[k].lo && ns < kRuleDiffers[k].hi) {
        return kRuleDiffers[k].why;
      }
    }
  }
  return NULL;
}

size_t po_Diff_RuleDiffersCount(void) { return sizeof kRuleDiffers / sizeof *kRuleDiffers; }

const char *po_Diff_RuleDiffersField(size_t i) { return i < po_Diff_RuleDiffersCount() ? kRuleDiffers[i].field : NULL; }

long po_Diff_RuleDiffersIndex(const char *field) {
  for (size_t i = 0; i < po_Diff_RuleDiffersCount(); i++) {
    if (!strcmp(kRuleDiffers[i].field, field)) return (long)i;
  }
  return -1;
}

bool po_Diff_OnlyOurs(const char *message, const char *field) {
  for (size_t k = 0; k < sizeof kOnlyOurs / sizeof *kOnlyOurs; k++) {
    if (!strcmp(kOnlyOurs[k].message, message) && (!field || !strcmp(kOnlyOurs[k].field, field))) return true;
  }
  return false;
}
