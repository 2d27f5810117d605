/* The check the admission webhook runs on a consul.hashicorp.com ServiceDefaults or
 * ProxyDefaults: every builtin/property-override entry of spec.envoyExtensions through Consul's
 * Constructor under the wire convention (what Consul's HTTP API will hand it), plus Envoy's
 * rules. Shared by the webhook and the CLI's validate, so both give the same answer. */
#ifndef PO_MESHES_CONSUL_CHECK_H_
#define PO_MESHES_CONSUL_CHECK_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/engine.h"
#include "po/targets/release.h"

struct json_object;

/* Per ServiceDefaults/ProxyDefaults (README.md, the webhook section): enough for 100
 * PropertyOverrides of kPo_MaxPatchesPerOverride patches each in one target. */
enum {
  kPo_MaxExtensionsPerConsulObject = 100,  /* builtin/property-override entries */
  kPo_MaxPatchesPerConsulObject = 10000,   /* patches in all those entries together */
};

typedef struct {
  size_t entry_index;     /* in spec.envoyExtensions */
  const char *name;       /* the entry's name (builtin/property-override) */
  bool accepted;
  const char *error;      /* the arguments could not be read at all, or `limit`; else NULL */
  bool limit;             /* the object is over a limit (above): `error` names it, entry_index is
                           * the entry that crossed it, and this is the only check returned */
  po_Diagnostics *diags;  /* the Constructor's errors and warnings (never NULL) */
} po_ConsulExtensionCheck;

/* How many patches an entry's arguments hold as Consul's decoder sees them (the key matched
 * case-insensitively, a single object a list of one): what the limits above count. */
size_t po_ConsulEntry_PatchCount(const struct json_object *arguments);

/* Checks every builtin/property-override entry of `obj` as Consul release `release` (a row of
 * po_Consul_Releases; NULL: the default row) would: judged by Envoy API snapshot `api` (NULL: the
 * release's snapshot); *out gets them in entry order (in the arena). Returns how many, 0 when
 * there are none. *oom is set when memory ran out. An object over a limit gets one check with
 * `limit` set and nothing else is validated. An error's hint names the release ("the Envoy API
 * judging consul@1.22") when `api` is the release's, else "the Envoy API used here" (another
 * snapshot named, as `--envoy-api` does). validate and the webhook (with the release the
 * controller runs, --consul-version) both call it. */
size_t po_ConsulObject_CheckRelease(const struct json_object *obj, const po_MeshRelease *release,
                                    const po_EnvoyApi *api, po_Arena *a, po_ConsulExtensionCheck **out, bool *oom);
/* The webhook's denial text for `kind` ("ServiceDefaults"), or NULL when every entry is valid:
 * "<Kind> <ns>/<name> has invalid property-override extensions:\n" and, per bad entry,
 * "spec.envoyExtensions[<i>] (<name>): <Consul's aggregated text>". Bounded like
 * po_CompiledOverride_Describe (kPo_DescribeMaxErrors errors within `max_bytes`, 0 for the
 * default, then "... and K more errors"); an entry whose errors do not all fit gets one line per
 * error shown ("spec.envoyExtensions[<i>] (<name>): invalid Patches[<j>]: <message>"). Linear in
 * the number of diagnostics. */
const char *po_ConsulObject_Describe(const struct json_object *obj, const char *kind,
                                     const po_ConsulExtensionCheck *checks, size_t n, size_t max_bytes,
                                     po_Arena *a);

#endif
