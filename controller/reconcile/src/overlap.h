/* Private to reconcile: overlaps between the PropertyOverrides whose entries apply to the same
 * proxies (overlap.c): those of one target, and, across targets, those of the ProxyDefaults
 * `global` against those of every ServiceDefaults (Consul applies proxy-defaults extensions
 * first, then service-defaults ones: agent/configentry/resolve.go). */
#ifndef PO_RECONCILE_OVERLAP_H_
#define PO_RECONCILE_OVERLAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiled.h"
#include "po/engine.h"

typedef enum {
  kPo_OverlapTier_ProxyDefaults = 0, /* applied first, whatever the priorities */
  kPo_OverlapTier_ServiceDefaults = 1,
} po_OverlapTier;

/* What Istio orders a peer's patch set by, besides its priority (istio/istio
 * pilot/pkg/model/push_context.go, EnvoyFilters of a proxy): from Istio 1.22 (istio/istio#49681)
 * by priority, lower first; at equal priority the root namespace's EnvoyFilter first; then the
 * one created first (creationTimestamp, whole seconds); then by "<name>.<namespace>". Before
 * 1.22 every root namespace EnvoyFilter came before every workload namespace one, whatever
 * their priorities, and within each the same order as above. */
typedef struct {
  const char *filter_ns, *filter_name; /* its EnvoyFilter */
  const char *created; /* its metadata.creationTimestamp as the cache has it; NULL: not known
                        * (not created yet, or not seen yet): the order at a tie is not known */
  bool root;           /* it is in Istio's root namespace */
  int minor;           /* the Istio release 1.N (--istio-version); 0: unknown */
} po_OverlapIstio;
enum { kPo_IstioMinorPriorityAcrossNamespaces = 22 };

typedef struct {
  const char *ns, *name;       /* the PropertyOverride */
  const po_Override *override; /* the compiled IR; NULL: takes no part (invalid, refused or being deleted) */
  po_OverlapTier tier;
  int32_t priority;            /* spec.priority: within a tier, lower is applied first */
  const char *target;          /* its target's key: two peers of one tier meet only within one target */
  const char *where;           /* its target for messages ("ProxyDefaults default/global") */
  bool own;                    /* its status is written by this reconcile: only its overlaps are looked for */
  const po_OverlapIstio *istio;/* an Istio target's peer: Istio's order, not Consul's; else NULL */
  po_JsonHash id;              /* po_Overlap_PeerId; zero: none (compared with every peer, every time) */
} po_OverlapPeer;

/* Which compiled form a peer takes part with, and where (its tier and target: whom it meets): a
 * keyed hash of the entry's uid, generation, spec hash and record flag, the tier and the target
 * key. Two peers' overlap is a function of their compiled forms alone, so a verdict found for two
 * ids holds for as long as both are what they were. */
po_JsonHash po_Overlap_PeerId(const po_CompiledEntry *e, po_OverlapTier tier, const char *target);

/* What a target's last reconcile learnt of its overlaps, kept by the index per target
 * (po_TargetIndex_OverlapMemo): the ids of the peers then, those of its own peers compared with
 * every one of them, and the pairs of those that overlap. A reconcile compares only the pairs
 * that memo cannot answer: a newcomer with every peer, and each peer with the newcomer, where
 * every own peer was compared with every peer (k*k engine checks per reconcile of a target of k,
 * which runs once per PropertyOverride created). Own peers that overlap more than the message
 * names (their scan ends early) are not in `scanned`: compared again, up to their fourth. */
typedef struct {
  po_JsonHash x, y;
} po_OverlapPair;
typedef struct {
  po_JsonHash *seen;      /* every peer taking part, sorted */
  size_t nseen;
  po_JsonHash *scanned;   /* own peers compared with every peer they met, sorted */
  size_t nscanned;
  po_OverlapPair *found;  /* (scanned, seen) pairs that overlap, sorted */
  size_t nfound;
} po_OverlapMemo;

/* The apply order of two peers; < 0 when a is applied before b. Consul's: tier (ProxyDefaults
 * first), then priority (lower first), then name, then namespace. Two Istio peers: Istio's
 * (po_OverlapIstio), where what it cannot know (the Istio release, a creation time not seen
 * yet) falls back to priority, then the EnvoyFilters' names, and the message says the order is
 * not known rather than naming a winner. Total, so "who wins" never depends on the order the
 * peers were listed in. */
int po_Overlap_Order(const po_OverlapPeer *a, const po_OverlapPeer *b);

