/* A field the judging snapshot lacks but another embedded snapshot has: an unknown-field error
 * about one says so plainly (which Envoy APIs have it, and which mesh release the judging one
 * stands for) instead of suggesting a typo. The other snapshots' embedded pieces are the evidence. (A table of
 * fields newer than every snapshot, from other sources, stood here while one older snapshot was
 * embedded; its one entry, Cluster.dns_jitter, is in every snapshot now.) */
#include <string.h>

#include "compiled.h"

/* Whether snapshot `api` has field `name` on the message named `full`: from the embedded index
 * and the one piece defining the message, not that snapshot's schema (loading the others cost a
 * one-shot `validate -f` three times its instructions and a controller two more whole schemas;
 * docs/benchmarks.md). Out of memory it says no: the hint then names fewer releases. */
static bool has_field(const po_EnvoyApi *api, const char *full, const char *name, size_t len) {
  po_SnapshotField f = po_Schema_SnapshotHasField(po_EnvoyApi_Index_(api), full, name, len);
  return f == kPo_SnapshotField_Present || f == kPo_SnapshotField_Deprecated;
}

/* "go-control-plane envoy v1.37.0 and v1.40.0": the embedded snapshots other than `self` that
 * have the field, oldest first, or NULL. */
static const char *others_with(const po_EnvoyApi *self, const char *full, const char *name, size_t len, po_Arena *a) {
  const po_EnvoyApi *with[16];
  size_t n = 0;
  for (size_t i = 0; i < po_EnvoyApi_Count() && n < sizeof with / sizeof with[0]; i++) {
    const po_EnvoyApi *api = po_EnvoyApi_At(i);
    if (api != self && has_field(api, full, name, len)) with[n++] = api;
  }
  if (!n) return NULL;
  po_TextBuf t = {.a = a};
  for (size_t i = 0; i < n; i++) {
    po_TextBuf_Puts(&t, i == 0 ? "" : i + 1 == n ? " and " : ", ");
    po_TextBuf_Puts(&t, i == 0 ? po_EnvoyApi_Name(with[i]) : po_EnvoyApi_Version(with[i]));
  }
  return t.oom ? NULL : t.buf;
}

const char *po_Hint_NewerField(const po_Schema *schema, const upb_MessageDef *m, const char *name, size_t len,
                               const char *judged_for, po_Arena *a) {
  const char *full = upb_MessageDef_FullName(m);
  const po_EnvoyApi *self = po_EnvoyApi_OfSchema_(schema);
  const char *in = self ? others_with(self, full, name, len, a) : NULL;
  if (!in) return NULL;
  return po_Arena_Printf(a, "'%.*s' is a field of %s in %s but not in %s, %s%s; a mesh release built on one of those accepts it",
                         (int)len, name, full, in, po_EnvoyApi_Name(self),
                         judged_for ? "the Envoy API judging " : "the Envoy API used here", judged_for ? judged_for : "");
}
