/* `propertyoverride upgrade-check`: what the fields a manifest sets become when its mesh moves
 * from one release to another (cmd_upgrade.c). The pieces, one concern a file:
 *   upgrade_schema.c  the two snapshots compared at one field: numbers, names, types,
 *                     deprecation, enum values (po_Explain of each snapshot, cached)
 *   upgrade_walk.c    the fields an object sets: a PropertyOverride's or a Consul entry's compiled
 *                     chains and add values, a native value's keys (through typed_config Anys)
 *   upgrade_native.c  EnvoyFilters and EnvoyPatchPolicies: their patches' messages, paths and
 *                     values, and the names their matches rely on
 *   upgrade_rules.c   Envoy's rules under both snapshots: what passes the old and fails the new
 * Everything lives in the arena of the object being checked. */
#ifndef PO_CLI_UPGRADE_H_
#define PO_CLI_UPGRADE_H_

#include <stdbool.h>

#include "gitops.h"
#include "po/engine.h"
#include "po/targets/mesh_ops.h"
#include "po/targets/release.h"

/* The kinds of finding, as `code` of a report entry. */
#define PO_UPG_REMOVED "removed"                     /* the field or message is not in the new API */
#define PO_UPG_RENAMED "renamed"                     /* its number has another name there */
#define PO_UPG_RETYPED "type-changed"                /* same name and number, another type */
#define PO_UPG_DEPRECATED "deprecated"               /* newly deprecated (a warning) */
#define PO_UPG_MOVED "moved-to-extension"            /* the mesh now generates an extension that holds it */
#define PO_UPG_RULE "rule-tightened"                 /* passes the old rules, fails the new */
#define PO_UPG_ENUM "enum-value-gone"                /* an enum value the patch sets is gone */
#define PO_UPG_NAME "resource-name-changed"          /* the mesh names the matched resource otherwise */
#define PO_UPG_INVALID_BEFORE "invalid-before"       /* refused under the release run now (validate's error) */

/* One side of the upgrade. */
typedef struct {
  const po_MeshOps *mesh;
  int minor;                 /* the mesh release 1.<minor> */
  const po_MeshRelease *row; /* the release's row of the mesh's table */
  const char *release;       /* "1.28" */
  const po_EnvoyApi *api;    /* the snapshot that release's proxies are judged by */
  bool name_scheme_flag;     /* --xds-name-scheme-v2 (the to side): the mesh's opt-in new names */
} po_UpgSide;

typedef struct po_UpgCache po_UpgCache;

/* What one object is being checked as, and where its findings go. */
typedef struct {
  const po_UpgSide *from, *to;
  po_UpgCache *cache;        /* explanations of both snapshots, for the run */
  const po_CliObject *obj;
  po_CliReport *report;
  po_Arena *a;               /* the object's arena */
  size_t before;             /* the report's count when the object began */
  int extension;             /* spec.envoyExtensions index (Consul objects), or -1 */
  int patch;                 /* the patch being walked, -1 when none */
  po_Pos pos;                /* where it is */
  bool oom;
} po_UpgCtx;

/* A finding of the current patch (error unless `warning`), its message formatted. false when out
 * of memory. */
