/* The @type of an Any that Envoy's schema does not have (private to controller/targets).
 *
 * Why: hand-written EnvoyFilters carry Anys whose types only Istio knows (its own filters, e.g.
 * stats.PluginConfig, io.istio.*, and udpa/xds TypedStructs); an EnvoyPatchPolicy may carry
 * types that Envoy Gateway's Go registry has and our schema lacks. Decoding such a value fails
 * with upb's bare "Type was not found"; the checkers then say which type, and do not deny. */
#ifndef PO_TARGETS_ANY_TYPE_H_
#define PO_TARGETS_ANY_TYPE_H_

#include <json-c/json.h>

#include "po/engine.h"

/* The first "@type" string below `v` (depth-first, at most 64 levels) whose message (the part
 * after the URL's last '/') snapshot `api`'s schema (NULL: the default) does not have, or NULL
 * when each is known. Cost: one message lookup per @type. */
const char *po_AnyType_FirstUnknown(const po_EnvoyApi *api, const json_object *v, po_Arena *a);

#endif
