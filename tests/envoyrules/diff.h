/* The differential test of Envoy's rules (issue 22): cases generated from the embedded schema,
 * our verdicts through the product's own entry points, Envoy's own validators as the oracle
 * (tests/oracles/envoy-validate). Shared by the files of tests/envoyrules. */
#ifndef PO_TESTS_ENVOYRULES_DIFF_H_
#define PO_TESTS_ENVOYRULES_DIFF_H_

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "po/engine.h"
#include "po/schema.h"
#include "po/targets/override.h"

/* One add patch on an empty resource: what every case is. */
typedef struct {
  const char *resource; /* Consul's resource type: cluster, cluster-load-assignment, route, listener */
  const char *path;     /* the patch's path */
  const char *value;    /* the patch's value, JSON text */
  const char *kind;     /* the rule it aims at ("uint32.lte", "oneof.required", "string.well_known.ip") */
  const char *form;     /* the path form ("direct", "deep", "wrapper-value", "duration-nanos", ...) */
  bool corpus;          /* replayed from the corpus file */
} po_DiffCase;

typedef struct {
  po_Arena *a;
  po_DiffCase *items;
  size_t len, cap;
  size_t *seen, seen_cap; /* a set of cases (index + 1), so that each is judged once */
} po_DiffCases;

/* Adds the case unless an equal one (resource, path, value, form) is there already; false only
 * when out of memory. */
bool po_DiffCases_Add(po_DiffCases *c, const char *resource, const char *path, const char *value, const char *kind,
                      const char *form);

/* JSON text of a string (UTF-8 kept, control characters escaped). */
const char *po_Diff_JsonString(po_Arena *a, const char *s, size_t len);

/* A seeded PRNG (splitmix64): the seed alone decides every random choice. */
typedef struct {
  uint64_t s;
} po_DiffRng;
uint64_t po_DiffRng_Next(po_DiffRng *r);
uint64_t po_DiffRng_Below(po_DiffRng *r, uint64_t n); /* in [0, n) */

/* ---- gen.c, gen_values.c: the generator ---- */

/* Every case the schema gives: each field with a rule that a Consul path reaches from the four
 * resource roots (each message once per resource, at the shortest path a breadth-first walk
 * finds), values on and around each of its boundaries through each path form its type allows,
 * and each message whose rules judge what a value leaves unset as `{}`, as a fuller object, and
 * as that object with one judged field left out. Then seeded random cases (a random field, form
 * and value near a random boundary) until there are `target` cases. false when out of memory. */
typedef struct {
  size_t messages;        /* messages the walk reached */
  const char **names;     /* their full names, each once (in the cases' arena) */
  size_t names_len;
  size_t ruled;           /* fields with a rule among theirs */
  size_t settable;        /* of which a patch can set (a scalar, enum, wrapper, Duration, Timestamp) */
  size_t systematic;      /* cases before the random ones */
} po_DiffGenStats;
bool po_DiffGen_All(po_DiffCases *out, size_t target, po_DiffRng *rng, po_DiffGenStats *stats);

/* ---- snapshot.c: the embedded snapshot a run judges with ---- */

/* Chooses the embedded snapshot `version` ("v1.37.0"; NULL: the default) for everything below;
 * false with a message on stderr when it is not embedded or does not load. The drivers call it
 * first; until then every function takes the default. */
bool po_DiffSnapshot_Use(const char *version);
const po_EnvoyApi *po_DiffSnapshot_Api(void);
const po_Schema *po_DiffSnapshot_Schema(void);
const char *po_DiffSnapshot_Version(void);   /* "v1.37.0" */
/* Every mesh's targets judged with the run's snapshot: through the newest release its table
 * judges with it (as `--mesh MESH@RELEASE` chooses), else by naming it (`--envoy-api VERSION`). */
void po_DiffSnapshot_TargetOptions(po_TargetOptions *o);
/* The newest release of `mesh` its table judges with the run's snapshot, or NULL. */
const po_MeshRelease *po_DiffSnapshot_Release(po_Mesh mesh);
/* How `mesh` is judged with it, for the output: "Istio 1.31", or the snapshot named directly. */
const char *po_DiffSnapshot_Judged(po_Mesh mesh, po_Arena *a);

/* ---- corpus.c ---- */

/* The fixed corpus: one case a line, tab-separated `resource path value kind form`, `#` comments.
 * false with a message on stderr when the file cannot be read or a line is malformed. */
bool po_DiffCorpus_Load(const char *file, po_DiffCases *out);
/* A case as a corpus line (tabs and newlines in the value escaped by its JSON text already). */
void po_DiffCorpus_Write(FILE *f, const po_DiffCase *c);

