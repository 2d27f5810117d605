/* Our side of one Envoy Gateway oracle case: a PropertyOverride compiled and checked as the
 * webhook does, rendered into an EnvoyPatchPolicy as the controller does, and applied with
 * Consul's meaning (the engine's PatchStruct) to the resources Envoy Gateway generates. */
#ifndef PO_TESTS_EGPATCH_OURS_H
#define PO_TESTS_EGPATCH_OURS_H

#include <stdio.h>

#include <json-c/json.h>

#include "po/engine.h"
#include "po/targets/release.h"

/* The generated world: a Gateway, its HTTPRoute, and the xDS resources Envoy Gateway makes of
 * them (fixtures/). */
typedef struct {
  struct json_object *gateway, *route;
  struct json_object *resources; /* [{type, resourceType, json}] */
} po_EgWorld;

/* The Envoy Gateway release the eg-patch oracle runs (v1.9.1: its line, "1.9", in Envoy Gateway's
 * release table), whose snapshot judges, generates and applies every case (issue 24). */
const po_MeshRelease *po_EgOracle_Release(void);
const po_EnvoyApi *po_EgOracle_Api(void);

/* Runs one case. Writes its oracle line (when we rendered) to `cases` and its record to `meta`
 * (one JSON line each; what the tally reads). false only when out of memory. */
bool po_EgCase_Run(const po_EgWorld *w, const char *id, struct json_object *patches, FILE *cases, FILE *meta,
                   po_Arena *a);

/* Which issue-23 class a patch belongs to, from the schema alone (tags.c): "A" a wrapper given
 * an object, "B" renaming the resource, "C2" one object setting two members of one oneof, "D"
 * an Any in Consul's type_url form, "C1" a path through a oneof member; added to `tags`. */
void po_EgTags_Add(struct json_object *patch, struct json_object *tags, po_Arena *a);

#endif
