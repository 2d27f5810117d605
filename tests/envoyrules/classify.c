/* What kind of rule an oracle's violation is: the rule type our schema gives the field at its
 * path ("uint32", "string", "duration", "oneof" for a oneof's name, "message" for
 * message.required) and the constraint its reason names ("lte", "min_len", "required"). */
#include <string.h>

#include "gen.h"

static const struct {
  const char *text; /* in the generated validators' reasons */
  const char *constraint;
} kReasons[] = {
    {"value is not a valid duration", "valid"},
    {"value is not a valid timestamp", "valid"},
    {"value is required", "required"},
    {"value must equal", "const"},
    {"value must be inside range", "range"},
    {"value must be outside range", "range"},
    {"value must be less than or equal to", "lte"},
    {"value must be less than", "lt"},
    {"value must be greater than or equal to", "gte"},
    {"value must be greater than", "gt"},
    {"value must be in list", "in"},
    {"value must not be in list", "not_in"},
    {"value must be one of the defined enum values", "defined_only"},
    {"value length must be at least", "min_len"},
    {"value length must be at most", "max_len"},
    {"value length must be between", "len"},
    {"value length must be", "len"},
    {"value must contain at least", "min_items"},
    {"value must contain no more than", "max_items"},
    {"value does not match regex pattern", "pattern"},
    {"value does not have prefix", "prefix"},
    {"value does not have suffix", "suffix"},
    {"value does not contain substring", "contains"},
    {"value contains substring", "not_contains"},
    {"value must be a valid email address", "well_known.email"},
    {"value must be a valid hostname, or ip address", "well_known.address"},
    {"value must be a valid hostname", "well_known.hostname"},
    {"value must be a valid IPv4 address", "well_known.ipv4"},
    {"value must be a valid IPv6 address", "well_known.ipv6"},
    {"value must be a valid IP address", "well_known.ip"},
    {"value must be absolute", "well_known.uri"},
    {"value must be a valid URI", "well_known.uri_ref"},
    {"value must be a valid UUID", "well_known.uuid"},
    {"type URL must be in list", "in"},
    {"type URL must not be in list", "not_in"},
    {"value must contain unique items", "unique"},
};

static const char *constraint_of(const char *reason) {
  if (strstr(reason, "pair")) return strstr(reason, "at least") ? "min_pairs" : "max_pairs";
  if (strstr(reason, "bytes")) {
    return strstr(reason, "at least") ? "min_bytes" : strstr(reason, "at most") ? "max_bytes" : "len_bytes";
  }
  for (size_t i = 0; i < sizeof kReasons / sizeof *kReasons; i++) {
    if (!strncmp(reason, kReasons[i].text, strlen(kReasons[i].text))) return kReasons[i].constraint;
  }
  return "other";
}

/* The field (or oneof) at `path` below `m`: each segment a field name, the last one possibly a
 * oneof's. NULL when the path leaves our schema (a field only the oracle's version has). */
static const char *type_at(const po_Schema *s, const upb_MessageDef *m, const char *path, upb_Arena *ua, bool *required) {
  const upb_FieldDef *f = NULL;
  for (const char *p = path; *p == '/' && m;) {
    const char *seg = p + 1, *end = strchr(seg, '/');
    size_t len = end ? (size_t)(end - seg) : strlen(seg);
    f = upb_MessageDef_FindFieldByNameWithSize(m, seg, len);
    if (!f) {
      const upb_OneofDef *o = upb_MessageDef_FindOneofByNameWithSize(m, seg, len);
      return o && !end ? "oneof" : NULL;
    }
    m = upb_FieldDef_IsSubMessage(f) && !upb_FieldDef_IsMap(f) ? upb_FieldDef_MessageSubDef(f) : NULL;
    p = end ? end : seg + len;
    if (end && !m) return NULL;
  }
  if (!f) return NULL;
  po_DiffRules r;
  if (!po_DiffRules_Of(s, f, ua, &r)) return "none";
  *required = po_DiffRules_MessageRequired(&r);
  if (r.type && !strcmp(r.type, "string") && r.k) {
    upb_MessageValue v;
    if (po_DiffRules_Get(r.k, r.kd, "well_known_regex", &v, NULL) && v.int32_val) return "string.well_known_regex";
  }
  return r.type ? r.type : "message";
}

const char *po_Diff_ViolationKind(const char *message_name, const po_DiffViolation *v, po_Arena *a) {
  const po_Schema *s = po_DiffSnapshot_Schema();
  const upb_MessageDef *m = s ? po_Schema_FindMessage(s, message_name) : NULL;
  upb_Arena *ua = upb_Arena_New();
  bool required = false;
  const char *type = m && ua ? type_at(s, m, v->path, ua, &required) : NULL;
  upb_Arena_Free(ua);
  const char *constraint = constraint_of(v->reason);
  if (!type) return po_Arena_Printf(a, "(not in our schema).%s", constraint);
  if (!strcmp(constraint, "required") && required) type = "message";
  if (!strcmp(type, "string.well_known_regex") && !strcmp(constraint, "pattern")) return "string.well_known_regex";
  return po_Arena_Printf(a, "%s.%s", type, constraint);
}
