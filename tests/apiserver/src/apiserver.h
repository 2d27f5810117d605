/* po-apiserver: internal declarations shared by the files of this one program.
 *
 * Concurrency model: libmicrohttpd runs one thread per connection; every access to the store,
 * the registry, the event ring and every json_object reachable from them happens under the one
 * mutex po_as.mu (json-c objects are not thread-safe, not even for serialising, because they
 * cache their printed form). Slow work (webhook calls, writing the state file) happens outside
 * the lock on copies. */
#ifndef PO_APISERVER_H
#define PO_APISERVER_H

#include <json-c/json.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---- logging ---------------------------------------------------------------------------- */
/* How deep a request's JSON may nest: the real API server's limit (sigs.k8s.io/json, Go's
 * encoding/json scanner: maxNestingDepth 10000), plus one for json-c's counting. */
enum { kPo_As_MaxJsonDepth = 10000 + 1 };
enum { kPo_As_LogError = 0, kPo_As_LogWarn = 1, kPo_As_LogInfo = 2, kPo_As_LogDebug = 3 };
void po_As_Log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- a reply under construction ---------------------------------------------------------- */
typedef struct po_As_Reply {
  int code;
  char *body; /* malloc'ed */
  const char *content_type;
  char *warnings[16]; /* malloc'ed texts, sent as Warning: 299 - "text" */
  int nwarnings;
  int retry_after; /* > 0: Retry-After header */
} po_As_Reply;

void po_As_Reply_Json(po_As_Reply *r, int code, json_object *body); /* takes body */
void po_As_Reply_Status(po_As_Reply *r, int code, const char *reason, const char *message,
                        json_object *details /* taken, may be NULL */);
