/* The validating admission webhook's decision, as a pure function: an AdmissionReview v1 request
 * body in, the AdmissionReview response out. PropertyOverrides are checked with the full
 * pipeline (po/targets/override.h); ServiceDefaults and ProxyDefaults with each of their
 * builtin/property-override envoyExtensions entries through Consul's Constructor under Consul's
 * wire typing (consul-k8s itself only checks that `arguments` is an object). Denials give each
 * error with its patch index and path, Consul's message, the did-you-mean and the Envoy rule,
 * bounded: the first errors whole within 16 KiB, then how many more there are, and a last line
 * naming the Envoy API that judged it (the snapshot of the target mesh's release in
 * po_AdmissionOptions.targets, e.g. "judged against go-control-plane envoy v1.32.4, the Envoy API
 * of Consul 1.22"; every route, hand-written EnvoyFilters and EnvoyPatchPolicies too); objects over the
 * per-object limits (po/targets) are denied before any patch is checked. Deprecated Envoy fields
 * come back as warnings (at most 16). EnvoyFilters and EnvoyPatchPolicies written by hand are
 * checked as `validate -f` checks them (po_Istio_CheckEnvoyFilter, po_EG_CheckEnvoyPatchPolicy):
 * errors deny, warnings are returned; those labelled app.kubernetes.io/managed-by=propertyoverride
 * (the controller's own) are not judged. Deletes, updates that leave spec unchanged, and
 * updates of a ServiceDefaults/ProxyDefaults that leave its builtin/property-override entries
 * as they were (the same entries in the same order) are always allowed: nothing else of an
 * object is read for a verdict but its kind, its namespace (tenancy; fixed once created) and, for
 * EnvoyFilters and EnvoyPatchPolicies, the managed-by label, which only ever allows. A
 * ServiceDefaults/ProxyDefaults write by the controller itself (po_AdmissionOptions.controller_user,
 * request.userInfo.username) is allowed too, and only ever allows. The configurations'
 * matchConditions leave exactly these writes out (deploy/base/webhook.yaml).
 * A body that is not exactly one JSON value, or whose request.uid holds a NUL, is refused (400). */
#ifndef PO_WEBHOOK_ADMISSION_H_
#define PO_WEBHOOK_ADMISSION_H_

#include <stddef.h>

#include "po/base/status.h"
#include "po/engine.h"
#include "po/targets/override.h"
#include "po/targets/tenancy.h"

struct json_object;

/* What a review is asked with; zero-initialised (or a NULL pointer): the defaults. */
typedef struct {
  const po_Tenancy *tenancy;       /* NULL: everything allowed; else PropertyOverrides that target
                                    * what their namespace may not are refused */
  const po_TargetOptions *targets; /* the mesh options the controller compiles with (NULL: the
                                    * defaults), so the webhook accepts exactly what the controller
                                    * programs (e.g. lists on Istio 1.31+) */
  /* The username the API server knows the controller by (--controller-username, as for the
   * mutating webhook): its own ServiceDefaults/ProxyDefaults writes are allowed unread, since
   * their entries are compiled from PropertyOverrides this webhook admitted (deploy/'s
   * not-the-controller condition does not even send them). NULL or "": none is exempt. */
  const char *controller_user;
} po_AdmissionOptions;

/* Returns the response (a new reference; st Ok, http_status 200), or NULL when the body is no
 * AdmissionReview v1 request, with st saying why and the HTTP status to answer with
 * (st->http_status: 400, or 413 over the JSON value bounds). */
struct json_object *po_Admission_Review(const char *body, size_t len, const po_AdmissionOptions *opt, po_Arena *a,
                                        po_CtlStatus *st);

/* The bytes deciding `body` (either route, its answer included) may hold at most beside the body
 * itself, from one scan of it before anything is decoded: json-c's tree costs a multiple of the
 * body that depends on its shape (about half a kilobyte for an empty object, tens of bytes per
 * number). The server reserves this on its memory budget before it decodes. */
size_t po_Admission_Cost(const char *body, size_t len);

#endif
