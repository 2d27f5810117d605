/* What Envoy Gateway generates where a patch of an EnvoyPatchPolicy can meet it: the member of
 * each oneof it sets in the resources a PropertyOverride reaches (private to controller/targets;
 * the table and its reading are eg_generated.c).
 *
 * Why: Consul's add of a oneof member clears the oneof's other members; Envoy Gateway's JSON
 * Patch adds the member beside them, and protojson then refuses the patched resource (the policy
 * becomes Invalid, none of its patches applied). Whether that happens is a fact of what Envoy
 * Gateway generated (and of what this PropertyOverride's earlier patches set), so it is decided
 * from a table of Envoy Gateway's own output, not warned for every oneof (issue 23 C1). */
#ifndef PO_TARGETS_EG_GENERATED_H_
#define PO_TARGETS_EG_GENERATED_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/targets/override.h"

typedef struct {
  const char *text;     /* NULL: nothing to say */
  po_Severity severity; /* an error refuses the patch; a warning says when it would fail */
} po_EGOneof;

/* The verdict on the oneof members patch i's path sets (c->override compiled; the patch not
 * otherwise refused), against the member Envoy Gateway v1.9.1 generates and the members earlier
 * patches of c set on resources patch i can reach. False only when out of memory. */
bool po_EG_OneofCheck(const po_CompiledOverride *c, size_t i, po_Arena *a, po_EGOneof *out);

/* The member of `oneof` Envoy Gateway v1.9.1 generates in the message at `parent` (proto field
 * names from the resource, "a/b"; "" the resource) of resources of type rt, or NULL; *always
 * (when not NULL): in every such resource, not only the clusters of Service backends. Static. */
const char *po_EG_GeneratedMember(po_ResourceType rt, const char *parent, const char *oneof, bool *always);

/* Whether some resource patch i reaches, patch j reaches too (their resource types and
 * directions are the caller's to compare). */
bool po_EG_Meets(const po_CompiledOverride *c, size_t j, size_t i);


#endif /* PO_TARGETS_EG_GENERATED_H_ */