void po_As_Reply_Warn(po_As_Reply *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void po_As_Reply_Free(po_As_Reply *r);
const char *po_As_ReasonForCode(int code);

/* ---- resources (registry.c) -------------------------------------------------------------- */
typedef struct po_As_Entry {
  char *key; /* "namespace/name", or "/name" when cluster-scoped */
  json_object *obj;
} po_As_Entry;

typedef struct po_As_Resource {
  char *group, *plural, *singular, *kind, *list_kind;
  char *versions[8];
  int nversions;
  char *storage_version;
  char *short_names[8];
  int nshort;
  char *categories[8];
  int ncategories;
  bool namespaced, has_status, is_crd, has_generation, registered;
  json_object *schemas; /* version -> openAPIV3Schema, owned; NULL for built-ins */
  json_object *columns; /* version -> additionalPrinterColumns array, owned */
  /* the objects, sorted by key */
  po_As_Entry *items;
  size_t nitems, capitems;
} po_As_Resource;

po_As_Resource *po_As_Registry_Find(const char *group, const char *version, const char *plural);
po_As_Resource *po_As_Registry_FindGR(const char *group, const char *plural);
po_As_Resource *po_As_Registry_FindKind(const char *group, const char *kind);
void po_As_Registry_AddBuiltins(void);
/* Register (or re-register) the resource of a CRD object; false + msg if the CRD is unusable. */
bool po_As_Registry_ApplyCrd(json_object *crd, char *msg, size_t msgsz);
void po_As_Registry_RemoveCrd(json_object *crd);
bool po_As_Resource_Serves(const po_As_Resource *r, const char *version);
json_object *po_As_Resource_Schema(const po_As_Resource *r, const char *version);

/* ---- the store (store.c) ----------------------------------------------------------------- */
enum { kPo_As_Added = 0, kPo_As_Modified = 1, kPo_As_Deleted = 2 };

typedef struct po_As_Event {
  uint64_t rv;
  int type;
  po_As_Resource *res;
  json_object *obj; /* reference */
  json_object *old; /* reference or NULL */
  struct timespec at; /* CLOCK_REALTIME when recorded: a held watch (holdWatchMs) sends it this much later */
} po_As_Event;

typedef struct po_As_Faults {
  int drop_watch_every, force_410, throttle, retry_after, server_errors, server_error_code;
  int latency_ms;
  /* every watch event of the resource named holdWatchResource (its plural; "" = every resource)
   * sent no sooner than hold_watch_ms after it happened: a watch that lags its writes */
  int hold_watch_ms;
  char hold_watch_resource[64];
  /* random chaos (percent of API requests / of watch starts), from a seeded generator */
  int server_error_percent, force_410_percent;
  uint64_t seed;
} po_As_Faults;

/* Lock held: true with probability percent/100 (deterministic for a given --fault-seed). */
bool po_As_Faults_Roll(int percent);

typedef struct po_As_Server {
  pthread_mutex_t mu;
  pthread_cond_t cond; /* broadcast on every event and on shutdown */
  uint64_t rv;
  uint64_t compacted_rv; /* events with rv <= this are gone */
  po_As_Resource **res;
  size_t nres;
  po_As_Event *ring;
  size_t ring_cap, ring_len, ring_head;
  po_As_Faults faults;
  bool stopping;
  bool dirty;
  uint64_t requests, watches;
  int bookmark_ms;
  int log_level;
  char base_url[128];
  char host_port[96];
  /* webhook routing */
  char *webhook_override;
  char *svc_map[32];
  int nsvc_map;
} po_As_Server;

extern po_As_Server po_as;

po_As_Entry *po_As_Store_Get(po_As_Resource *r, const char *ns, const char *name);
/* Index of the first item with key > after (after NULL: 0). */
size_t po_As_Store_Lower(po_As_Resource *r, const char *after);
/* Put takes obj (replaces any previous) and records an event; bumps and sets resourceVersion. */
void po_As_Store_Put(po_As_Resource *r, json_object *obj, int type);
void po_As_Store_Remove(po_As_Resource *r, const char *ns, const char *name, json_object *final_obj);
void po_As_Store_Record(po_As_Resource *r, int type, json_object *obj, json_object *old);
char *po_As_Key(const char *ns, const char *name);

/* ---- object helpers (objutil.c) ---------------------------------------------------------- */
json_object *po_As_Get(json_object *o, const char *field); /* NULL if o not an object */
const char *po_As_GetStr(json_object *o, const char *field);
json_object *po_As_Meta(json_object *o); /* metadata, created if missing */
const char *po_As_MetaStr(json_object *o, const char *field);
json_object *po_As_Copy(json_object *o);
bool po_As_Equal(json_object *a, json_object *b);
char *po_As_Strdup(const char *s);
char *po_As_Printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void po_As_Now(char out[32]);
void po_As_Uuid(char out[37]);
/* Serialise obj for a client, with apiVersion rewritten to group/version (NULL: unchanged). */
char *po_As_Serialize(json_object *obj, const char *api_version);
char *po_As_ApiVersion(const po_As_Resource *r, const char *version);
char *po_As_Base64(const unsigned char *data, size_t n);

/* ---- selectors (select.c) ---------------------------------------------------------------- */
typedef struct po_As_Selector po_As_Selector;
po_As_Selector *po_As_Selector_Parse(const char *labels, const char *fields, char *msg, size_t msgsz);
bool po_As_Selector_Match(const po_As_Selector *s, json_object *obj);
/* Kubernetes LabelSelector object (matchLabels/matchExpressions) against a labels map. */
bool po_As_LabelSelectorObj_Match(json_object *sel, json_object *labels);
void po_As_Selector_Free(po_As_Selector *s);

/* ---- YAML (yaml.c) ----------------------------------------------------------------------- */
/* Parse every document of a YAML stream; returns a json array of documents or NULL + msg. */
json_object *po_As_Yaml_Parse(const char *text, size_t len, char *msg, size_t msgsz);

/* ---- protobuf request bodies (protobuf.c) ------------------------------------------------ */
json_object *po_As_Protobuf_Decode(const char *body, size_t len, char *msg, size_t msgsz);

/* ---- patches (patch.c) ------------------------------------------------------------------- */
json_object *po_As_MergePatch(json_object *target /* taken */, json_object *patch);
json_object *po_As_StrategicPatch(json_object *target /* taken */, json_object *patch);
/* JSON patch; NULL + msg on failure. */
json_object *po_As_JsonPatch(json_object *target /* taken */, json_object *ops, char *msg, size_t msgsz);
/* Server-side apply of cfg onto live (may be NULL: create). Returns the new object or NULL:
 * *conflict set and msg filled (409), or a bad request otherwise. */
json_object *po_As_Apply(json_object *live, json_object *cfg, const char *manager, bool force,
                         const char *api_version, bool *conflict, char *msg, size_t msgsz);

/* ---- schema validation (schema.c) -------------------------------------------------------- */
typedef struct po_As_Causes {
  json_object *causes; /* array of {reason,message,field} */
  json_object *unknown; /* array of strings: pruned field paths */
  bool probe;           /* checking an allOf/anyOf/oneOf/not alternative: no pruning, no defaults */
  struct po_As_PendingRule *rules; /* CEL rules to run once the schema checks pass */
  size_t nrules, caprules;
} po_As_Causes;
/* Validate and prune obj (in place) against a structural schema. */
void po_As_Schema_Validate(json_object *schema, json_object *obj, po_As_Causes *out);

/* CEL subset (cel.c): 1 true, 0 false, 2 evaluation error (err filled), -1 outside the subset. */
int po_As_Cel_Eval(const char *rule, json_object *self, char *err, size_t errsz);
/* The same with named variables (matchConditions: object, oldObject, request); a variable whose
 * value is NULL is CEL null. At most 4 variables. */
int po_As_Cel_EvalVars(const char *expr, const char *const *names, json_object *const *values, int n, char *err,
                       size_t errsz);

/* ---- tables (table.c) -------------------------------------------------------------------- */
json_object *po_As_Table(po_As_Resource *r, const char *version, json_object **objs, size_t n,
                         bool include_object);
/* Evaluate a printer-column JSONPath; returns a new reference or NULL. */
json_object *po_As_JsonPath(json_object *obj, const char *path);

/* ---- discovery and OpenAPI (discovery.c, openapi.c) --------------------------------------- */
json_object *po_As_Discovery_Api(void);
json_object *po_As_Discovery_Apis(void);
json_object *po_As_Discovery_Group(const char *group);
json_object *po_As_Discovery_Resources(const char *group, const char *version);
/* apidiscovery.k8s.io/v2 APIGroupDiscoveryList for /api (core) or /apis. */
json_object *po_As_Discovery_Aggregated(bool core);
json_object *po_As_OpenApi_Root(void);
json_object *po_As_OpenApi_GroupVersion(const char *group, const char *version);

/* ---- admission (admission.c) -------------------------------------------------------------- */
typedef struct po_As_AdmissionJob po_As_AdmissionJob;
/* A Validating- or MutatingWebhookConfiguration's matchConditions as the real server validates them (count,
 * names required and unique, expressions required and compiling; here: inside the CEL subset).
 * false: field, reason and msg say what is wrong. */
bool po_As_Admission_CheckConfig(json_object *vwc, char *field, size_t fieldsz, char *reason, size_t reasonsz, char *msg,
                                 size_t msgsz);
/* Under the lock: snapshot the matching webhooks for this request (NULL when none). */
po_As_AdmissionJob *po_As_Admission_Prepare(po_As_Resource *r, const char *version,
                                            const char *operation, const char *subresource,
                                            const char *ns, const char *name,
                                            json_object *obj, json_object *old, bool dry_run, bool mutating);
/* Without the lock: call the mutating ones in order, each patching *obj (replaced) for the next;
 * true = admitted; false = r filled with the error. */
bool po_As_Admission_Mutate(po_As_AdmissionJob *job, json_object **obj, po_As_Reply *r);
/* Without the lock: call them. true = admitted; false = r filled with the error. */
bool po_As_Admission_Run(po_As_AdmissionJob *job, po_As_Reply *r);
void po_As_Admission_Free(po_As_AdmissionJob *job);

/* ---- TLS (tls.c) -------------------------------------------------------------------------- */
/* extra_dns: more DNS SANs for the serving certificate (e.g. a webhook's NAME.NS.svc). */
bool po_As_Tls_Ensure(const char *dir, char **extra_dns, int nextra, char *msg, size_t msgsz);

/* ---- faults (faults.c) -------------------------------------------------------------------- */
/* Under the lock: if a fault fires for this API request fill r and return true. */
bool po_As_Faults_Intercept(po_As_Reply *r);
json_object *po_As_Faults_Json(void);
bool po_As_Faults_Set(json_object *in, char *msg, size_t msgsz);

/* ---- FAKE consul-k8s, a test double (fake_consulk8s.c; --fake-consul-k8s) ---------------- */
void po_As_FakeConsulK8s_Enable(int delay_ms);
void po_As_FakeConsulK8s_Start(void); /* after the preload; no-op unless enabled */
void po_As_FakeConsulK8s_Stop(void);  /* after po_as.stopping was set and broadcast */

/* ---- FAKE Envoy Gateway, a test double (fake_eg.c; --fake-envoy-gateway[=disabled]) ------- */
void po_As_FakeEnvoyGateway_Enable(bool disabled);
void po_As_FakeEnvoyGateway_Start(void); /* after the preload; no-op unless enabled */
void po_As_FakeEnvoyGateway_Stop(void);  /* after po_as.stopping was set and broadcast */

/* ---- persistence (persist.c) -------------------------------------------------------------- */
bool po_As_Persist_Load(const char *path, char *msg, size_t msgsz);
void po_As_Persist_Start(const char *path);
void po_As_Persist_Stop(void);

/* ---- request handling (router.c, objects.c, watch.c) -------------------------------------- */
typedef struct po_As_Request {
  const char *method;
  const char *group, *version; /* group "" = core */
  po_As_Resource *res;
  const char *ns, *name, *sub;
  const char *body;
  size_t body_len;
  const char *content_type, *accept;
  /* query */
  const char *label_selector, *field_selector, *continue_token, *resource_version;
  const char *rv_match, *field_manager, *field_validation, *dry_run, *include_object, *propagation_policy;
  long limit;
  bool watch, bookmarks, force, send_initial;
  long timeout_seconds;
} po_As_Request;

void po_As_Objects_Handle(po_As_Request *q, po_As_Reply *r);
/* Create/delete used by --crd preload and namespace cleanup (lock held). */
bool po_As_Objects_CreateLocked(po_As_Resource *res, json_object *obj /* taken */, char *msg, size_t msgsz);
void po_As_Objects_DeleteNamespaceContents(const char *ns);
bool po_As_WantsTable(const char *accept);

struct MHD_Connection;
struct MHD_Response;
/* Start a watch: returns a streaming response or NULL with r filled. */
struct MHD_Response *po_As_Watch_Start(po_As_Request *q, struct MHD_Connection *c, po_As_Reply *r);

/* ---- the HTTP server (router.c) ------------------------------------------------------------ */
struct MHD_Daemon;
typedef struct po_As_Listen {
  const char *host;
  int port;
  const char *cert_pem, *key_pem; /* both NULL: plain HTTP */
  char **tokens;
  int ntokens;
} po_As_Listen;
struct MHD_Daemon *po_As_Router_Start(const po_As_Listen *l, int *bound_port, char *msg, size_t msgsz);

#endif
