/* propertyoverride engine: HashiCorp Consul's builtin/property-override semantics in C.
 *
 * Consul's extension API (its Go types, docs/consul-semantics.md) maps to:
 *   Patch, ResourceFilter, ServiceName    po_Patch, po_ResourceFilter, po_ServiceName
 *   Op, Ops                               po_Op, po_Ops_Contains()
 *   ResourceType, ResourceTypes           po_ResourceType, po_ResourceTypes_Contains()
 *   TrafficDirection                      po_TrafficDirection
 *   PatchStruct                           po_PatchStruct()
 *   Constructor                           po_Constructor()
 * and beyond the seed: a compiled form (po_Override) applied to many resources, decoding of the
 * PropertyOverride custom resource spec, and diagnostics as data (po_Diagnostics).
 *
 * Memory: everything is allocated in a po_Arena given by the caller and lives until that arena
 * is freed; nothing is freed one object at a time. Errors go into caller-owned po_Status or
 * po_Diagnostics. The engine never logs, never exits and knows nothing of Kubernetes or threads;
 * every call is safe from many threads as long as each uses its own arena.
 * This header exposes no upb type: callers outside the engine see only po_ types. */
#ifndef PO_ENGINE_H_
#define PO_ENGINE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/status.h"

struct json_object;

/* ---- arena --------------------------------------------------------------------------------- */

typedef struct po_Arena po_Arena;
po_Arena *po_Arena_New(void);
/* For one input of many megabytes (preview's config dump): blocks of 2 MB and more are mapped
 * with transparent huge pages, so touching them costs a fault per 2 MB, not per 4 KB. */
po_Arena *po_Arena_NewLarge(void);
void po_Arena_Free(po_Arena *a);
/* Frees the scratch arena `a` of a call made with `into`: memory that ran out in `a` is noted in
 * `into` (po_Engine_OutOfMemory(into) then tells it). `into` NULL: po_Arena_Free. */
void po_Arena_FreeInto(po_Arena *a, po_Arena *into);
/* Arenas made one after another for long-lived objects of one kind (the controller's compiled
 * PropertyOverrides, one arena each, kept as long as the object): upb's blocks double (256 B,
 * 512 B, 1 KB, 2 KB, ...) and what is left in a block a request does not fit is never used, so
 * such an arena holds up to twice what it uses. po_Arena_NewFitted starts with one block of the
 * size the previous arenas of the kind needed (po_ArenaFit_Learn once the arena is filled: a
 * moving average of their needs), so a kind of similar objects costs about what it uses; an
 * object larger than the fit grows its arena from 256-byte blocks, by about what it needs more.
 * A po_ArenaFit is zero-initialised (first block 1 KB) and may be shared by threads. */
typedef struct {
  size_t first; /* read and written atomically */
} po_ArenaFit;
po_Arena *po_Arena_NewFitted(po_ArenaFit *fit);
void po_ArenaFit_Learn(po_ArenaFit *fit, po_Arena *a);
/* Bytes an arena took from malloc (its blocks; 0 for an arena not made by po_Arena_NewFitted). */
size_t po_Arena_Footprint(const po_Arena *a);
void *po_Arena_Malloc(po_Arena *a, size_t size); /* zeroed; NULL when out of memory */
/* An arena array of `count` items of `size` bytes in `cap` slots, with room for one more: `items`
 * itself while count < *cap, else a copy in twice the slots (`first` for an empty array) with
 * *cap updated (the old block stays in the arena: at most twice the final size in all). NULL
 * when out of memory (*cap unchanged). The one doubling of the arena arrays (diagnostics, values'
 * lists and maps, the CLI's findings). */
