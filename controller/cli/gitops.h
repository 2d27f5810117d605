/* The GitOps side of the command (validate -f, render): manifests read from files, directories
 * and stdin, split into objects, checked with the webhook's own pipeline, and the findings
 * reported as text, JSON or GitHub workflow commands. Everything lives in one po_Arena. */
#ifndef PO_CLI_GITOPS_H_
#define PO_CLI_GITOPS_H_

#include <stdbool.h>
#include <stdio.h>

#include "po/engine.h"
#include "po/meshes/mesh.h"
#include "po/targets/override.h"
#include "po/targets/tenancy.h"

struct json_object;

/* ---- inputs (inputs.c) ---- */

typedef enum {
  kPo_ObjKind_Other = 0,
  kPo_ObjKind_PropertyOverride,   /* propertyoverride.io PropertyOverride */
  kPo_ObjKind_ServiceDefaults,    /* consul.hashicorp.com ServiceDefaults */
  kPo_ObjKind_ProxyDefaults,      /* consul.hashicorp.com ProxyDefaults */
  kPo_ObjKind_MeshNative,         /* a mesh's own object (an EnvoyFilter, an EnvoyPatchPolicy: written by
                              * hand, or rendered): po_CliObject.native says whose */
} po_ObjKind;

typedef struct {
  const char *file;         /* as given, or found under a given directory; "-" is stdin */
  size_t file_seq;          /* the file's place among those read: findings are printed in it */
  int doc;                  /* 1-based document index in the file */
  int item;                 /* index in a List's items, or -1 */
  po_Pos pos;               /* where the object starts (0 when unknown: JSON) */
  po_ObjKind kind;
  const struct po_MeshOps *native; /* kPo_ObjKind_MeshNative: its mesh (po_Mesh_ForNative) */
  const char *kind_name;    /* the object's kind as written ("" when none) */
  const po_Value *value;
} po_CliObject;

/* What an object is (its kind, the kind as written, and for a mesh's own object its mesh), as
 * the inputs are classified. */
po_ObjKind po_CliObject_Kind(const po_Value *v, const char **kind_name, const struct po_MeshOps **native);

typedef struct po_CliReport po_CliReport;

/* One object read; `a` (freed after the call) is for what checking it allocates. The object and
 * its value live only until the call returns. false stops the reading (out of memory). */
typedef bool (*po_CliObjectFn)(void *ctx, const po_CliObject *o, po_Arena *a);

typedef struct {
  po_CliObject *objects;
  size_t count, cap;
  size_t files;
  po_CliObjectFn fn;        /* set: objects go to fn as they are read (po_CliInputs_Each) */
  void *fn_ctx;
  po_StreamStats *stats;
} po_CliInputs;

/* Reads every path (a file, a directory walked recursively for *.yaml, *.yml and *.json in
 * byte order of their names, or "-" for stdin) into objects; List kinds become their items.
 * Links are followed, each directory walked once (by device and inode): a link back to an
 * enclosing directory is a loop. Every other entry of a directory (another name, hidden, not a
 * regular file, a dangling link, a directory walked already) is recorded as not read with why
 * (po_CliReport_NotRead), and the number of files read goes to report->files_read. Files that cannot be read or parsed, and loops, become
 * findings of `report` (code "input", counted unreadable), and what could be read is kept.
 * false only when out of memory. */
bool po_CliInputs_Load(po_CliInputs *in, const char *const *paths, size_t n, po_Arena *a, po_CliReport *report);
/* The same objects and input findings, handed to fn one at a time as they are read (the
 * engine's po_Value_StreamYaml/Json): memory is bounded by the largest object, not the input.
 * A file found unparsable, or a document the reader hands over again, has what fn added to the
 * report for it rolled back, so the report is what po_CliInputs_Load and checking give. fn must
 * only add to `report` (and copy out what it keeps). stats (optional) adds up the reader's. */
bool po_CliInputs_Each(const char *const *paths, size_t n, po_Arena *a, po_CliReport *report, po_CliObjectFn fn,
                       void *ctx, po_StreamStats *stats);

/* ---- findings (report.c) ---- */