/* The overlaps of a reconcile's peers, prepared once: each patch's effect (its op and value as
 * JSON) computed once, not per pair. The check compares the patches of each own peer with those
 * of every peer it meets (po_Override_Conflicts), so its cost is bounded by a budget of patch
 * pairs, counted as (patches of own peers) x (patches of all peers): past kPo_OverlapMaxPairs
 * the check is skipped for that reconcile and every status says so, rather than one tenant's
 * 100 PropertyOverrides of 100 patches costing 10^8 comparisons on every reconcile of the
 * target. NULL when out of memory. */
enum { kPo_OverlapMaxPairs = 4000000 };
typedef struct po_OverlapIndex po_OverlapIndex;
po_OverlapIndex *po_OverlapIndex_New(const po_OverlapPeer *peers, size_t n, po_Arena *ar);
/* The same, answering from the memo of the target's last reconcile where it can (NULL: none). */
po_OverlapIndex *po_OverlapIndex_NewFrom(const po_OverlapPeer *peers, size_t n, const po_OverlapMemo *prev, po_Arena *ar);
/* What the po_Overlap_Of calls so far learnt, as the memo for the next reconcile (in ar); false
 * when out of memory. */
bool po_OverlapIndex_Memo(const po_OverlapIndex *ix, po_OverlapMemo *out, po_Arena *ar);
/* The pairs po_Overlap_Of compared with the engine so far. */
size_t po_OverlapIndex_Checks(const po_OverlapIndex *ix);
/* Whether a po_Overlap_Of call so far ran out of memory (its sentence may name an overlap that is
 * none): no status may be written from it. */
bool po_OverlapIndex_OutOfMemory(const po_OverlapIndex *ix);

/* The overlap memo of a target's last reconcile, kept in the target index (index.c): copied
 * into ar; false when there is none (or no room). Set replaces it (NULL forgets it); it goes
 * with the target's last PropertyOverride. */
bool po_TargetIndex_OverlapMemo(po_TargetIndex *ix, const char *target_key, po_OverlapMemo *out, po_Arena *ar);
void po_TargetIndex_SetOverlapMemo(po_TargetIndex *ix, const char *target_key, const po_OverlapMemo *m);

/* What ends the message of a PropertyOverride that overlaps more peers than it names. */
#define PO_OVERLAP_MORE "; and further PropertyOverrides (the first three are named)"
/* The overlaps of peer i with the peers it meets, as sentences into out (the first overlap with
 * each of the first three such peers, in the peers' order, then PO_OVERLAP_MORE when there are
 * more), and true; false with out "" when none, or false with a sentence saying the check was
 * skipped (the budget). Found on resolved field chains: the same field set differently, a parent
 * replaced or removed over another's field, or two members of one oneof. The sentence names the
 * other PropertyOverride (namespace/name, and its target when another), both patches, the field,
 * the order and why (tier, priority, or name), and which one wins where both match. It does not
 * change when a peer arrives after the ones named: the status is not rewritten for that. */
bool po_Overlap_Of(const po_OverlapIndex *ix, size_t i, char *out, size_t size);

/* The peers of the other kind of target whose entries reach the same proxies (cross.c): for a
 * ServiceDefaults reconcile, the PropertyOverrides of every ProxyDefaults; for a ProxyDefaults
 * one, those of every ServiceDefaults. Each takes part with its current generation when it is
 * accepted, points there, is not being deleted and the tenancy policy lets it write there.
 * `peers` has room for `first` peers of the caller's own (indexes 0..first-1, left to fill)
 * then these (first..first+n-1; those taking no part have no override); `held` the compiled
 * forms referenced, released by po_CrossPeers_Release, also after a failed load. Linear in the
 * PropertyOverrides listed under targets of that kind. False when memory ran out; st not Ok then
 * when it was a read (one of them cached but not readable: never taken for absent). */
typedef struct {
  po_OverlapPeer *peers;            /* in the arena */
  const po_CompiledEntry **held;    /* in the arena; n of them */
  size_t first, n;
} po_CrossPeers;
bool po_CrossPeers_Load(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind own_kind, size_t first, po_Arena *ar,
                        po_CrossPeers *out, po_CtlStatus *st);
void po_CrossPeers_Release(po_CrossPeers *c);

/* The Istio part of the peer ns/name of an Istio target of `kind`: where its EnvoyFilter is
 * (po_Istio_FilterName) and, read through io->get_filter, when it was created. In `ar`; NULL
 * when out of memory. */
po_OverlapIstio *po_OverlapIstio_Of(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *ns,
                                    const char *name, po_Arena *ar);

#endif
