/* Did-you-mean for unknown field names (beyond Consul, which only lists the fields).
 * Two common mistakes get a direct answer: a JSON (camelCase) name where the proto name is
 * needed, and a small typo (edit distance within a third of the name). */
#include <string.h>

#include "compiled.h"

/* Levenshtein distance of a and b when it is at most k, else k + 1. Bounded so the search
 * stays cheap beside Consul's own error: candidates whose lengths differ by more than k are
 * skipped unread, and a row whose every cell exceeds k ends the scan. */
static size_t distance_within(const char *a, size_t la, const char *b, size_t lb, size_t k) {
  if (la > 64 || lb > 64) return k + 1;
  if ((la > lb ? la - lb : lb - la) > k) return k + 1;
  size_t row[65];
  for (size_t j = 0; j <= lb; j++) row[j] = j;
  for (size_t i = 1; i <= la; i++) {
    size_t diag = row[0];
    row[0] = i;
    size_t low = row[0];
    for (size_t j = 1; j <= lb; j++) {
      size_t up = row[j];
      size_t best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
      if (best < low) low = best;
    }
    if (low > k) return k + 1;
  }
  return row[lb] <= k ? row[lb] : k + 1;
}

const char *po_Hint_UnknownField(const upb_MessageDef *m, const char *name, po_Arena *a) {
  const upb_FieldDef *byjson = upb_MessageDef_FindByJsonName(m, name);
  if (byjson) {
    return po_Arena_Printf(a, "did you mean '%s'? Paths use proto field names, not JSON names",
                           upb_FieldDef_Name(byjson));
  }
  const char *best = NULL;
  size_t len = strlen(name);
  size_t limit = len / 3;
  if (limit < 1) limit = 1;
  size_t best_d = limit + 1;
  for (int i = 0; i < upb_MessageDef_FieldCount(m) && best_d > 1; i++) {
    const char *cand = upb_FieldDef_Name(upb_MessageDef_Field(m, i));
    /* strictly better only: the first of equally close names (declaration order) wins */
    size_t d = distance_within(name, len, cand, strlen(cand), best_d - 1);
    if (d < best_d) {
      best_d = d;
      best = cand;
    }
  }
  if (!best) return NULL;
  return po_Arena_Printf(a, "did you mean '%s'?", best);
}
