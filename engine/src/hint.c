/* Did-you-mean for unknown field names (beyond Consul, which only lists the fields).
 * Two common mistakes get a direct answer: a JSON (camelCase) name where the proto name is
 * needed, and a small typo (edit distance within a third of the name). */
#include <string.h>

#include "compiled.h"

static size_t distance(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  if (la > 64 || lb > 64) return (size_t)-1;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = diag + cost;
      if (row[j] + 1 < best) best = row[j] + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *po_Hint_UnknownField(const upb_MessageDef *m, const char *name, po_Arena *a) {
  const upb_FieldDef *byjson = upb_MessageDef_FindByJsonName(m, name);
  if (byjson) {
    return po_Arena_Printf(a, "did you mean '%s'? Paths use proto field names, not JSON names",
                           upb_FieldDef_Name(byjson));
  }
  const char *best = NULL;
  size_t best_d = (size_t)-1;
  for (int i = 0; i < upb_MessageDef_FieldCount(m); i++) {
    const char *cand = upb_FieldDef_Name(upb_MessageDef_Field(m, i));
    size_t d = distance(name, cand);
    if (d < best_d) {
      best_d = d;
      best = cand;
    }
  }
  size_t limit = strlen(name) / 3;
  if (limit < 1) limit = 1;
  if (!best || best_d > limit) return NULL;
  return po_Arena_Printf(a, "did you mean '%s'?", best);
}