bool po_Upg_Add(po_UpgCtx *c, const char *code, bool warning, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Whether the object has an error finding (breaks) since it began. */
bool po_Upg_Breaks(const po_UpgCtx *c);

/* ---- upgrade_schema.c ---- */
po_UpgCache *po_UpgCache_New(po_Arena *a);
/* The fields of message `full_name` in `api` (NULL: not in that snapshot). The cache's arena. */
const po_Explanation *po_UpgCache_Message(po_UpgCache *cache, const po_EnvoyApi *api, const char *full_name);
/* A field of an explanation by proto or JSON name, or NULL. */
const po_ExplainField *po_Upg_Field(const po_Explanation *e, const char *name);
/* The field `name` of `message` as both snapshots have it: each finding it makes (removed, the
 * message gone, renamed, type-changed, deprecated) added at `path`. *next_from gets the field
 * under the old snapshot (NULL when it had none: not judged further). Returns false when the field
 * does not carry on into the new API the same way (removed, renamed, retyped): the walk stops there. */
bool po_Upg_CompareField(po_UpgCtx *c, const char *message, const char *name, const char *path,
                         const po_ExplainField **next_from);
/* The same on the two snapshots' explanations of `message` (ef: the old, et: the new, NULL when
 * it lacks the message): the comparison itself, apart from where explanations come from. */
bool po_Upg_CompareExplained(po_UpgCtx *c, const char *message, const po_Explanation *ef, const po_Explanation *et,
                             const char *name, const char *path, const po_ExplainField **next_from);
/* An enum value name set on field f (of the old snapshot) that the new snapshot's enum lacks; _In
 * with the new snapshot's field t given (NULL: none). */
bool po_Upg_CompareEnum(po_UpgCtx *c, const po_ExplainField *f, const char *value, const char *path);
bool po_Upg_CompareEnumIn(po_UpgCtx *c, const po_ExplainField *f, const po_ExplainField *t, const char *value,
                          const char *path);
/* The message type a field holds ("envoy.config.core.v3.Address"; a map's value type), or NULL. */
const char *po_Upg_FieldMessage(const po_ExplainField *f, po_Arena *a);

/* ---- upgrade_walk.c ---- */
/* Every key of `v` (a protojson object of `message`, proto or JSON names) compared, down into
 * messages, list items, map values and Anys (`@type`). `path` names v for messages ("value",
 * "/a/b"). false when out of memory. */
bool po_Upg_WalkValue(po_UpgCtx *c, const char *message, const po_Value *v, const char *path);
/* A value of message `type` (an Any: the message its @type names; a google.protobuf type: not
 * descended), and a value of field f (its enum values; its message, list items or map values). */
bool po_Upg_WalkMessage(po_UpgCtx *c, const char *type, const po_Value *x, const char *path);
bool po_Upg_WalkField(po_UpgCtx *c, const po_ExplainField *f, const po_Value *x, const char *path);
/* A PropertyOverride or a Consul envoyExtensions entry compiled under the old snapshot: each
 * patch's chain from its resource, the mesh's facts about it, and what its add value sets.
 * `patches` (the list as written) locates each. */
bool po_Upg_CheckOverride(po_UpgCtx *c, const po_Override *from, const po_Value *patches);

/* ---- upgrade_native.c ---- */
/* An EnvoyFilter's or EnvoyPatchPolicy's patches. false when out of memory. */
bool po_Upg_CheckNative(po_UpgCtx *c);
/* The mesh's facts about a resource a patch matches by name or by type (name schemes, generated
 * extensions): `resource` its type, `name` the name it matches (NULL: every one), `fields` the
 * chain's first field (NULL: none). */
bool po_Upg_MeshFacts(po_UpgCtx *c, po_ResourceType resource, const char *name, const char *first_field,
                      bool by_override, const char *path);

/* ---- upgrade_rules.c ---- */
/* Envoy's rules on a native value of `message` under both snapshots (each Any's contents judged
 * as its own message): each violation only the new snapshot finds. */
bool po_Upg_CompareValueRules(po_UpgCtx *c, const char *message, const po_Value *v, po_ValueScope scope,
                              const char *path);
/* The rule errors of a patch compiled under both: those only the new compile has. */
/* An EnvoyPatchPolicy value at JSON Patch path `ptr` of `message`: judged where it lands (the
 * path's parents as a scaffold, not judged themselves), under both snapshots. */
bool po_Upg_ComparePointerRules(po_UpgCtx *c, const char *message, const char *ptr, const po_Value *v);
bool po_Upg_CompareCompiledRules(po_UpgCtx *c, const po_Diagnostics *from, const po_Diagnostics *to, const po_Value *patches);

#endif