typedef struct {
  bool warning;
  const char *file;
  size_t file_seq;          /* see po_CliObject */
  int doc, item;
  po_Pos pos;               /* of the patch when known, else of the object */
  const char *kind;         /* the object's kind, or NULL (input errors) */
  const char *ns, *name;    /* the object's; "" when absent */
  int extension;            /* spec.envoyExtensions index (Consul objects), or -1 */
  int patch;                /* patch index, or -1 */
  const char *path;         /* the patch's path, or NULL */
  const char *code;         /* "consul", "envoy-rule", "envoy-rule-if-resource", "envoy-rule-not-judged", "wire-format", "deprecated", "spec", "input" */
  const char *message;      /* Consul's text first where Consul has one; may span lines */
  const char *hint;         /* a did-you-mean, or NULL */
} po_CliFinding;

/* A directory entry the walk did not read, and why (not a regular file, not named as a
 * manifest, hidden, a directory walked already, a dangling link). */
typedef struct {
  const char *path;
  const char *why;
} po_CliNotRead;

struct po_CliReport {
  po_Arena *arena;
  po_CliFinding *items;
  size_t count, cap;
  size_t valid, invalid, skipped, unreadable;
  po_CliNotRead *not_read;  /* in the order met */
  size_t not_read_count, not_read_cap;
  size_t files_read;        /* files opened (or tried): 0 means nothing was validated */
  bool inputs_done;         /* files_read is final (po_CliInputs_Load/_Each returned) */
  /* validate: an exit of 0 needs some object checked (valid + invalid > 0), files read holding
   * only other kinds or nothing are "nothing validated" (exit 2); false with --allow-empty, and
   * for render and preview, whose inputs say so otherwise */
  bool need_checked;
  bool allow_empty;         /* validate --allow-empty: nothing read or checked is not an error */
  /* Which Envoy API snapshot judged the objects of each mesh (indexed by po_Mesh), recorded by
   * po_Cli_CheckObject: the release and snapshot, and how many objects. validate names them
   * (name_apis): a text line before the summary, a ::notice, a JSON member. */
  const po_MeshRelease *judged_release[kPo_MeshSlots];
  bool judged_assumed[kPo_MeshSlots]; /* the release was assumed, not named (po_Mesh_ReleaseAssumed) */
  const po_EnvoyApi *judged_api[kPo_MeshSlots];
  size_t judged[kPo_MeshSlots];
  bool name_apis;
  /* The summary line's words for the two counts (NULL: "valid", "invalid"): upgrade-check's
   * objects are "unaffected" or "breaking" */
  const char *valid_word, *invalid_word;
  /* upgrade-check: objects already refused under the release run now (validate says why), a count
   * of their own after the invalid one, named by invalid_before_word (NULL: no such count, none
   * printed); they exit 1 as invalid ones do */
  size_t invalid_before;
  const char *invalid_before_word;
  /* When files were read but nothing checked: why, in place of the "no PropertyOverride, ..."
   * sentence (upgrade-check: the objects it skipped as another mesh's); NULL: that sentence */
  const char *empty_why;
};

typedef enum { kPo_OutputFormat_Text = 0, kPo_OutputFormat_Json, kPo_OutputFormat_Github } po_OutputFormat;

void po_CliReport_Init(po_CliReport *r, po_Arena *a);
/* Appends a zeroed finding (extension, patch and item -1) to fill in; NULL when out of memory. */
po_CliFinding *po_CliReport_Add(po_CliReport *r, const po_CliObject *o);
/* Copies the strings of findings `from` .. count-1 that may live in another arena (message,
 * path, hint, kind, namespace, name) into the report's own, so the arena an object was checked in can be freed. false
 * when out of memory. */
bool po_CliReport_Own(po_CliReport *r, size_t from);
/* Records an entry not read (path and why are kept, not copied). false when out of memory. */
bool po_CliReport_NotRead(po_CliReport *r, const char *path, const char *why);
/* Every finding, in the order of the files read (unreadable ones in their place), then (text
 * and github) each entry not read ("PATH: not read: WHY"), then the summary line "N valid, M
 * invalid, K skipped" (with "; E entries not read" when there are some), and, when no file was
 * read at all, "nothing validated: ..." on a line of its own. Text and github print each
 * finding on one line, with what manifests control escaped (control characters, C1, non-UTF-8
 * bytes); Consul's field lists follow on lines of their own only when `verbose`. The caller
 * checks that `out` was written (po_Cli_Flush). False: out of memory building the JSON report
 * (json-c's), nothing printed; text and github allocate nothing and are always true. */
bool po_CliReport_Print(po_CliReport *r, po_OutputFormat format, bool verbose, FILE *out);
/* 0 all valid, 1 some invalid (or invalid_before), 2 some input unreadable or no file read at all (an empty
 * directory, or one holding only entries not read: a CI job must not pass having validated
 * nothing), or (need_checked) files read but no object of a kind validate checks in them;
 * allow_empty lifts both of the last two. */
