/* The PropertyOverrides of the other kind of target whose entries reach the same proxies as a
 * target's own: Consul applies the ProxyDefaults `global` entries to every service, before its
 * ServiceDefaults ones (agent/configentry/resolve.go). For a ServiceDefaults, those of every
 * ProxyDefaults; for the ProxyDefaults, those of every ServiceDefaults. Read through the cache
 * (io), compiled once per generation (the index's cache), as overlap peers (overlap.h). */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"
#include "overlap.h"
#include "po/base/json.h"
#include "run.h"

/* One PropertyOverride listed under `key`, appended to out when it has a compiled form (a peer
 * with no override when that form is not accepted); *oom when memory ran out (st says where when
 * it was its read: cached, not readable, which is not absent). */
static void peer_of(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind kind, const char *key, const char *po,
                    po_Arena *ar, po_CrossPeers *out, bool *oom, po_CtlStatus *st) {
  const char *slash = strchr(po, '/');
  if (!slash) return;
  char ns[254], k[600], why[256];
  snprintf(ns, sizeof ns, "%.*s", (int)(slash - po), po);
  /* one the tenancy policy refuses writes nothing there: no entry of it reaches a proxy */
  if (!po_Tenancy_Allows(io->tenancy, kind, ns, why, sizeof why)) return;
  void *ref = NULL;
  const json_object *obj = io->get_override(io->ctx, ns, slash + 1, &ref, st);
  if (!obj && st->code != kPo_Ctl_Ok) *oom = true;
  if (!obj) return;
  po_Reconcile_OverrideKey(obj, k, sizeof k);
  bool deleting = po_Json_Get(po_Json_Get(obj, "metadata"), "deletionTimestamp") != NULL;
  /* only a current generation that points here (not one held for its last valid generation) */
  const po_CompiledEntry *ce =
      !deleting && strcmp(k, key) == 0 ? po_TargetIndex_Compiled(ix, obj, kPo_CompileWhich_Current, oom) : NULL;
  if (ce && !ce->c.accepted && !*oom) {
    /* An invalid generation keeps its last valid one live there (the status record, compiled
     * again, as that target's reconcile plans it): that entry is what reaches the proxies. */
    const po_CompiledEntry *rec = po_TargetIndex_Compiled(ix, obj, kPo_CompileWhich_Record, oom);
    if (rec && rec->c.accepted && strcmp(rec->target_key, key) == 0) {
      po_CompiledEntry_Release(ce);
      ce = rec;
    } else {
      po_CompiledEntry_Release(rec);
    }
  }
  if (io->release) io->release(io->ctx, ref);
  if (!ce) return;
  out->held[out->n] = ce;
  po_OverlapPeer *p = &out->peers[out->first + out->n];
  out->n++;
  *p = (po_OverlapPeer){0}; /* no override: takes no part */
  if (!ce->c.accepted) return;
  /* nor one whose targetRef.namespace is refused: it writes nothing anywhere */
  if (!po_Tenancy_AllowsNamespace(io->tenancy, ce->c.target_kind, ns, ce->c.target_ns, why, sizeof why)) return;
  const char *s1 = strchr(key, '/');
  *p = (po_OverlapPeer){
      .ns = po_Arena_Printf(ar, "%s", ns), .name = po_Arena_Printf(ar, "%s", slash + 1), .override = ce->c.override,
      .tier = po_TargetKind_MeshWide(kind) ? kPo_OverlapTier_ProxyDefaults : kPo_OverlapTier_ServiceDefaults,
      .priority = ce->c.priority, .target = po_Arena_Printf(ar, "%s", key),
      .where = s1 ? po_Arena_Printf(ar, "%.*s %s", (int)(s1 - key), key, s1 + 1) : ""};
  p->id = po_Overlap_PeerId(ce, p->tier, key);
  if (!p->ns || !p->name || !p->target || !p->where) *oom = true;
  /* what the mesh's order needs (Istio: its EnvoyFilter, located as its own target's reconcile
   * does, by the key's namespace) */
  const char *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
  const char *kns = s2 ? po_Arena_Strndup(ar, s1 + 1, (size_t)(s2 - s1 - 1)) : ns;
  const po_ReconcileMesh *m = po_ReconcileMesh_For(kind);
  if (!*oom && m->overlap_peer && (!kns || !m->overlap_peer(io, ix, kind, kns, p, ar))) *oom = true;
}

bool po_CrossPeers_Load(const po_ReconcileIO *io, po_TargetIndex *ix, po_TargetKind own_kind, size_t first, po_Arena *ar,
                        po_CrossPeers *out, po_CtlStatus *st) {
  *out = (po_CrossPeers){.first = first};
  po_CtlStatus_Clear(st);
  /* The other tier of the same mesh: Consul's ProxyDefaults and ServiceDefaults, Istio's Mesh
   * (root namespace EnvoyFilters) and Service ones. */
  po_TargetKind kind;
  switch (own_kind) {
    case kPo_TargetKind_ProxyDefaults: kind = kPo_TargetKind_ServiceDefaults; break;
    case kPo_TargetKind_Service: kind = kPo_TargetKind_IstioMesh; break;
    case kPo_TargetKind_IstioMesh: kind = kPo_TargetKind_Service; break;
    default: kind = kPo_TargetKind_ProxyDefaults; break;
  }
  size_t count;
  char *block = po_TargetIndex_LinksOfKind(ix, kind, &count);
  if (!block) return false;
  out->peers = po_Arena_Malloc(ar, (first + count + 1) * sizeof *out->peers);
  out->held = po_Arena_Malloc(ar, (count + 1) * sizeof *out->held);
  bool oom = !out->peers || !out->held;
  po_CtlStatus read;
  const char *p = block;
  for (size_t i = 0; !oom && i < count; i++) {
    const char *key = p, *po = key + strlen(key) + 1;
    p = po + strlen(po) + 1;
    peer_of(io, ix, kind, key, po, ar, out, &oom, &read);
    if (oom && read.code != kPo_Ctl_Ok) *st = read;
  }
  free(block);
  return !oom;
}

void po_CrossPeers_Release(po_CrossPeers *c) {
  for (size_t i = 0; c->held && i < c->n; i++) po_CompiledEntry_Release(c->held[i]);
  c->n = 0;
}
