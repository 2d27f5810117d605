/* The write phase of an Envoy Gateway target (eg_write.h): each PropertyOverride's
 * EnvoyPatchPolicy through po_EG_Plan and owned_write.h's sequence, then Envoy Gateway's status
 * of it. */
#include "eg_write.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "owned_write.h"
#include "po/base/json.h"

static po_OwnedKindOps policy_ops(const po_ReconcileIO *io) {
  return (po_OwnedKindOps){.write = io->write_policy, .get = io->get_policy, .plan = po_EG_Plan, .kind = "EnvoyPatchPolicy",
                           .bulky = "jsonPatches"};
}

static const char *policy_name(const char *ns, const char *name, po_Arena *ar) {
  po_CompiledOverride c = {.ns = ns, .name = name, .target_kind = kPo_TargetKind_Gateway};
  return po_EG_PolicyName(&c, ar);
}

/* The length of s's longest prefix of at most max bytes that ends on a UTF-8 character boundary
 * (a cut inside a character leaves invalid UTF-8, which the API server rewrites as U+FFFD: the
 * status would never read back as written). */
static int utf8_cut(const char *s, size_t max) {
  size_t n = strnlen(s, max + 1);
  if (n <= max) return (int)n;
  n = max;
  while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--; /* s[n] continues a character: cut before it */
  return (int)n;
}

/* Whether r is what our CRD admits as a condition reason (^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$,
 * at most 1024): the policy's status is anyone's with write access to it (and a CRD without the
 * pattern admits anything), and one reason the API server refuses fails our whole status write,
 * leaving the previous status (perhaps Programmed) standing. */