int po_CliReport_ExitCode(const po_CliReport *r);
/* Text from an input (a name read from a dump) as the text report prints it: control
 * characters, C1, bytes that are not UTF-8 and GitHub's "##[" neutralised (report.c, "escaping");
 * s itself when nothing needs it, else a copy in `a`; NULL when out of memory. */
const char *po_Cli_Shown(const char *s, po_Arena *a);

/* ---- checks (check.c) ---- */

/* Checks one object as the webhook would, adding its findings and counting it (valid, invalid
 * or skipped). A PropertyOverride's compiled form goes to *compiled when not NULL (its
 * `accepted` tells whether it may be rendered). `opts`: the meshes' options (NULL: defaults; a
 * mesh whose release it does not name is judged at its default release, as the webhook judges it).
 * false only when out of memory. */
bool po_Cli_CheckObject(const po_CliObject *o, const po_TargetOptions *opts, po_Arena *a, po_CliReport *r,
                        po_CompiledOverride *compiled);
/* The mesh options flags of validate and render (--cluster-domain, --istio-version,
 * --istio-root-namespace, --mesh MESH[@RELEASE], --envoy-api VERSION), as getopt_long codes
 * kPo_CliOpt_ClusterDomain..; returns false with a message on stderr when the value is bad.
 * --mesh sets that mesh's release (repeatable, one per mesh; istio@1.N is --istio-version 1.N
 * too, and the two must agree), --envoy-api the snapshot every mesh is judged by; --istio-version
 * 1.N chooses Istio's release row too (a release the table does not list: the nearest listed). */
enum {
  kPo_CliOpt_ClusterDomain = 1000,
  kPo_CliOpt_IstioVersion,
  kPo_CliOpt_IstioRootNamespace,
  kPo_CliOpt_AllowCrossNamespaceFrom,
  kPo_CliOpt_Mesh,
  kPo_CliOpt_EnvoyApi,
};
/* `tenancy` takes --allow-cross-namespace-from (validate: the controller's flag of the same name,
 * so CI judges a platform team's targetRef.namespace as the cluster will; default nobody). */
bool po_Cli_TargetOption(int code, const char *value, const char *cmd, po_TargetOptions *opts, po_Tenancy *tenancy);
/* After the flags: every mesh none named gets its default release (po_Mesh_FillReleases). */
void po_Cli_TargetDefaults(po_TargetOptions *opts);

/* The one Envoy API snapshot of patch and explain (no targets): --envoy-api VERSION, else
 * --mesh MESH[@RELEASE]'s release's, else the default. */
typedef struct {
  const po_EnvoyApi *api;        /* --envoy-api, or NULL */
  const po_MeshOps *mesh;        /* --mesh, or NULL */
  const po_MeshRelease *release;
} po_CliApiChoice;
/* One of those two flags (kPo_CliOpt_Mesh, kPo_CliOpt_EnvoyApi) into *c; false with the reason on
 * stderr ("propertyoverride CMD: --mesh 'kuma': unknown mesh ..."). */
bool po_Cli_ApiOption(int code, const char *value, const char *cmd, po_CliApiChoice *c);
const po_EnvoyApi *po_CliApiChoice_Api(const po_CliApiChoice *c);
/* "v1.32.4, v1.37.0, v1.40.0": every embedded snapshot, into buf. */
const char *po_Cli_EnvoyApis(char *buf, size_t len);
/* `version`: each embedded snapshot on a line of its own, "  go-control-plane envoy v1.37.0:
 * istio@1.28, ..., envoy-gateway@1.9", the default and the newest marked. */
void po_Cli_PrintEnvoyApis(FILE *out);

/* ---- YAML output (yaml_emit.c) ---- */

/* Writes the objects as one YAML stream, a `---` document each, keys sorted. */
bool po_Cli_EmitYaml(struct json_object *const *objects, size_t n, FILE *out);
/* Whether a plain scalar of this text reads back as this string in every YAML 1.1 and 1.2 reader
 * (PyYAML, Go's yaml.v2 and yaml.v3 behind kubectl, the 1.2 core schema): false for "", y, n,
 * yes, on, off, true, null, ~, =, <<, .inf, .nan and anything shaped like a number or timestamp
 * in any of them (yaml_plain.c). The syntax (indicators, ": ", " #", spaces at the ends) is
 * libyaml's to judge. */
bool po_Cli_YamlPlainIsString(const char *s);

#endif