void *po_Arena_Grow(po_Arena *a, void *items, size_t count, size_t *cap, size_t size, size_t first);
char *po_Arena_Strndup(po_Arena *a, const char *s, size_t len);
char *po_Arena_Printf(po_Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text grown in an arena by doubling (each byte copied O(1) times on average; the blocks it
 * outgrew stay in the arena: at most twice the final size). Zero-initialise with the arena set,
 * e.g. `po_TextBuf t = {.a = arena};`. Once an allocation fails `oom` is set and later appends do
 * nothing; `buf` is NUL-terminated whenever it is not NULL. */
typedef struct {
  po_Arena *a;
  char *buf;
  size_t len, cap;
  size_t initial; /* the first block's size; 0: 256 */
  bool oom;
} po_TextBuf;
void po_TextBuf_Put(po_TextBuf *t, const char *s, size_t n);
void po_TextBuf_Puts(po_TextBuf *t, const char *s);

/* ---- the Envoy API snapshot a call judges with ---------------------------------------------
 * proto/ embeds several snapshots of the Envoy v3 API (go-control-plane's `envoy` Go module, one
 * per module version the supported mesh releases pin). Everything that looks the schema up is
 * told which: po_CompileOptions.api, a first parameter `const po_EnvoyApi *api` (NULL: the
 * default), or the object it works on (a compiled override records its snapshot, and applying it
 * uses that one; a po_Message is of the snapshot it was decoded with). There is no "current"
 * snapshot, global or per thread. */
typedef struct po_EnvoyApi po_EnvoyApi;   /* one embedded snapshot: static, never freed */
size_t po_EnvoyApi_Count(void);
const po_EnvoyApi *po_EnvoyApi_At(size_t i);               /* oldest first; NULL past the end */
const po_EnvoyApi *po_EnvoyApi_Find(const char *version);  /* "v1.37.0" or "1.37.0"; NULL: not embedded */
const po_EnvoyApi *po_EnvoyApi_Default(void);              /* v1.32.4 (Consul's): when nothing names one */
const po_EnvoyApi *po_EnvoyApi_Newest(void);
const char *po_EnvoyApi_Version(const po_EnvoyApi *api);   /* "v1.37.0"; NULL is the default's */
const char *po_EnvoyApi_Name(const po_EnvoyApi *api);      /* "go-control-plane envoy v1.37.0"; likewise */
/* The snapshot judging a proxy that runs Envoy major.minor: the oldest embedded one at least
 * that new (module version vX.Y.Z is Envoy X.Y's API), else the newest. */
const po_EnvoyApi *po_EnvoyApi_ForEnvoy(int major, int minor);

/* ---- values: JSON/YAML trees with Go's typing (docs/consul-semantics.md 3.6) ----------------------- */

typedef enum {
  kPo_ValueKind_Null = 0,
  kPo_ValueKind_Bool,
  kPo_ValueKind_Int,    /* an integer literal: Go `int` */
  kPo_ValueKind_Float,  /* any other number: Go `float64` */
  kPo_ValueKind_String,
  kPo_ValueKind_Map,    /* keys in document order */
  kPo_ValueKind_List,
} po_ValueKind;

typedef struct po_Value po_Value;

typedef struct {
  int line;   /* 1-based; 0 when unknown */
  int column; /* 1-based; 0 when unknown */
} po_Pos;

po_ValueKind po_Value_Kind(const po_Value *v); /* NULL is kPo_ValueKind_Null */
bool po_Value_Bool(const po_Value *v);
int64_t po_Value_Int(const po_Value *v);
double po_Value_Float(const po_Value *v); /* ints too */
const char *po_Value_String(const po_Value *v, size_t *len);
size_t po_Value_Size(const po_Value *v); /* map entries or list elements */
const po_Value *po_Value_At(const po_Value *v, size_t i);
const char *po_Value_KeyAt(const po_Value *v, size_t i);
const po_Value *po_Value_Get(const po_Value *v, const char *key); /* exact key */
po_Pos po_Value_Pos(const po_Value *v);
/* Go's %T of the value as Consul's PatchStruct sees it: "int", "float64", "string", "bool",
 * "map[string]interface {}", "[]int", "[]float64", "[]string", "[]bool", "[]interface {}". */
const char *po_Value_GoType(const po_Value *v);

po_Value *po_Value_NewNull(po_Arena *a);
po_Value *po_Value_NewBool(po_Arena *a, bool b);
po_Value *po_Value_NewInt(po_Arena *a, int64_t i);
po_Value *po_Value_NewFloat(po_Arena *a, double d);
po_Value *po_Value_NewString(po_Arena *a, const char *s, size_t len);
po_Value *po_Value_NewMap(po_Arena *a);
po_Value *po_Value_NewList(po_Arena *a);
bool po_Value_MapPut(po_Arena *a, po_Value *map, const char *key, po_Value *v);
bool po_Value_ListAppend(po_Arena *a, po_Value *list, po_Value *v);
void po_Value_SetPos(po_Value *v, po_Pos pos);
/* A deep copy of v in a: every node, string, key and literal text, so that it outlives the arena v
 * was made in; the same value for every reader (kind, list typing, positions). NULL for NULL, or
 * when out of memory. Linear in v's size. */
po_Value *po_Value_Copy(const po_Value *v, po_Arena *a);

/* JSON text -> value (strict JSON, nested at most 64 deep). Errors name line and column. */
po_Value *po_Value_ParseJson(const char *text, size_t len, po_Arena *a, po_Status *status);
/* The value as indented JSON: two spaces a level, object keys sorted by byte order, floats at
 * their shortest round-trip form; NUL-terminated, in the arena; NULL when out of memory. */
char *po_Value_ToPrettyJson(const po_Value *v, po_Arena *a);
/* The RFC 6901 pointer ("" for the root, "/a/0/b" below it) of the value that starts on `line`
 * (1-based) of po_Value_ToPrettyJson(v)'s text, or of the container a closing line ends: what
 * an error position in that text ("@3:17", from a decoder reading it) is about. NULL when the
 * line is outside the text or out of memory. */
const char *po_Value_PrettyJsonPointerAt(const po_Value *v, int line, po_Arena *a);
/* YAML stream -> one value per document, read as kubectl reads manifests: cut into documents at
 * lines beginning with "---" (only a comment may follow; else an error), each piece's first
 * document only, a piece without one a null value (kubectl converts YAML to
 * JSON with sigs.k8s.io/yaml, go-yaml v2 rules): yes/no/on/off/y/n are bools, 0x/0o/0b/leading-0
 * integers, '_' in numbers dropped, merge keys (<<), the last of duplicate keys wins, keys that
 * resolve to other scalars printed back (y: -> "true"), whole floats become ints as after the
 * JSON round trip, .inf/.nan and null keys are errors (kubectl refuses them too). Errors name
 * line and column. tests/vectors/yaml is the kubectl-oracle corpus. */
bool po_Value_ParseYaml(const char *text, size_t len, po_Arena *a, po_Value ***docs,
                        size_t *count, po_Status *status);
po_Value *po_Value_FromJsonC(const struct json_object *j, po_Arena *a, po_Status *status);
struct json_object *po_Value_ToJsonC(const po_Value *v); /* new reference; NULL on no memory */
/* Compact JSON text of the value, in the arena. */
char *po_Value_ToJson(const po_Value *v, po_Arena *a);

/* ---- values one object at a time: big List files in bounded memory -------------------------
 * po_Value_StreamYaml/Json read what po_Value_ParseYaml/Json read, with the same results, errors
 * and positions, but hand the caller one object at a time: each document, or, for a document
 * whose top-level `items` is a list and which `is_list` says is a list kind, each of its items.
 * An item is parsed into an arena of its own, freed after `object` returns, so memory is bounded
 * by the largest item (plus the document's other keys), not by the file.
 * Items are handed over as they are read, before the rest of the document is known. When the
 * rest changes what they were (a later `items` or `<<` key, `is_list` false once every key is
 * known, an alias to an anchor inside an earlier item, whose value is gone), the reader calls
 * `retract` for the document and hands it over again from a whole parse of that document: the
 * caller forgets what it did with that document's objects. A parse error stops the stream with
 * the status set (objects handed over before it stay handed over). YAML's bound on expanded
 * nodes (1,000,000) holds for each streamed item and for the rest of its document, and for what
 * the items' aliases expand to over the whole document; the nodes items hold themselves are not
 * added up (the caller never holds more than one item). */
typedef struct {
  int doc;               /* 1-based document index in the stream */
  long item;             /* index in the document's `items`, or -1 for a whole document */
  const po_Value *value; /* valid until `object` returns; kPo_ValueKind_Null for an empty document */
} po_StreamObject;

typedef struct {
  size_t objects;        /* calls of `object` */
  size_t retracted;      /* documents handed over again */
  size_t peak_bytes;     /* most bytes the reader's arenas held at once (a deterministic proxy for
                          * its memory: block sizes, not malloc's overhead) */
} po_StreamStats;

typedef struct {
  void *ctx;
  /* Whether a document is a list whose items go one at a time. `head` is the document's
   * top-level map, without `items` when items are being streamed. */
  bool (*is_list)(void *ctx, const po_Value *head);
  /* One object. `a` is an arena the callback may allocate in; it and the object's value are freed
   * when the call returns. false stops the stream (the status says "stopped by the caller"
   * unless the callback set its own in *st). */
  bool (*object)(void *ctx, const po_StreamObject *o, po_Arena *a, po_Status *st);
  /* Everything `object` got for document `doc` is withdrawn; it comes again. false stops. */
  bool (*retract)(void *ctx, int doc);
  po_StreamStats *stats; /* optional, filled as the stream goes */
} po_ValueStream;

bool po_Value_StreamYaml(const char *text, size_t len, const po_ValueStream *s, po_Status *status);
bool po_Value_StreamJson(const char *text, size_t len, const po_ValueStream *s, po_Status *status);

/* ---- the model of the seed ---------------------------------------------------------------- */

typedef enum { kPo_Op_Unknown = 0, kPo_Op_Add, kPo_Op_Remove } po_Op;
typedef enum {
  kPo_ResourceType_Unknown = 0,
  kPo_ResourceType_Cluster,
  kPo_ResourceType_ClusterLoadAssignment,
  kPo_ResourceType_Route,
  kPo_ResourceType_Listener,
} po_ResourceType;
typedef enum {
  kPo_TrafficDirection_Unknown = 0,
  kPo_TrafficDirection_Inbound,
  kPo_TrafficDirection_Outbound,
} po_TrafficDirection;

bool po_Ops_Contains(const char *op);
bool po_ResourceTypes_Contains(const char *resource_type);
po_Op po_Op_Parse(const char *s);
po_ResourceType po_ResourceType_Parse(const char *s);
po_TrafficDirection po_TrafficDirection_Parse(const char *s);
/* The Envoy message a resource type names, e.g. "envoy.config.cluster.v3.Cluster". */
const char *po_ResourceType_Message(po_ResourceType t);

typedef struct {
  const char *name;      /* "" when absent */
  const char *namespace_; /* "" when absent; Constructor normalises "" to "default" */
  const char *partition;  /* likewise */
} po_ServiceName;

typedef struct {
  bool present;                 /* false: no ResourceFilter key, or an empty one */
  const char *resource_type;    /* as written; "" when absent */
  const char *traffic_direction;
  po_ServiceName *services;
  size_t service_count;
} po_ResourceFilter;

typedef struct {
  po_ResourceFilter resource_filter;
  const char *op;               /* as written; "" when absent */
  const char *path;
  const po_Value *value;        /* NULL when absent (Go nil) */
  po_Pos pos;                   /* where the patch starts in its source, when known */
} po_Patch;

/* The decoded `arguments` of a builtin/property-override extension (Consul's propertyOverride). */
typedef struct {
  po_Patch *patches;
  size_t patch_count;
  bool debug;
  const char *proxy_type;       /* "" when absent; Constructor sets "connect-proxy" */
} po_Arguments;

/* ---- diagnostics ---------------------------------------------------------------------------- */

typedef enum { kPo_Severity_Error = 0, kPo_Severity_Warning } po_Severity;

typedef enum {
  kPo_DiagKind_Consul = 0,    /* an error Consul itself reports; `message` is Consul's exact text. As a
                          * warning: what Consul does silently (truncating 50.5 to 50) */
  kPo_DiagKind_EnvoyRule,     /* a protoc-gen-validate rule of Envoy's that a value violates */
  kPo_DiagKind_WireFormat,    /* Consul would reject what we would write (ARCHITECTURE.md section 7) */
  kPo_DiagKind_Deprecated,    /* warning: a field Envoy marks deprecated */
  kPo_DiagKind_Decode,        /* the arguments could not be decoded */
  kPo_DiagKind_WireArray,     /* Consul would reject what we would write because its API delivers every
                          * JSON array as []interface {}, which no repeated field accepts */
  kPo_DiagKind_Target,        /* the target mesh's patch object cannot express the patch (with Consul's
                          * meaning): added by the target adapters, never by the engine */
  kPo_DiagKind_EnvoyRuleIfResource, /* warning: a rule of Envoy's the patch breaks on some resources only,
                          * which no compile can know: a parent it creates when the resource lacks
                          * it, a Duration part a remove leaves at zero. Left to preview
                          * (po_Override_ApplyChecked), which judges the resource */
  kPo_DiagKind_EnvoyRuleNotJudged, /* warning: a rule kind of Envoy's that the engine does not judge
                          * (pgv.c names them) on a field the value sets or leaves at its default */
} po_DiagKind;

/* For the wire-format kinds: why Consul would refuse ("Consul's API delivers every JSON array
 * as []interface {}, which no repeated field accepts"; "as Consul will decode the arguments
 * written to it"). NULL for the other kinds. Static. */
const char *po_DiagKind_Reason(po_DiagKind kind);

typedef struct {
  po_Severity severity;
  po_DiagKind kind;
  int patch_index;       /* -1 when not about one patch */
  const char *path;      /* the patch's path, or NULL */
  const char *message;   /* Consul's exact text for kPo_DiagKind_Consul; ours otherwise */
  const char *hint;      /* a did-you-mean suggestion, or NULL */
  po_Pos pos;            /* source position of the patch, when known */
} po_Diagnostic;

typedef struct po_Diagnostics po_Diagnostics;
po_Diagnostics *po_Diagnostics_New(po_Arena *a);
size_t po_Diagnostics_Count(const po_Diagnostics *d);
size_t po_Diagnostics_ErrorCount(const po_Diagnostics *d);
const po_Diagnostic *po_Diagnostics_At(const po_Diagnostics *d, size_t i);
/* Appends one (callers add their own findings beside the engine's); the returned entry may be
 * amended (hint, pos) until the next call. NULL when out of memory. */
po_Diagnostic *po_Diagnostics_Add(po_Diagnostics *d, po_Severity severity, po_DiagKind kind,
                                  int patch_index, const char *path, const char *message);
/* The error text exactly as Consul formats it (go-multierror's list format over the errors of
 * kind kPo_DiagKind_Consul), unchanged and first, so it is always a prefix of the whole; when
 * `extras` is set, followed by a block of our further errors (Envoy's rules, ...) in the same
 * list format headed "1 more error, beyond Consul's checks:" / "<n> more errors, beyond
 * Consul's checks:", then by "hint: Patches[i]: ..." lines. NULL when there is no error. */
const char *po_Diagnostics_ConsulText(const po_Diagnostics *d, bool extras, po_Arena *a);
/* Everything, for a report: po_Diagnostics_ConsulText(extras), with a block of warnings
 * ("1 warning:" / "<n> warnings:", entries "Patches[i]: ...") between the further errors and
 * the hints. NULL when there is nothing to say (no error, no warning). */
const char *po_Diagnostics_Text(const po_Diagnostics *d, po_Arena *a);

/* ---- decoding ------------------------------------------------------------------------------- */

typedef enum {
  /* Values as Consul's tests and our CLI give them: integer literals are Go int, arrays are
   * typed by their elements ([]int, []string, ...). */
  kPo_Convention_Typed = 0,
  /* Values as Consul's HTTP API really delivers them (encoding/json into interface{}): every
   * number float64, every array []interface {}. What the Consul target adapter validates with. */
  kPo_Convention_Wire,
} po_Convention;

/* Consul's mapstructure decoding of an envoyExtensions `arguments` object: keys match
 * case-insensitively, unknown keys are ignored, weak typing (a single object where a list is
 * expected is a list of one; a one-element list where a single value is expected is unwrapped;
 * numbers, bools and strings convert as mapstructure's WeaklyTypedInput does). On failure,
 * status gets Consul's text ("error decoding extension arguments: ..."). */
bool po_Arguments_Decode(const po_Value *arguments, po_Arena *a, po_Arguments *out,
                         po_Status *status);
/* The PropertyOverride custom resource's spec (camelCase keys: patches, resourceFilter,
 * resourceType, trafficDirection, services, op, path, value, proxyType, debug). Unknown keys are
 * errors here (the CRD is structural), reported in `diags` with their path in the spec. */
bool po_Arguments_DecodeSpec(const po_Value *spec, po_Arena *a, po_Arguments *out,
                             po_Diagnostics *diags);
/* Copies into a every string and value that args (decoded by po_Arguments_DecodeSpec into a)
 * references in the tree it was decoded from, so that tree may live in a scratch arena freed after
 * the decode: a compiled override kept for long then holds its patches' values, not the whole
 * spec's tree. false when out of memory. */
bool po_Arguments_Adopt(po_Arguments *args, po_Arena *a);
/* Friendly values (beyond Consul), rewritten in place into the forms PatchStruct accepts, by the
 * type of the field each patch's path names: a Duration from a string ("5s", "1.5s", "250ms",
 * "1h30m") becomes {"seconds": N, "nanos": M}; an enum given by number becomes its name (Consul's
 * wire format delivers numbers as float64, which enums refuse). Inside object values, each child
 * is rewritten by its own field. Paths that do not resolve are left for validation to report.
 * false when out of memory: then a patch may keep its value as written, never a part of a
 * rewrite (a Duration without its nanos, a list without an element). */
bool po_Arguments_Friendly(const po_EnvoyApi *api, po_Arguments *args, po_Arena *a);
/* The `arguments` object Consul's decoder accepts for these arguments (PascalCase keys); NULL when
 * out of memory (never arguments with a field left out). */
po_Value *po_Arguments_ToConsul(const po_Arguments *args, po_Arena *a);

/* ---- validation and compilation ------------------------------------------------------------- */

typedef struct po_Override po_Override;

/* A mesh release and the snapshot judging it (istio, 1.28, go-control-plane envoy v1.37.0), as
 * the mesh's release table says: what an unknown field's hint names as accepting a field the
 * judging snapshot lacks but another has. */
typedef struct {
  const char *mesh, *release;
  const po_EnvoyApi *api;
} po_ApiRelease;
typedef struct {
  const char *mesh;          /* whose releases these are ("istio"); NULL: every mesh's */
  const po_ApiRelease *rows; /* oldest first */
  size_t count;
} po_ApiReleases;

typedef struct {
  po_Convention convention;
  bool envoy_rules;       /* check Envoy's protoc-gen-validate rules on the values set */
  bool deprecations;      /* warn on fields Envoy marks deprecated */
  bool hints;             /* did-you-mean suggestions for unknown field names */
  /* Also report, as errors of kind kPo_DiagKind_WireArray / kPo_DiagKind_WireFormat, each patch the
   * typed convention accepts but Consul's wire typing would refuse (message: Consul's text,
   * then po_DiagKind_Reason in parentheses). Both verdicts are computed either way. */
  bool check_wire;
  /* The Envoy API the paths resolve in and the values and rules are judged by; NULL: the
   * default (po_EnvoyApi_Default). The override keeps it (po_Override_Api). */
  const po_EnvoyApi *api;
  /* What the snapshot stands for, for messages ("consul@1.22": the mesh release built on it);
   * NULL: nothing said. An unknown field another embedded snapshot has is said to be missing
   * from "the Envoy API judging consul@1.22". */
  const char *judged_for;
  /* The releases that hint names as accepting such a field ("istio@1.28 and istio@1.29 accept
   * it"), or says none of them does; NULL: it names no release. Borrowed. */
  const po_ApiReleases *releases;
} po_CompileOptions;

/* Defaults: typed convention, envoy_rules, deprecations and hints on, check_wire off, the
 * default snapshot. */
po_CompileOptions po_CompileOptions_Default(void);

/* Consul's Constructor: checks the extension name ("builtin/property-override"), decodes the
 * arguments and validates every rule (each patch dry-run on an empty resource of its type),
 * aggregating every error into `diags`. Returns the compiled override, or NULL when any error
 * was found. `name` NULL means the default name. */
po_Override *po_Constructor(const char *name, const po_Value *arguments,
                            const po_CompileOptions *opts, po_Arena *a, po_Diagnostics *diags);
/* The same validation on already-decoded arguments. */
po_Override *po_Override_Compile(const po_Arguments *args, const po_CompileOptions *opts,
                                 po_Arena *a, po_Diagnostics *diags);
size_t po_Override_PatchCount(const po_Override *o);
/* The snapshot it was compiled under (never NULL); a message it applies to must be of it. */
const po_EnvoyApi *po_Override_Api(const po_Override *o);
const po_Arguments *po_Override_Arguments(const po_Override *o); /* normalised */

/* ---- the compiled override (the IR every consumer reads) ------------------------------------
 * One compile resolves each patch's path to its field chain, converts its value, and judges it
 * under both input conventions; nothing needs compiling again. Everything lives in the arena
 * the override was built in, and is read-only: share it between threads freely. */

/* Like po_Override_Compile, but returns the IR even when there are errors (they are in
 * `diags`; po_Override_Valid says whether there were any), so per-patch verdicts and chains can
 * be read for the patches that did compile. NULL only when out of memory or without a schema. */
po_Override *po_Override_Build(const po_Arguments *args, const po_CompileOptions *opts, po_Arena *a,
                               po_Diagnostics *diags);
/* Bare patches (filters not read, none of the Constructor's rules) against one message type,
 * e.g. "envoy.config.cluster.v3.Cluster": PatchStruct's checks only (the `patch` command).
 * po_Override_Apply of it applies every patch. NULL when out of memory or no such message. */
po_Override *po_Override_BuildFor(const char *message_full_name, const po_Arguments *args,
                                  const po_CompileOptions *opts, po_Arena *a, po_Diagnostics *diags);
bool po_Override_Valid(const po_Override *o); /* no error: it can be applied and programmed */
po_Op po_Override_Op(const po_Override *o, size_t patch);
po_ResourceType po_Override_ResourceType(const po_Override *o, size_t patch); /* Unknown: invalid filter */
po_TrafficDirection po_Override_Direction(const po_Override *o, size_t patch);

/* One segment of a resolved path. Strings live in the schema (static for the process). */
typedef struct {
  const char *name;      /* the proto field name: "outlier_detection" */
  const char *full_name; /* "envoy.config.cluster.v3.Cluster.outlier_detection" */
  int number;            /* the field number */
  const char *oneof;     /* the name of the oneof (of its message) it is a member of, or NULL */
  const char *message_type; /* the full name of the field's message type ("google.protobuf.Duration"),
                             * or NULL for a scalar or enum field (and for a map field) */
  bool repeated;         /* a repeated or map field */
} po_PathSegment;

/* Segments of the patch's resolved path, outermost first, the last being the field the patch
 * sets or removes; 0 when the path did not resolve (or the patch's filter was invalid). */
size_t po_Override_SegmentCount(const po_Override *o, size_t patch);
bool po_Override_Segment(const po_Override *o, size_t patch, size_t segment, po_PathSegment *out);

/* Whether a patch passes under one input convention, and if not, why. */
typedef struct {
  bool ok;
  /* When !ok: kPo_DiagKind_Consul (Consul refuses it whatever the typing), or, for the wire
   * convention of a patch the typed one accepts, kPo_DiagKind_WireArray / kPo_DiagKind_WireFormat. */
  po_DiagKind kind;
  const char *message;   /* Consul's text of the failure; NULL when ok */
} po_Verdict;
po_Verdict po_Override_Verdict(const po_Override *o, size_t patch, po_Convention convention);

/* What a compiled add sets, for target adapters that express it in another object: the shape
 * of the converted value and whether it is the field's proto3 default (what a proto merge
 * treats as unset). */
typedef enum {
  kPo_SetShape_None = 0, /* not an add, or the patch did not compile */
  kPo_SetShape_Scalar,   /* a scalar or enum field */
  kPo_SetShape_Wrapper,  /* a google.protobuf.*Value field from a scalar */
  kPo_SetShape_List,     /* a repeated field replaced whole */
  kPo_SetShape_Message,  /* a message field replaced by one holding only the value's children */
} po_SetShape;

typedef struct {
  po_SetShape shape;
  /* What a proto merge would not copy. Scalar: the value is 0, false, "" or an enum's number 0
   * and the field has no presence (a oneof member or proto3 optional field is copied even then);
   * Wrapper: its value is 0/false/"" (the wrapper is set, its value not copied); List: no
   * elements; Message: no children. */
  bool zero;
  const po_Value *value; /* the (normalised, friendly-converted) value it was compiled from */
} po_SetInfo;
bool po_Override_Set(const po_Override *o, size_t patch, po_SetInfo *out); /* false: no such patch */
/* The converted value of an add in protojson's form, keys the proto field names: scalars by their
 * field's type (a float given for an integer field truncated as compiled, an enum by name, a
 * uint64 above int64's range as a decimal string), wrappers bare, lists, messages as objects of
 * the children set, a google.protobuf.Duration as "1.5s". NULL when the patch is not a compiled
 * add, or out of memory. In `a`. */
po_Value *po_Override_SetJson(const po_Override *o, size_t patch, po_Arena *a);

/* Conflicts between the patches of two overrides (or, with a == b, between the patches of one),
 * found on resolved chains wherever both patches' filters can match one resource (same resource
 * type and direction; services intersecting, or either side for every service). Patches that
 * did not resolve are skipped. */
typedef enum {
  kPo_ConflictKind_SameField = 1,   /* both set or remove the same field */
  kPo_ConflictKind_ParentReplaced,  /* one replaces (an add) or removes an ancestor of the other's field */
  kPo_ConflictKind_OneofSibling,    /* both add, into different members of one oneof of one message */
} po_ConflictKind;

typedef struct {
  po_ConflictKind kind;
  size_t a_patch, b_patch; /* with a == b: a_patch < b_patch */
  /* Where they meet: the full name of the shared field (SameField) or of the ancestor field
   * (ParentReplaced: a's target when a_is_parent, else b's), or the oneof's name (OneofSibling).
   * `message`: the full name of the message holding it. Strings live in the schema. */
  const char *where;
  const char *message;
  bool a_is_parent;        /* ParentReplaced: a's target is the ancestor */
} po_Conflict;

typedef void (*po_ConflictFn)(const po_Conflict *c, void *ctx);
/* Calls `fn` per conflict, in patch order; returns how many. Cost: patches(a) x patches(b)
 * pairs, each linear in path length plus the product of the two patches' service lists (each
 * bounded by the spec's limits). */
size_t po_Override_Conflicts(const po_Override *a, const po_Override *b, po_ConflictFn fn, void *ctx);
const char *po_ConflictKind_Name(po_ConflictKind k); /* "same-field", "parent-replaced", "oneof-sibling" */

/* ---- messages and application --------------------------------------------------------------- */

typedef struct po_Message po_Message;

/* An Envoy message of snapshot `api` (NULL: the default) from proto3 JSON (proto or JSON field
 * names, `@type` Anys of that snapshot). */
po_Message *po_Message_ParseJson(const po_EnvoyApi *api, const char *full_name, const char *json, size_t len,
                                 po_Arena *a, po_Status *status);
po_Message *po_Message_New(const po_EnvoyApi *api, const char *full_name, po_Arena *a, po_Status *status);
/* The snapshot the message is of; NULL only for a schema the engine did not load itself. */
const po_EnvoyApi *po_Message_Api(const po_Message *m);
/* Proto3 JSON with the original proto field names, NUL-terminated, in the arena. */
char *po_Message_ToJson(const po_Message *m, po_Arena *a, size_t *len, po_Status *status);
const char *po_Message_FullName(const po_Message *m);
/* The ClusterLoadAssignment a Cluster carries inline (its `load_assignment`), sharing the
 * cluster's memory: patching it patches the cluster. NULL when unset or m is not a Cluster.
 * Consul's BasicEnvoyExtender patches it with cluster-load-assignment patches too, after the
 * cluster's own ("updates can come from either" CDS or EDS), classified by its cluster_name. */
po_Message *po_Message_InlineLoadAssignment(po_Message *m, po_Arena *a, const char **cluster_name);
/* Indented proto3 JSON, two spaces a level, object keys sorted by byte order, one value a
 * line: what po_Message_ToJson gives, parsed and passed to po_Value_ToPrettyJson, byte for byte
 * (errors too: NULL with upb's reason when a value has no JSON form), written straight from the
 * message's set fields (reflection; well-known types other than Any through upb's encoder).
 * Linear in the message's size plus a sort of each message's and map's keys. */
char *po_Message_ToPrettyJson(const po_Message *m, po_Arena *a, size_t *len, po_Status *status);
/* m as a message of snapshot `api` (NULL: the default), in `a`, through its binary form: the
 * fields `api` lacks ride along as unknown fields and come back when it is moved to a snapshot
 * that has them (preview reads a dump with the newest snapshot and judges it with the proxy's).
 * m itself when it is of `api` already. NULL with status when `api` lacks m's type or memory
 * runs out. Linear in m. */
po_Message *po_Message_As(const po_EnvoyApi *api, po_Message *m, po_Arena *a, po_Status *status);
/* The fields m carries that its snapshot lacks (what po_Message_As kept as unknown fields), each
 * once, as the path of proto field names where it is first met ("/dns_jitter",
 * "/load_assignment/endpoints/0/x"; "/(field 58 of envoy.config.cluster.v3.Cluster)" when
 * snapshot `names` lacks it too). The first max into out (in `a`); returns how many there are.
 * Linear in m. */
size_t po_Message_Lacked(const po_Message *m, const po_EnvoyApi *names, po_Arena *a, const char **out, size_t max);

/* Consul's PatchStruct: applies one patch to the message (filters are not consulted). On error
 * the message may be partly modified and status has Consul's exact text (plus, when hints are
 * on, a did-you-mean line after it). `convention` types the patch value. */
bool po_PatchStruct(po_Message *m, const po_Patch *patch, bool debug, po_Convention convention,
                    po_Status *status);

/* What a resource is, for filter matching. */
typedef struct {
  po_ResourceType resource_type;
  po_TrafficDirection direction;
  const po_ServiceName *service; /* the upstream service, or NULL */
} po_Payload;

bool po_ResourceFilter_Matches(const po_ResourceFilter *f, const po_Payload *p);

/* Applies every patch whose filter matches (every patch when `p` is NULL, or when the override
 * was built with po_Override_BuildFor), in order. An override that is not valid is refused, and
 * so is a message of another snapshot than the override's (kPo_Status_Invalid, both named).
 * Errors are collected (a failing patch does not stop the others), *patched tells whether any
 * patch applied. Returns false when any patch failed; status then has every error in Consul's
 * multierror format. */
bool po_Override_Apply(const po_Override *o, po_Message *m, const po_Payload *p, bool *patched,
                       po_Status *status);

/* ---- explain: the Envoy schema as a patch author needs it (`propertyoverride explain`) ------ */

typedef struct {
  const char *name;        /* the proto field name: what a path segment must be */
  const char *parent;      /* the full name of the message it is a field of */
  const char *json_name;
  int number;
  const char *type;        /* Consul's name for its type: "uint32", "enum", "repeated string", "map",
                            * "google.protobuf.UInt32Value" */
  const char *detail;      /* "wrapper of uint32", "enum <FullName>: A, B", "map<string, T>"; or NULL */
  const char *oneof;       /* the oneof it is a member of, or NULL */
  bool oneof_required;     /* that oneof is `(validate.required)`: Envoy wants one member set */
  bool repeated, map, message, deprecated;
  const char *rules;       /* Envoy's protoc-gen-validate rules, readably ("uint32 lte 100"), or NULL */
  bool settable;           /* an add patch can set it (on the Consul target, ARCHITECTURE.md section 7) */
  const char *how;         /* settable: the value to give; not settable: why not */
  bool traversable;        /* a path may continue below it */
} po_ExplainField;

typedef struct {
  const char *path;              /* the query normalised: "cluster/outlier_detection" */
  const char *resource_type;     /* "cluster", ... or NULL when the query starts with a message name */
  const char *root;              /* the root message's full name */
  const char *message;           /* the message whose fields are listed; NULL when the path ends at a
                                  * field that is not a message */
  const po_ExplainField *field;  /* the field the path ends at; NULL at the root */
  const po_ExplainField *fields; /* the fields of `message`, in .proto declaration order */
  size_t field_count;
} po_Explanation;

/* Where the embedded snapshots come from, for `propertyoverride version` (proto/'s
 * po_Schema_Snapshot). Static. */
const char *po_EnvoyApi_Snapshot(void);

/* For single-threaded one-shot processes, before any other engine call: the Envoy schema is
 * then loaded piecemeal, only the .proto files a lookup needs (proto/: po_Schema_LoadOnDemand).
 * False when the schema was already loaded whole (the mode is fixed by the first load). */
bool po_EnvoyApi_LoadOnDemand(void);

/* True once memory ran out for work done with arena `a`: an allocation of `a` failed, or a
 * failure was noted in it (a scratch arena of a call made with it, po_Arena_FreeInto; a regex's
 * malloc; a snapshot's schema that did not load for a call made with `a`), or a schema loaded
 * on demand could not add a file (its own sticky state, po_Schema_OutOfMemory: the one-shot
 * process's). From then on a failed lookup or compile made with `a` is no verdict on the input.
 * Per arena, no process-wide flag: a snapshot that did not load is loaded again by the next
 * call. One-shot commands ask it of the arenas they used before printing any verdict or output,
 * and exit 2 saying "out of memory" instead (docs/gitops.md, "render"). `a` NULL: the on-demand
 * schemas' alone. */
bool po_Engine_OutOfMemory(const po_Arena *a);

/* What po_Explain describes with: the snapshot (NULL: the default), and for an unknown field's
 * hint, as po_CompileOptions has them, the release it stands for and the releases to name. */
typedef struct {
  const po_EnvoyApi *api;
  const char *judged_for;
  const po_ApiReleases *releases;
} po_ExplainOptions;

/* `query` is a resource type (cluster, cluster-load-assignment, route, listener) or an Envoy
 * message's full name, then optionally "/" and a patch path, under `o` (NULL: the default
 * snapshot, no release named). Everything lives in the arena.
 * Errors are Consul's texts where Consul has one (an unknown segment: "no match for field ..."
 * and the field list, then a did-you-mean line when one is close). */
bool po_Explain(const po_ExplainOptions *o, const char *query, po_Arena *a, po_Explanation *out, po_Status *status);

/* The hint of po_CompileOptions.judged_for and .releases for field `field` unknown on message
 * `message` (a full name) of snapshot `api` (NULL: the default), for a decoder's "No such field"
 * (an EnvoyFilter's or EnvoyPatchPolicy's value): which other embedded snapshots have it and
 * which of `releases` accept it; NULL when no other snapshot has it (or out of memory). */
const char *po_Hint_FieldOfOtherApis(const po_EnvoyApi *api, const char *message, const char *field,
                                     const char *judged_for, const po_ApiReleases *releases, po_Arena *a);

/* What each segment of an RFC 6901 pointer into the protojson document of a message is, by the
 * schema (for JSON Patch paths written by hand: an EnvoyPatchPolicy's). "~0" and "~1" are not
 * unescaped (no field name has them). */
typedef enum {
  kPo_PointerSeg_Unknown = 0, /* not known from the schema: no such field, or below a scalar, an Any,
                               * a Value, or a message protojson writes as a string (Duration, wrappers) */
  kPo_PointerSeg_Field,       /* a field of the message, by its proto name */
  kPo_PointerSeg_JsonName,    /* a field of the message by its JSON name (connectTimeout), not its proto name */
  kPo_PointerSeg_MapKey,      /* a key of a map field: any text, digits included */
  kPo_PointerSeg_StructKey,   /* a key of a google.protobuf.Struct: any text, digits included */
  kPo_PointerSeg_Index,       /* an index (digits, or "-") into a repeated field or a ListValue */
} po_PointerSegKind;
typedef struct {
  po_PointerSegKind kind;
  const char *field;   /* Field, JsonName: the proto field name (static) */
  const char *message; /* Field, JsonName: the full name of the message it is a field of (static);
                        * Unknown: the message it is no field of, when the walk was in one, else NULL */
} po_PointerSeg;
/* The first `max` segments of `pointer` in message `message_full_name` of snapshot `api` (NULL:
 * the default) into out; returns how many.
 * Every segment Unknown when there is no such message or no schema. Linear in the pointer. */
size_t po_Pointer_Segments(const po_EnvoyApi *api, const char *message_full_name, const char *pointer,
                           po_PointerSeg *out, size_t max);

/* ---- Envoy's admin /config_dump and the meshes' naming (`propertyoverride preview`) ----------
 * config_dump.c reads a dump with upb's JSON decoder (every `@type` resolved against the
 * schema) and unpacks each resource of its Clusters/Listeners/Routes/EndpointsConfigDump;
 * mesh.c decides what a mesh makes of each resource. Both pure: no I/O. */

typedef enum {
  kPo_DumpState_Static = 0, /* from the bootstrap: no mesh extension patches it */
  kPo_DumpState_Active,     /* dynamic, in use: what preview patches */
  kPo_DumpState_Warming,    /* dynamic, not yet in use */
  kPo_DumpState_Draining,   /* dynamic listener on its way out */
} po_DumpState;
const char *po_DumpState_Name(po_DumpState s); /* "static", "active", "warming", "draining" */

typedef struct {
  po_ResourceType type;
  po_DumpState state;
  const char *name;         /* Cluster, Listener, RouteConfiguration name; ClusterLoadAssignment cluster_name */
  const char *version_info; /* "" when the dump has none */
  const char *where;        /* its place in the dump, for errors: "configs[0].dynamic_active_clusters[7].cluster" */
  /* The resource, in the arena (po_Override_Apply may patch it): NULL until
   * po_DumpResource_Decode decodes it (po_Mesh_Classify decodes a route it needs to look
   * inside into its own scratch arena when this is NULL). */
  po_Message *message;
  struct po_DumpPending *pending; /* private: its bytes until decoded */
} po_DumpResource;

typedef struct {
  po_DumpResource *resources; /* in the dump's order */
  size_t count;
  const char **other_configs; /* full names of the configs[] entries not read (bootstrap, secrets...) */
  size_t other_count;
  /* Anys whose type the Envoy API this build has lacks (a mesh's own filter configurations):
   * each read as a google.protobuf.StringValue naming it, since no patch path can enter an Any. */
  size_t unknown_types;
  const char *first_unknown_type; /* its type URL, or NULL */
  /* The proxy's datacenter as Consul's bootstrap names it (the stats tag
   * `consul.source.datacenter`), or NULL when the dump has no such bootstrap. */
  const char *consul_datacenter;
  /* The service whose proxy this is, likewise (`consul.source.service`), or NULL. */
  const char *consul_service;
  /* The snapshot it was read with: its resources' messages are of it. */
  const po_EnvoyApi *api;
  /* The Envoy the proxy runs, as its bootstrap's node says: node.user_agent_build_version's
   * version, else the first "N.N" or "N.N.N" of node.user_agent_version; "1.34.4" (patch left
   * out when the text has none), NULL when the dump says neither. envoy_major and envoy_minor
   * are its numbers (0 without). */
  const char *envoy_version;
  int envoy_major, envoy_minor;
  /* Istio's node metadata ISTIO_VERSION ("1.26.3"), or NULL. */
  const char *istio_version;
} po_ConfigDump;

/* An envoy.admin.v3.ConfigDump in proto3 JSON (`{"configs": [Any...]}`). An Any of a type the
 * schema lacks is kept as a placeholder (unknown_types); a resource or per-type dump of such a
 * type is an error. Errors name where:
 * "configs[2].dynamic_active_clusters[7].cluster: type '...' is not in the Envoy v3 schema".
 * Streamed (config_dump.c says how): the text is split by its structure and each piece - a
 * resource list's entry, another configs[] entry, any other member - decoded by upb on its own
 * in an arena freed after it, so memory is the text plus a record per resource, not upb's tree
 * of the whole (9x to 37x the text). Linear in the input. Each resource stays its Any's bytes
 * in the arena (about half its JSON), its name read from field 1 alone, until
 * po_DumpResource_Decode or _DecodeIn asks. The text may be freed on return. */
bool po_ConfigDump_ParseJson(const po_EnvoyApi *api, const char *json, size_t len, po_Arena *a, po_ConfigDump *out,
                             po_Status *status);
/* r's message, decoded on the first call (into the dump's arena) and kept; NULL with an error
 * naming r->where when out of memory. */
po_Message *po_DumpResource_Decode(po_DumpResource *r, po_Status *status);
/* r's message decoded afresh into `a` (kept nowhere: freeing `a` frees it), so a caller that
 * visits every resource holds one at a time. */
po_Message *po_DumpResource_DecodeIn(const po_DumpResource *r, po_Arena *a, po_Status *status);

/* The meshes a PropertyOverride can target: one enum for the engine's naming rules (preview) and
 * the controller's target adapters (controller/targets). */
typedef enum { kPo_Mesh_Consul = 0, kPo_Mesh_Istio, kPo_Mesh_EnvoyGateway } po_Mesh;
const char *po_Mesh_Name(po_Mesh m); /* "consul", "istio", "envoy-gateway" */

/* po_Override_Apply, then Envoy's protoc-gen-validate rules on what each matching add patch made
 * of the resource: the messages it created on the way to its target (a required field they lack,
 * a scalar whose default breaks a rule: `/load_assignment/policy/...` on an EDS cluster creates a
 * ClusterLoadAssignment without the cluster_name Envoy requires) and the value it set, whole (a
 * Duration set a part at a time, now with the resource's other part). A compile judges the value
 * and leaves created parents to a resource (kPo_DiagKind_EnvoyRuleIfResource). Violations go to
 * `rule_errors` (kPo_DiagKind_EnvoyRule, the patch's index and path); they do not make the call
 * fail. Parents that existed are not re-checked (result_rules.c says why). */
bool po_Override_ApplyChecked(const po_Override *o, po_Message *m, const po_Payload *p, bool *patched,
                              po_Diagnostics *rule_errors, po_Status *status);

/* How much of its message a native patch value (an EnvoyFilter's patch.value, an
 * EnvoyPatchPolicy's operation.value) is: what Envoy's rules judge in it (value_rules.c). */
typedef enum {
  /* the whole message (Istio ADD, INSERT_*, REPLACE; JSON Patch add and replace, which put the
   * value in place of the member, RFC 6902): every rule, absent fields included (message.required,
   * min_items, a proto3 scalar at its default unless ignore_empty) */
  kPo_ValueScope_Whole = 0,
  /* merged into a generated message (Istio MERGE): only the fields the value sets; a list it sets
   * is appended (max_items and item rules, no min_items); list message items and map values whole */
  kPo_ValueScope_Merge,
  /* Istio MERGE_AND_REPLACE_LIST: as Merge, but a list the value sets replaces (min_items too) */
  kPo_ValueScope_MergeReplaceLists,
} po_ValueScope;

/* Envoy's protoc-gen-validate rules (pgv.c's: the same rules and texts as a PropertyOverride
 * patch's findings) on a native value decoded into `m`, judged by `scope` (the same walk judges PropertyOverride
 * patches, so the verdicts of `validate -f`, the webhook and `validate --consul-arguments` agree). The value sits
 * `value_depth` steps (fields, list items, map entries) below m's root when m only nests it along
 * a path (an EnvoyPatchPolicy's /a/b/0 decoded as {"a": {"b": [value]}}: 3; 0 when m is the
 * value): the scaffold above is not judged (a list holding the value has other items: its count is
 * not judged), but for the map key a path ends in (/metadata/filter_metadata/KEY: the map's keys
 * and scalar values rules on the scaffold's one entry). At that depth the value is the field named `value_field` (proto or JSON name,
 * judged even at its default: `""` against min_len) or, when NULL (the path ends in a list index
 * or a map key), what m holds there. Each violation is added to `out` as an error of kind
 * kPo_DiagKind_EnvoyRule with `patch_index`, its path the RFC 6901 pointer (proto field names)
 * from the value ("" for the value itself), its message the violation ("0s violates duration gt
 * 0s"); a warning when the value is deeper than 64 levels (not checked below; upb's JSON decoder
 * refuses a value nested deeper than 64 objects and arrays first). An Any is not
 * descended (silently: its contents are bytes until Envoy builds the extension). The rules are
 * those of m's own snapshot (po_Message_Api). Linear in the value's size. false only when out of
 * memory, or value_depth is over 64 (kPo_Status_Limit). */
bool po_Message_CheckRules(const po_Message *m, size_t value_depth, const char *value_field, po_ValueScope scope,
                           int patch_index, po_Diagnostics *out, po_Status *status);

/* Envoy's protoc-gen-validate rules (snapshot `api`'s; NULL: the default) on a JSON Patch remove
 * of field `field` (proto or JSON name) of message `message_full_name` (the last segment of an EnvoyPatchPolicy remove's path, by
 * po_Pointer_Segments): the violation when every outcome breaks a rule, with the text a
 * PropertyOverride remove gets (a required field or the member of a required oneof: absent, the
 * remove fails; present, what it leaves is invalid; a proto3 scalar, list or map with rules on its
 * default, which protojson leaves out). NULL when some outcome is valid, or no such field; NULL
 * with status set when out of memory or without a schema. The text is in `a`. */
const char *po_Message_CheckRemove(const po_EnvoyApi *api, const char *message_full_name, const char *field,
                                   po_Arena *a, po_Status *status);

/* What the mesh decides a resource is. `payload()` of it is what po_Override_Apply takes. */
typedef struct {
  po_ResourceType resource_type;
  po_TrafficDirection direction;
  bool has_service;
  po_ServiceName service;   /* the upstream service when has_service (namespace, partition filled) */
  const char *datacenter;   /* Consul: the datacenter an upstream SNI names, or NULL */
  const char *note;         /* outbound without a service: why (a peer's SNI...), or NULL */
} po_MeshResource;

/* Envoy Gateway: the namespace of the HTTPRoute whose rule cluster `name` is
 * ("httproute/<ns>/<route>/rule/<i>"), in a; NULL for any other name (or out of memory). */
const char *po_Mesh_EGRouteNamespace(const char *name, po_Arena *a);
/* Consul's rules (extensioncommon's Get*Payload, connect's SNI forms), Istio's names or Envoy
 * Gateway's (every resource outbound and of no service); mesh.c says them in full. `datacenter`
 * is Consul's local datacenter: it only words the note of an upstream listener or route of
 * another one (every datacenter's SNI names its service, as Consul's runtime config puts each
 * discovery-chain target's SNI in its upstream's set). false for a resource type no mesh
 * patches, or out of memory. */
bool po_Mesh_Classify(po_Mesh mesh, const char *datacenter, const po_DumpResource *r, po_Arena *a,
                      po_MeshResource *out);

#endif