/* ---- verdict.c: our verdicts through the product's entry points ---- */

enum {
  kPo_DiffPath_Args = 0,  /* validate --consul-arguments: Consul's Constructor, wire convention */
  kPo_DiffPath_HookSD,    /* the webhook, a ServiceDefaults holding those arguments */
  kPo_DiffPath_HookPO,    /* the webhook, a PropertyOverride with the patch */
  kPo_DiffPath_FileSD,    /* validate -f, the same ServiceDefaults */
  kPo_DiffPath_FilePO,    /* validate -f, the same PropertyOverride */
  kPo_DiffPath_HookMesh,  /* the webhook, the PropertyOverride of an Istio Service (or an Envoy Gateway
                          * Gateway) whose release is judged with the run's snapshot */
  kPo_DiffPath_FileMesh,  /* validate -f, that PropertyOverride */
  kPo_DiffPath_Count
};
const char *po_DiffPath_Name(int path);

typedef struct {
  /* The entry points taken: all, but the mesh target's when no Istio or Envoy Gateway release is
   * judged with the run's snapshot (po_DiffVerdict_Mesh). */
  bool used[kPo_DiffPath_Count];
  bool ok[kPo_DiffPath_Count];
  /* The mesh-target PropertyOverride is refused by its mesh's own rules alone (errors of kind
   * kPo_DiagKind_Target: what its object cannot express), not by Envoy's: not compared. */
  bool mesh_refused;
  const char *mesh_why; /* then its first error */
  const char *why;      /* the Constructor's first error, or the first path's that refused */
} po_DiffVerdict;

/* The mesh whose PropertyOverride the mesh paths take: Istio when a release of it is judged with
 * the run's snapshot, else Envoy Gateway when one of it is; false when neither is (the paths are
 * then not used). */
bool po_DiffVerdict_Mesh(po_Mesh *mesh);

/* Our verdict with the run's snapshot through every entry point (verdict.c). false only when out
 * of memory. Everything lives in `a`. */
bool po_DiffVerdict_Of(const po_DiffCase *c, po_Arena *a, po_DiffVerdict *out);

/* The webhook's verdict (po_Admission_Review) on a CREATE of `object` (JSON text) of group and
 * kind; *why gets the denial when it has none yet. false when the review could not be made. */
bool po_DiffVerdict_Webhook(const char *group, const char *kind, const char *object, po_Arena *a, bool *ok,
                           const char **why);
/* validate -f's verdict (po_Cli_CheckObject) on `object` as an object of po_ObjKind `kind`. */
bool po_DiffVerdict_File(int kind, const char *kind_name, const char *object, po_Arena *a, bool *ok);

/* The patch applied to an empty resource with Consul's PatchStruct (wire convention), as the
 * wire bytes Envoy would receive, base64; NULL with *why set when PatchStruct refuses it. */
const char *po_Diff_Apply(const po_DiffCase *c, po_Arena *a, const char **message_name, const char **why);

/* ---- oracle.c ---- */

typedef struct {
  const char *path;
  const char *reason;
} po_DiffViolation;

typedef struct {
  const char *error;    /* the oracle could not read the case */
  po_DiffViolation *v;
  size_t n;
} po_DiffJudgement;

/* Runs the oracle once over `n` lines of input (each a complete JSON case, no newline) and
 * reads its `n` answers. false with a message on stderr when it cannot be run or answers short. */
bool po_DiffOracle_Run(const char *oracle, const char *const *lines, size_t n, po_Arena *a,
                       po_DiffJudgement *out);
/* The same, each answer's line as it is (in `a`). */
bool po_DiffOracle_RunRaw(const char *oracle, const char *const *lines, size_t n, po_Arena *a, const char **out);

/* ---- version.c ---- */

/* Compares the oracle's schema (its `describe` answers) with ours on `messages` (full names),
 * printing what differs; returns how many differences set_aside.c does not explain (and entries
 * it has that explain nothing). */
size_t po_DiffVersion_Check(const char *oracle, const char *const *messages, size_t n, po_Arena *a);

/* What a case's patch answers for, among an oracle's violations of the patched resource: the
 * field the patch sets and everything in it, and the fields on its path (a wrapper whose
 * `value` it sets, a Duration whose `seconds` it sets). */
bool po_Diff_Affects(const char *patch_path, const char *violation_path);

/* ---- classify.c ---- */

/* "uint32.lte", "oneof.required", "message.required", "string.min_len": the rule type our
 * schema gives the violation's field and the constraint its reason names. */
const char *po_Diff_ViolationKind(const char *message_name, const po_DiffViolation *v, po_Arena *a);

#endif
