/* po_Diagnostics: errors and warnings as data, and Consul's text for them.
 *
 * Consul aggregates with hashicorp/go-multierror, whose list format is
 *   "1 error occurred:\n\t* E\n\n"            for one error, and
 *   "N errors occurred:\n\t* E1\n\t* E2\n\n"  for more.
 * Each patch contributes its first error as "invalid Patches[i]: <error>"; ProxyType's comes last.
 * The extension-name error, decoding errors and "at least one patch is required" are returned
 * alone, unaggregated: they carry patch_index -2. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

struct po_Diagnostics {
  po_Arena *arena;
  po_Diagnostic *items;
  size_t len, cap;
};

po_Diagnostics *po_Diagnostics_New(po_Arena *a) {
  po_Diagnostics *d = po_Arena_Malloc(a, sizeof *d);
  if (d) d->arena = a;
  return d;
}

size_t po_Diagnostics_Count(const po_Diagnostics *d) { return d ? d->len : 0; }

size_t po_Diagnostics_ErrorCount(const po_Diagnostics *d) {
  size_t n = 0;
  for (size_t i = 0; d && i < d->len; i++) n += d->items[i].severity == kPo_Severity_Error;
  return n;
}

const po_Diagnostic *po_Diagnostics_At(const po_Diagnostics *d, size_t i) {
  return d && i < d->len ? &d->items[i] : NULL;
}

po_Diagnostic *po_Diagnostics_Add(po_Diagnostics *d, po_Severity sev, po_DiagKind kind,
                                  int patch_index, const char *path, const char *message) {
  if (!d) return NULL;
  po_Diagnostic *items = po_Arena_Grow(d->arena, d->items, d->len, &d->cap, sizeof *items, 8);
  if (!items) return NULL;
  d->items = items;
  po_Diagnostic *x = &d->items[d->len++];
  *x = (po_Diagnostic){.severity = sev, .kind = kind, .patch_index = patch_index,
                       .path = path, .message = message ? message : ""};
  return x;
}

/* One go-multierror-style list of the diagnostics `pick` selects, headed `one` when there is
 * one and "<n> <many>" otherwise. Returns how many it listed. */
static size_t list(po_TextBuf *b, const po_Diagnostics *d, bool (*pick)(const po_Diagnostic *),
                   const char *one, const char *many, const char *prefix) {
  size_t n = 0;
  for (size_t i = 0; i < d->len; i++) n += pick(&d->items[i]);
  if (n == 0) return 0;
  char head[128];
  if (n == 1) snprintf(head, sizeof head, "%s", one);
  else snprintf(head, sizeof head, "%zu %s", n, many);
  po_TextBuf_Puts(b, head);
  size_t k = 0;
  for (size_t i = 0; i < d->len; i++) {
    const po_Diagnostic *x = &d->items[i];
    if (!pick(x)) continue;
    po_TextBuf_Puts(b, k++ ? "\n\t* " : "\t* ");
    if (x->patch_index >= 0) {
      char pre[64];
      snprintf(pre, sizeof pre, "%sPatches[%d]: ", prefix, x->patch_index);
      po_TextBuf_Puts(b, pre);
    }
    po_TextBuf_Puts(b, x->message);
  }
  po_TextBuf_Puts(b, "\n\n");
  return n;
}

static bool consul_error(const po_Diagnostic *x) {
  return x->severity == kPo_Severity_Error && x->kind == kPo_DiagKind_Consul;
}
static bool further_error(const po_Diagnostic *x) {
  return x->severity == kPo_Severity_Error && x->kind != kPo_DiagKind_Consul;
}
static bool warning(const po_Diagnostic *x) { return x->severity == kPo_Severity_Warning; }

/* Consul's text, then (extras) our block: further errors, then (warnings) warnings, then hints.
 * Consul's part is byte for byte what Consul prints, so it stays a prefix of the whole. */
static const char *text(const po_Diagnostics *d, bool extras, bool warnings, po_Arena *a) {
  if (!d) return NULL;
  /* Errors Consul returns alone, not aggregated (name, decoding, no patches): patch_index -2. */
  const char *alone = NULL;
  for (size_t i = 0; !alone && i < d->len; i++) {
    if (d->items[i].patch_index == -2 && d->items[i].severity == kPo_Severity_Error) alone = d->items[i].message;
  }
  if (alone && !warnings) return alone;
  po_TextBuf b = {.a = a};
  size_t n = 0;
  if (alone) {
    po_TextBuf_Puts(&b, alone);
    if (alone[0] && alone[strlen(alone) - 1] != '\n') po_TextBuf_Puts(&b, "\n");
    n++;
  } else {
    n += list(&b, d, consul_error, "1 error occurred:\n", "errors occurred:\n", "invalid ");
    if (extras) {
      n += list(&b, d, further_error, "1 more error, beyond Consul's checks:\n",
                "more errors, beyond Consul's checks:\n", "invalid ");
    }
  }
  if (n == 0 && !warnings) return NULL;
  if (warnings) list(&b, d, warning, "1 warning:\n", "warnings:\n", "");
  for (size_t i = 0; extras && !alone && i < d->len; i++) {
    const po_Diagnostic *x = &d->items[i];
    if (!x->hint) continue;
    char pre[64];
    snprintf(pre, sizeof pre, "hint: Patches[%d]: ", x->patch_index);
    po_TextBuf_Puts(&b, pre);
    po_TextBuf_Puts(&b, x->hint);
    po_TextBuf_Puts(&b, "\n");
  }
  if (b.oom) return "out of memory";
  return b.len ? b.buf : NULL;
}

const char *po_Diagnostics_ConsulText(const po_Diagnostics *d, bool extras, po_Arena *a) {
  return text(d, extras, false, a);
}

const char *po_Diagnostics_Text(const po_Diagnostics *d, po_Arena *a) { return text(d, true, true, a); }
