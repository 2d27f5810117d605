/* The pieces of `propertyoverride preview` (cmd_preview.c): the diff of a resource's JSON
 * (preview_diff.c) and the fetch of a config dump from Envoy's admin endpoint (fetch.c). */
#ifndef PO_CLI_PREVIEW_H_
#define PO_CLI_PREVIEW_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "po/engine.h"

/* Compact JSON (what po_Message_ToJson gives) as indented text, two spaces a level, object
 * keys sorted by byte order (upb writes map entries in hash order: sorting makes the before and
 * after of one resource, and two runs, line up). NULL when the text is not JSON this reads
 * (nested over 64 deep) or out of memory. */
char *po_Preview_PrettyJson(const char *json, size_t len, po_Arena *a);
/* The same for a value tree (the --output json report). */
char *po_Preview_PrettyValue(const po_Value *v, po_Arena *a);

/* A unified diff (3 lines of context) of two texts, line by line, under the headers
 * "--- a/LABEL" and "+++ b/LABEL". Nothing is written when the texts are equal. Myers'
 * algorithm on what lies between the common head and tail: O((N+M) D) time and O(D^2) memory
 * for D differing lines; past kPo_DiffMaxEdits the middle is shown replaced whole (still a
 * correct diff, just not a minimal one). false when out of memory. */
enum { kPo_DiffMaxEdits = 2000 };
bool po_Preview_Diff(const char *before, const char *after, const char *label, po_Arena *a, FILE *out);

/* GET url (http:// only: the admin endpoint, directly or through `kubectl port-forward`) into
 * the arena, at most max_bytes, within timeout_ms overall. libcurl is loaded when this is
 * first called (dlopen of libcurl.so.4), so the other one-shot commands never pay for its
 * libraries. Errors name the URL and what went wrong (status, size, time, no libcurl). */
char *po_Preview_Fetch(const char *url, size_t max_bytes, long timeout_ms, po_Arena *a, size_t *len, po_Status *st);

#endif
