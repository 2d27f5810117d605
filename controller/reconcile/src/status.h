/* Private to reconcile: building a PropertyOverride's status. */
#ifndef PO_RECONCILE_STATUS_H_
#define PO_RECONCILE_STATUS_H_

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "po/reconcile/reconcile.h"

struct json_object;

typedef struct {
  const char *type, *status, *reason;
  /* The message carries a caveat its reason does not say (Programmed, with the overlap check
   * skipped over its bound): worth an Event even where the reason alone is not (po_Status_IsNews;
   * counted only while the reason is Programmed). Not written to the status, nor hashed: the
   * message says it. */
  bool caveat;
  char message[4096];
} po_Condition;

typedef struct {
  const char *ns;
  int64_t generation;
  po_TargetKind target_kind;
  const char *target_name;
  /* status.target when it is not the targetRef's object (Istio: the EnvoyFilter written);
   * NULL: consul.hashicorp.com/v1alpha1, the target kind's name, ns. */
  const char *target_api_version, *target_kind_name, *target_ns;
  int64_t live_generation; /* 0: nothing live */
  po_Condition accepted, programmed;
  /* Deprecated (type NULL: absent): the accepted spec sets fields the snapshot it was judged
   * against marks deprecated. Present only while it does, so the condition goes with the field. */
  po_Condition deprecated;
  /* status.envoyApi: the Envoy API the spec was judged against, its mesh ("Consul"), that mesh's
   * release ("1.22") and the snapshot ("v1.32.4"); snapshot NULL: none written. */
  const char *api_mesh, *api_release, *api_snapshot;
  /* status.lastValid to record: {generation, a copy of spec} (spec borrowed, only read), or
   * spec NULL to keep the old one. */
  int64_t last_valid_generation;
  const struct json_object *last_valid_spec;
  /* status.created to record: the object this reconcile created for it and could not bind (its
   * namespace, name and uid, istio_write.h); created_uid NULL keeps the old record. */
  const char *created_ns, *created_name, *created_uid;
} po_OverrideStatus;

/* A condition of type, status and reason with an empty message, and a status of everything
 * empty, none and zero: without zeroing the 4 KB message buffers (a compound literal did, 12 KB
 * per PropertyOverride per reconcile, more than the rest of its status took). */
void po_Condition_Init(po_Condition *c, const char *type, const char *status, const char *reason);
void po_OverrideStatus_Init(po_OverrideStatus *s);

/* The new status (a new reference), carrying lastTransitionTime over from `old_status`, and
 * its lastValid and created unless `s` replaces them. */
struct json_object *po_Status_Build(struct json_object *old_status, const po_OverrideStatus *s, const char *now);
/* NULL when out of memory. */
bool po_Status_Same(struct json_object *a, struct json_object *b);
/* Whether po_Status_Build(old_status, s, any time) would equal old_status, decided without
 * building it (no allocation): what lets a reconcile of an unchanged target cost no status work. */
bool po_Status_Matches(struct json_object *old_status, const po_OverrideStatus *s);
/* A hash of everything po_Status_Build writes but the times, with the spec recorded as lastValid
 * standing for itself by its hash (last_valid_spec is not read): what a memo remembers. */
uint64_t po_Status_Hash(const po_OverrideStatus *s, uint64_t spec_hash);
/* Whether the condition is news worth an Event. Not what every valid write comes to, which its
 * status says: a condition absent from the old status that says Accepted, Programmed or Pending
 * (a new PropertyOverride simply programmed), nor Programmed <-> Pending (a write waiting for
 * consul-k8s, then synced). One Event per create was a third of the controller's writes to the
 * API server (docs/benchmarks.md). Any other change of reason is news (Overlapping, Invalid,
 * TargetFull, SyncFailed, every Warning), and so is a condition with a caveat (po_Condition).
 * old_unknown: old_status is a cached one our own later write replaced (the watch lags): a
 * condition absent from it may have had any reason on the server, so it is news (an Overlapping
 * first status resolved before the cache showed it is otherwise never said). */
bool po_Status_IsNews(struct json_object *old_status, const po_Condition *c, bool old_unknown);

#endif
