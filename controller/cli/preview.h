/* The pieces of `propertyoverride preview` (cmd_preview.c): the diff of a resource's JSON
 * (preview_diff.c), the fetch of a config dump from Envoy's admin endpoint (fetch.c), and the
 * run and its report (preview_run.c). */
#ifndef PO_CLI_PREVIEW_H_
#define PO_CLI_PREVIEW_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "po/engine.h"
#include "po/targets/override.h"

/* Compact JSON (what po_Message_ToJson gives) as indented text, two spaces a level, object
 * keys sorted by byte order (upb writes map entries in hash order: sorting makes the before and
 * after of one resource, and two runs, line up). NULL when the text is not JSON this reads
 * (nested over 64 deep) or out of memory. */
char *po_Preview_PrettyJson(const char *json, size_t len, po_Arena *a, po_Status *st);
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

/* ---- the run (preview_run.c): the overrides applied to a dump's resources, and the report ---- */

typedef struct {
  po_Mesh mesh;
  /* how the mesh was chosen: "flag" (--mesh), "dump" (po_Preview_DetectMesh found it) or
   * "default" (nothing said it: Consul); mesh_reason in words, for the report */
  const char *mesh_by, *mesh_reason;
  const char *datacenter;
  bool json, verbose;
  /* The snapshot the overrides are judged and applied with: the proxy's (chosen_by says how:
   * "flag", "bootstrap" or "default"; reason in words). The dump is read with its own (the
   * newest: no field a current proxy carries refuses it); a matched resource is moved to the
   * judging snapshot to be patched, and back to be printed (po_Message_As). */
  const po_EnvoyApi *judge;
  const char *chosen_by, *reason;
} po_PreviewOptions;

/* The mesh of the proxy a dump is of, into opt->mesh, mesh_by and mesh_reason (preview_mesh.c):
 * its bootstrap's (Istio's node metadata ISTIO_VERSION; Consul's consul.source.service or
 * .datacenter stats tag), else the one whose naming most of its clusters follow
 * ("outbound|9080||...", "httproute/ns/name/rule/0", "....consul"), else Consul, assumed. Linear
 * in the resources. false when out of memory. */
bool po_Preview_DetectMesh(const po_ConfigDump *dump, po_Arena *a, po_PreviewOptions *opt);

/* A PropertyOverride accepted for the preview. */
typedef struct {
  const po_CompiledOverride *c;
  const char *label; /* namespace/name */
  size_t *matched;   /* per patch: resources it applied to (po_Preview_Run counts) */
  size_t index;      /* its place in the inputs: the last tie-break */
} po_PreviewOverride;

/* qsort's comparison for the order Consul runs a proxy's extensions in (preview_run.c says it). */
int po_PreviewOverride_Compare(const void *x, const void *y);

/* The overrides (accepted, in apply order) on the dump, the report (text or JSON, opt) to out:
 * 0 previewed, 1 an error in the result, -1 out of memory (the caller says so), -3 said on
 * stderr. */
int po_Preview_Run(const po_PreviewOptions *opt, po_PreviewOverride *all, size_t nall, po_ConfigDump *dump, po_Arena *a,
                   FILE *out);

#endif
