/* A field the judging snapshot lacks but another embedded snapshot has: an unknown-field error
 * about one says so plainly (which Envoy APIs have it, which mesh release the judging one stands
 * for, and exactly which of the caller's mesh releases accept it, or that none does: adv-24 found
 * "a mesh release built on one of those accepts it" said of a field only v1.40.0 has, which no
 * release is built on) instead of suggesting a typo. The other snapshots' embedded pieces are the
 * evidence. (A table of fields newer than every snapshot, from other sources, stood here while one
 * older snapshot was embedded; its one entry, Cluster.dns_jitter, is in every snapshot now.) */
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

/* The embedded snapshots other than `self` that have the field, oldest first, into with[];
 * how many. *newer: every one of them is newer than `self`. */
static size_t others_with(const po_EnvoyApi *self, const char *full, const char *name, size_t len,
                          const po_EnvoyApi **with, size_t max, bool *newer) {
  size_t n = 0;
  bool past_self = false;
  *newer = true;
  for (size_t i = 0; i < po_EnvoyApi_Count() && n < max; i++) {
    const po_EnvoyApi *api = po_EnvoyApi_At(i);
    if (api == self) past_self = true;
    else if (has_field(api, full, name, len)) with[n++] = api, *newer &= past_self;
  }
  return n;
}

/* "a, b and c" of what put() writes for items [0, n). */
static void join(po_TextBuf *t, size_t i, size_t n) {
  po_TextBuf_Puts(t, i == 0 ? "" : i + 1 == n ? " and " : ", ");
}

/* The releases of `rel` judged by one of with[0..n): "; istio@1.28 and istio@1.29 accept it", or
 * that none does (then "yet" when every snapshot having the field is newer than the judging one:
 * a later release may be built on it). Nothing when no releases are given. */
static void accepting(po_TextBuf *t, const po_ApiReleases *rel, const po_EnvoyApi *const *with, size_t n, bool newer) {
  if (!rel || !rel->count) return;
  size_t k = 0, count = 0;
  for (size_t r = 0; r < rel->count; r++) {
    for (size_t i = 0; i < n; i++) count += rel->rows[r].api == with[i];
  }
  for (size_t r = 0; r < rel->count; r++) {
    bool in = false;
    for (size_t i = 0; i < n; i++) in |= rel->rows[r].api == with[i];
    if (!in) continue;
    po_TextBuf_Puts(t, k == 0 ? "; " : "");
    join(t, k++, count);
    po_TextBuf_Puts(t, rel->rows[r].mesh);
    po_TextBuf_Puts(t, "@");
    po_TextBuf_Puts(t, rel->rows[r].release);
  }
  if (count) {
    po_TextBuf_Puts(t, count == 1 ? " accepts it" : " accept it");
    return;
  }
  po_TextBuf_Puts(t, "; no ");
  po_TextBuf_Puts(t, rel->mesh ? rel->mesh : "mesh");
  po_TextBuf_Puts(t, newer ? " release this build supports accepts it yet" : " release this build supports accepts it");
}

/* The sentence for field name[len] of message `full`, which snapshot `self` lacks. */
static const char *sentence(const po_EnvoyApi *self, const char *full, const char *name, size_t len,
                            const char *judged_for, const po_ApiReleases *releases, po_Arena *a) {
  const po_EnvoyApi *with[16];
  bool newer;
  size_t n = others_with(self, full, name, len, with, sizeof with / sizeof with[0], &newer);
  if (!n) return NULL;
  po_TextBuf t = {.a = a};
  const char *head = po_Arena_Printf(a, "'%.*s' is a field of %s in ", (int)len, name, full);
  if (!head) return NULL;
  po_TextBuf_Puts(&t, head);
  for (size_t i = 0; i < n; i++) {
    join(&t, i, n);
    po_TextBuf_Puts(&t, i == 0 ? po_EnvoyApi_Name(with[i]) : po_EnvoyApi_Version(with[i]));
  }
  const char *lacking = po_Arena_Printf(a, " but not in %s, %s%s", po_EnvoyApi_Name(self),
                                       judged_for ? "the Envoy API judging " : "the Envoy API used here",
                                       judged_for ? judged_for : "");
  if (!lacking) return NULL;
  po_TextBuf_Puts(&t, lacking);
  accepting(&t, releases, with, n, newer);
  return t.oom ? NULL : t.buf;
}

const char *po_Hint_NewerField(const po_Schema *schema, const upb_MessageDef *m, const char *name, size_t len,
                               const char *judged_for, const po_ApiReleases *releases, po_Arena *a) {
  const po_EnvoyApi *self = po_EnvoyApi_OfSchema_(schema);
  return self ? sentence(self, upb_MessageDef_FullName(m), name, len, judged_for, releases, a) : NULL;
}

const char *po_Hint_FieldOfOtherApis(const po_EnvoyApi *api, const char *message, const char *field,
                                     const char *judged_for, const po_ApiReleases *releases, po_Arena *a) {
  if (!message || !field) return NULL;
  return sentence(api ? api : po_EnvoyApi_Default(), message, field, strlen(field), judged_for, releases, a);
}