static bool reason_ok(const char *r) {
  size_t n = strlen(r);
  if (!n || n > 1024 || !((r[0] >= 'A' && r[0] <= 'Z') || (r[0] >= 'a' && r[0] <= 'z'))) return false;
  if (strspn(r, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_,:") != n) return false;
  return r[n - 1] != ',' && r[n - 1] != ':';
}

/* Envoy Gateway's word on a current policy, its strings copied (the cached tree goes back). */
static bool read_status(po_EGItem *it, const json_object *current, po_Arena *ar) {
  po_EGStatus s = po_EG_ReadStatus(current);
  it->eg.state = s.state;
  it->eg.reason = po_Arena_Printf(ar, "%s", reason_ok(s.reason) ? s.reason : ""); /* "": NotProgrammed */
  it->eg.message = po_Arena_Printf(ar, "%.*s", utf8_cut(s.message, 600), s.message);
  return it->eg.reason && it->eg.message;
}

static int by_name(const void *x, const void *y) {
  const po_EGItem *a = *(const po_EGItem *const *)x, *b = *(const po_EGItem *const *)y;
  return strcmp(a->name, b->name);
}

/* The Gateway's HTTPRoutes, read once for all its PropertyOverrides (only when one programs):
 * *routes holds them (the caller puts it), *rv and *nr list them. */
static bool read_routes(const po_ReconcileIO *io, const char *ns, const char *gateway_name, const po_EGItem *items,
                        size_t n, po_Arena *ar, json_object **routes, const json_object ***rv, size_t *nr) {
  *routes = NULL;
  *rv = NULL;
  *nr = 0;
  /* copied whole: the routes of the namespaces some PropertyOverride here follows (its own, the
   * Gateway's, and those its spec.routeNamespaces names); the rest as stubs */
  size_t nw = 0;
  for (size_t i = 0; i < n; i++) nw += 1 + (items[i].program ? items[i].program->route_namespace_count : 0);
  const char **whole = po_Arena_Malloc(ar, (nw ? nw : 1) * sizeof *whole);
  if (!whole) return false;
  nw = 0;
  whole[nw++] = ns;
  for (size_t i = 0; i < n; i++) {
    if (!items[i].program || items[i].skip || items[i].keep) continue;
    for (size_t j = 0; j < items[i].program->route_namespace_count; j++) whole[nw++] = items[i].program->route_namespaces[j];
  }
  /* with io->route, stubs only: the routes the bound lets in are fetched whole one at a time */
  if (!(*routes = io->gateway_routes(io->ctx, ns, gateway_name, whole, io->route ? 0 : nw))) return false;
  *nr = json_object_array_length(*routes);
  if (!(*rv = po_Arena_Malloc(ar, (*nr ? *nr : 1) * sizeof **rv))) return false;
  for (size_t r = 0; r < *nr; r++) (*rv)[r] = json_object_array_get_idx(*routes, r);
  return true;
}

/* The Gateway's bound given out by name (order), and how it is shared while the items are
 * written one by one. */
typedef struct {
  po_EGItem **order; /* the items by name: deterministic whatever order the index lists them */
  size_t *fixed;     /* per item of order: its listener and route entries set aside */
  size_t *need;      /* per item of order: what they take, set aside or not */
  size_t reserved;   /* set aside for the items not written yet */
  size_t left;       /* what the items written so far left of the Gateway's bound */
} Share;

/* Every PropertyOverride's listener and route entries are set aside first: what routes may
 * take of the Gateway's bound is what is left after all of them. */
static bool set_aside(Share *sh, po_EGItem *items, size_t n, bool builds_any, const json_object *gateway, po_Arena *ar) {
  sh->order = po_Arena_Malloc(ar, (n ? n : 1) * sizeof *sh->order);
  sh->fixed = po_Arena_Malloc(ar, (n ? n : 1) * sizeof *sh->fixed);
  sh->need = po_Arena_Malloc(ar, (n ? n : 1) * sizeof *sh->need);
  sh->reserved = 0;
  sh->left = kPo_EGMaxGatewayBytes;
  if (!sh->order) return false;
  for (size_t i = 0; i < n; i++) sh->order[i] = &items[i];
  qsort(sh->order, n, sizeof *sh->order, by_name);
  if (!sh->fixed || !sh->need) return false;
  for (size_t i = 0; i < n; i++) {
    const po_EGItem *it = sh->order[i];
    bool builds = builds_any && it->program && !it->skip && !it->keep;
    sh->need[i] = sh->fixed[i] = builds ? po_EG_FixedBytes(it->program, gateway, ar) : 0;
    /* by name while they fit: one that does not gets nothing set aside (it finds no room) */
    if (sh->reserved + sh->fixed[i] > kPo_EGMaxGatewayBytes) sh->fixed[i] = 0;
    sh->reserved += sh->fixed[i];
  }
  return true;
}

/* The live policy's generation, for an item whose policy stays as it is; false when the policy
 * is cached but could not be read (not "none live": its status would say so). */
static bool note_live(const po_ReconcileIO *io, po_EGItem *it, po_CtlStatus *st) {
  void *ref = NULL;
  const json_object *current = io->get_policy(io->ctx, it->policy_ns, it->policy_name, &ref, st);
  if (!current && st->code != kPo_Ctl_Ok) return false;
  it->live_generation = po_Owned_Generation(current, it->uid);
  if (current && io->release) io->release(io->ctx, ref);
  return true;
}

/* The i-th item's (by name) desired policy within what the Gateway has left; *desired NULL with
 * the outcome set when it has none (refused), *no_room when there is no room for it (what is
 * programmed stays). False when out of memory (st not Ok when it was the read of the policy). */
static bool build_policy(const po_ReconcileIO *io, Share *sh, size_t i, po_EGTopology *topo, po_Arena *ar,
                         json_object **desired, bool *no_room, po_CtlStatus *st) {
  po_EGItem *it = sh->order[i];
  const char *why = NULL;
  *no_room = false;
  sh->reserved -= sh->fixed[i];
  /* what the ones before left, less what is set aside for those after */
  size_t room = sh->left > sh->reserved ? sh->left - sh->reserved : 0;
  it->gateway_bound = room < kPo_EGMaxPolicyBytes;
  topo->max_bytes = it->gateway_bound ? (room > 2 ? room : 2) : kPo_EGMaxPolicyBytes;
  topo->gateway_share = it->gateway_bound;
  *desired = po_EG_EnvoyPatchPolicy(it->program, topo, ar, &why, &it->fit);
  if (!*desired && why && it->gateway_bound && sh->need[i] > topo->max_bytes) {
    /* no room, not a fault of its own: what is programmed stays (never deleted for room) */
    it->outcome = kPo_EGOutcome_NoRoom;
    it->why = why;
    *no_room = true;
    return note_live(io, it, st);
  }
  if (*desired && !po_Owned_MarkGeneration(*desired, it->program->generation)) {
    json_object_put(*desired);
    *desired = NULL;
    return false;
  }
  if (!*desired && !why) return false;
  if (!*desired) {
    it->outcome = kPo_EGOutcome_Refused;
    it->why = why;
  } else {
    it->built = true;
    sh->left -= it->fit.bytes <= sh->left ? it->fit.bytes : sh->left;
  }
  return true;
}

/* The item's policy made what desired says (NULL: none of ours), through owned_write.h's
 * sequence, and Envoy Gateway's word on it when it was already current. Takes desired. False
 * when out of memory (st not Ok when it was a read). */
static bool converge(const po_ReconcileIO *io, po_TargetIndex *ix, const po_OwnedKindOps *k, const char *ns,
                     po_EGItem *it, json_object *desired, po_Arena *ar, int *writes, po_CtlStatus *st) {
  void *ref = NULL;
  const json_object *current = io->get_policy(io->ctx, it->policy_ns, it->policy_name, &ref, st);
  if (!current && st->code != kPo_Ctl_Ok) { /* cached, not readable: would be created over */
    json_object_put(desired);
    return false;
  }
  if (it->verify && desired && !po_Owned_Holds(current, desired, it->uid, kPo_Owned_EnvoyPatchPolicy)) {
    /* a record not shown to be ours programs nothing: the EnvoyPatchPolicy stays as it is */
    it->outcome = kPo_EGOutcome_Kept;
    it->mismatch = true;
    it->live_generation = po_Owned_Generation(current, it->uid);
    if (current && io->release) io->release(io->ctx, ref);
    json_object_put(desired);
    return true;
  }
  po_OwnedOutcome o;
  int before = *writes;
  bool ok = po_Owned_CarryOut(io, ix, k, it->policy_ns, it->policy_name, (po_OwnedFor){ns, it->name}, it->uid, current,
                              desired, writes, &o);
  if (!ok && o.err[0]) po_CtlStatus_Set(st, o.code, "%s", o.err); /* its PropertyOverride not read */
  if (ok && o.foreign) {
    it->outcome = kPo_EGOutcome_Foreign;
    it->why = o.why;
  } else if (ok && o.failed) {
    it->outcome = kPo_EGOutcome_Failed;
    it->conflict = o.conflict;
    it->err = po_Owned_Text(ar, o.err, sizeof o.err);
    if (o.unbound_uid[0]) it->unbound_uid = po_Owned_Text(ar, o.unbound_uid, sizeof o.unbound_uid);
    if (!it->err || (o.unbound_uid[0] && !it->unbound_uid)) ok = false; /* out of memory */
  } else if (ok && it->outcome == kPo_EGOutcome_Ok && desired) {
    /* written now: Envoy Gateway answers through the policy's watch event, which re-enqueues */
    it->written = *writes != before;
    if (!it->written) ok = read_status(it, current, ar);
  }
  if (current && io->release) io->release(io->ctx, ref);
  json_object_put(desired);
  return ok;
}

/* The i-th item by name: its outcome when it programs nothing, else its policy built and written. */
static bool write_item(const po_ReconcileIO *io, po_TargetIndex *ix, const po_OwnedKindOps *k, const char *ns,
                       const json_object *gateway, Share *sh, size_t i, po_EGTopology *topo, po_Arena *ar, int *writes,
                       po_CtlStatus *st) {
  po_EGItem *it = sh->order[i];
  it->policy_ns = ns;
  if (!(it->policy_name = policy_name(ns, it->name, ar))) return false;
  if (!io->get_policy || !io->write_policy) {
    it->outcome = kPo_EGOutcome_Disabled;
    return true;
  }
  if (it->skip || it->keep) {
    it->outcome = it->skip ? kPo_EGOutcome_Skipped : kPo_EGOutcome_Kept;
    return true;
  }
  json_object *desired = NULL;
  if (it->program && !gateway) {
    it->outcome = kPo_EGOutcome_NoGateway;
  } else if (it->program) {
    bool no_room;
    if (!build_policy(io, sh, i, topo, ar, &desired, &no_room, st)) return false;
    if (no_room) return true;
  }
  return converge(io, ix, k, ns, it, desired, ar, writes, st);
}

bool po_EG_Write(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *gateway_name,
                 const json_object *gateway, po_EGItem *items, size_t n, po_Arena *ar, int *writes,
                 po_CtlStatus *st) {
  po_CtlStatus_Clear(st);
  po_OwnedKindOps k = policy_ops(io);
  bool enabled = io->get_policy && io->write_policy;
  json_object *routes = NULL;
  const json_object **rv = NULL;
  size_t nr = 0;
  bool need_routes = false;
  for (size_t i = 0; i < n && enabled && gateway; i++) need_routes |= items[i].program && !items[i].skip && !items[i].keep;
  if (need_routes && io->gateway_routes && !read_routes(io, ns, gateway_name, items, n, ar, &routes, &rv, &nr)) {
    json_object_put(routes);
    return false;
  }
  po_EGTopology topo = {.gateway = gateway, .routes = rv, .route_count = nr, .route_rules = io->route, .route_ctx = io->ctx};
  Share sh;
  bool ok = set_aside(&sh, items, n, enabled && gateway, gateway, ar);
  for (size_t i = 0; i < n && ok; i++) ok = write_item(io, ix, &k, ns, gateway, &sh, i, &topo, ar, writes, st);
  json_object_put(routes);
  return ok;
}

bool po_EG_Sweep(const po_ReconcileIO *io, po_TargetIndex *ix, const char *ns, const char *name, const char *uid,
                 po_Arena *ar, int *writes, po_CtlStatus *st) {
  po_OwnedKindOps k = policy_ops(io);
  if (!k.get || !k.write) return true; /* Envoy Gateway not enabled: no name to make */
  const char *pname = policy_name(ns, name, ar);
  if (!pname) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
    return false;
  }
  return po_Owned_Sweep(io, ix, &k, ns, pname, (po_OwnedFor){ns, name}, uid, writes, st);
}
