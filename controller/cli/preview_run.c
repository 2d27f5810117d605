/* preview's run and report (cmd_preview.c parses the command line, reads the inputs and the dump
 * and chooses the snapshot judging the proxy; preview.h, po_Preview_Run).
 *
 *   each active resource classified by the mesh's naming (po_Mesh_Classify) -> every override
 *   applied in order, as Consul runs its extensions, each one's matching patches in order with
 *   errors collected, then Envoy's rules on the messages the patches created
 *   (po_Override_ApplyChecked), on the resource moved to the judging snapshot (po_Message_As) ->
 *   a diff per changed resource, the resources no patch matched, the patches that matched
 *   nothing (and why), and the errors.
 * Cost: linear in the dump plus, per changed resource, its JSON twice, two moves between
 * snapshots when the judging one is not the dump's, and a diff bounded by kPo_DiffMaxEdits.
 * Memory: a resource is decoded, patched, printed and diffed in an arena of its own, freed
 * before the next (po_DumpResource_DecodeIn): peak RSS about 2x the dump's text, 2.7x with
 * every cluster changed (t_hostile_files.sh holds it under 4x); the report spilled to a
 * temporary file, not kept (t_adv_hostile.sh).
 * Laid out as it runs: the pieces (ordering, naming, the spilled report's files), then "run" (a
 * Run's steps, each one resource or one list at a time) and "report" (the summary and the
 * spilled parts put together). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gitops.h"
#include "preview.h"

/* Fields a resource carries that the judging snapshot lacks, named one by one; past it, counted */
enum { kMaxLacked = 16 };

static const char kLimits[] =
    "the dump already holds the extensions that are live: a patch removed from a new generation "
    "cannot be shown reverting";
static const char kLimitsEds[] = "endpoint dumps are rebuilt by Envoy from its host sets";


/* The order Consul runs a proxy's extensions in (docs/crd.md, "Priority and conflicts"): the
 * ProxyDefaults `global` entries first, then the service's ServiceDefaults entries; within a
 * target ours follow spec.priority (lower first), then the PropertyOverride's name (the
 * controller's order, controller/meshes/consul/src/consul.c). Not the order of the inputs: a later
 * patch wins a conflict, so the inputs' order would show the wrong winner. */
int po_PreviewOverride_Compare(const void *x, const void *y) {
  const po_PreviewOverride *a = x, *b = y;
  int ka = a->c->target_kind == kPo_TargetKind_ProxyDefaults ? 0 : 1, kb = b->c->target_kind == kPo_TargetKind_ProxyDefaults ? 0 : 1;
  if (ka != kb) return ka - kb;
  int d = strcmp(a->c->ns, b->c->ns);
  if (!d) d = strcmp(a->c->target_name, b->c->target_name);
  if (d) return d;
  if (a->c->priority != b->c->priority) return a->c->priority < b->c->priority ? -1 : 1;
  d = strcmp(a->c->name, b->c->name);
  return d ? d : (a->index > b->index) - (a->index < b->index);
}

typedef struct {
  po_DumpResource *r; /* decoded (po_DumpResource_Decode) only when a patch matches it */
  po_MeshResource m;
} Res;

static int type_rank(po_ResourceType t) {
  switch (t) {
    case kPo_ResourceType_Cluster: return 0;
    case kPo_ResourceType_ClusterLoadAssignment: return 1;
    case kPo_ResourceType_Listener: return 2;
    case kPo_ResourceType_Route: return 3;
    default: return 4;
  }
}

static int by_resource(const void *x, const void *y) {
  const Res *a = x, *b = y;
  int d = type_rank(a->r->type) - type_rank(b->r->type);
  if (d) return d;
  int c = strcmp(a->r->name, b->r->name);
  return c ? c : (int)a->r->state - (int)b->r->state;
}

static const char *type_name(po_ResourceType t) {
  switch (t) {
    case kPo_ResourceType_Cluster: return "cluster";
    case kPo_ResourceType_ClusterLoadAssignment: return "cluster-load-assignment";
    case kPo_ResourceType_Listener: return "listener";
    case kPo_ResourceType_Route: return "route";
    default: return "unknown";
  }
}

static const char *dir_name(po_TrafficDirection d) {
  return d == kPo_TrafficDirection_Inbound ? "inbound" : d == kPo_TrafficDirection_Outbound ? "outbound" : "unknown";
}

/* "name" in the default namespace and partition, "namespace/name" in the default partition,
 * else "partition/namespace/name". */
static const char *svc_name(const po_ServiceName *s, po_Arena *a) {
  const char *ns = s->namespace_ && *s->namespace_ ? s->namespace_ : "default";
  const char *pt = s->partition && *s->partition ? s->partition : "default";
  if (strcmp(pt, "default")) return po_Arena_Printf(a, "%s/%s/%s", pt, ns, s->name);
  return strcmp(ns, "default") ? po_Arena_Printf(a, "%s/%s", ns, s->name) : s->name;
}

/* Text from the dump (resource names, and what is read out of them) as the text report prints
 * it: control characters escaped (\n, \t, \xNN). A dump is input like any other - in the
 * pull-request workflow of docs/gitops.md it is a file of the repository - and a name carrying
 * a newline would print lines of its own: a forged diff, or the end of the ```diff fence the
 * report is pasted into and markdown after it; an ESC, terminal escapes. The JSON report
 * escapes by itself. */
static const char *shown(const char *s, po_Arena *a) {
  const char *o = po_Cli_Shown(s, a);
  return o ? o : "(a name with control characters)";
}

static const char *describe_raw(const Res *r, po_Arena *a);
/* NULL when out of memory (shown() would print it as nothing: a line missing its words) */
static const char *describe(const Res *r, po_Arena *a) {
  const char *d = describe_raw(r, a);
  return d ? shown(d, a) : NULL;
}

static const char *describe_raw(const Res *r, po_Arena *a) {
  if (r->m.has_service) {
    return po_Arena_Printf(a, "%s, service %s%s%s", dir_name(r->m.direction), svc_name(&r->m.service, a),
                           r->m.note ? "; " : "", r->m.note ? r->m.note : "");
  }
  if (r->m.note) return po_Arena_Printf(a, "%s; %s", dir_name(r->m.direction), r->m.note);
  return dir_name(r->m.direction);
}

/* Why patch p matched no resource: the nearest miss, in the filter's own order (type, then
 * direction, then service), naming what the dump does have. Linear in the resources. */
static const char *why_unmatched(const po_Patch *p, const Res *rs, size_t n, po_Arena *a) {
  po_ResourceType t = po_ResourceType_Parse(p->resource_filter.resource_type);
  po_TrafficDirection d = po_TrafficDirection_Parse(p->resource_filter.traffic_direction);
  size_t of_type = 0, of_dir = 0;
  const char *seen[5];
  size_t nseen = 0;
  bool more = false;
  for (size_t i = 0; i < n; i++) {
    if (rs[i].r->type != t) continue;
    of_type++;
    if (rs[i].m.direction != d) continue;
    of_dir++;
    if (!rs[i].m.has_service) continue;
    const char *s = svc_name(&rs[i].m.service, a);
    bool dup = false;
    for (size_t k = 0; k < nseen && !dup; k++) dup = !strcmp(seen[k], s);
    if (dup) continue;
    if (nseen < 5) seen[nseen++] = s;
    else more = true;
  }
  if (!of_type) {
    return po_Arena_Printf(a, "the dump has no active %s%s", type_name(t),
                           t == kPo_ResourceType_ClusterLoadAssignment ? " (Envoy dumps endpoints only when asked: /config_dump?include_eds)" : "");
  }
  if (!of_dir) {
    return po_Arena_Printf(a, "wrong direction: the dump's %zu %s resources are all %s", of_type, type_name(t),
                           dir_name(d == kPo_TrafficDirection_Inbound ? kPo_TrafficDirection_Outbound : kPo_TrafficDirection_Inbound));
  }
  char list[512] = "";
  size_t at = 0;
  for (size_t k = 0; k < nseen && at < sizeof list; k++) {
    int w = snprintf(list + at, sizeof list - at, "%s%s", k ? ", " : "", seen[k]);
    at += w > 0 ? (size_t)w : 0;
  }
  if (more && at < sizeof list) snprintf(list + at, sizeof list - at, " and others");
  return po_Arena_Printf(a, "no such service: no %s %s of the services named (services the dump's %s %ss belong to: %s)",
                         dir_name(d), type_name(t), dir_name(d), type_name(t), nseen ? list : "none");
}

/* ---- the --output json report, built as a value tree (printed with sorted keys) ---- */

static po_Value *str(po_Arena *a, const char *s) { return po_Value_NewString(a, s ? s : "", strlen(s ? s : "")); }

static po_Value *res_value(const Res *r, po_Arena *a) {
  po_Value *v = po_Value_NewMap(a);
  po_Value_MapPut(a, v, "type", str(a, type_name(r->r->type)));
  po_Value_MapPut(a, v, "name", str(a, r->r->name));
  po_Value_MapPut(a, v, "state", str(a, po_DumpState_Name(r->r->state)));
  po_Value_MapPut(a, v, "direction", str(a, dir_name(r->m.direction)));
  if (r->m.has_service) {
    po_Value *s = po_Value_NewMap(a);
    po_Value_MapPut(a, s, "name", str(a, r->m.service.name));
    po_Value_MapPut(a, s, "namespace", str(a, r->m.service.namespace_));
    po_Value_MapPut(a, s, "partition", str(a, r->m.service.partition));
    po_Value_MapPut(a, v, "service", s);
  }
  if (r->m.note) po_Value_MapPut(a, v, "note", str(a, r->m.note));
  return v;
}


/* Guesses Consul's local datacenter when neither given nor in the bootstrap: the one datacenter
 * the dump's upstream SNIs name, or none when they name several (failover, redirects, ?dc=
 * upstreams). It decides nothing: every datacenter's SNI is its service's (mesh.c); it only
 * words the summary and the note of a ?dc= upstream's listener and route. */
static const char *local_dc(const Res *rs, size_t n) {
  const char *dc = NULL;
  for (size_t i = 0; i < n; i++) {
    const char *d = rs[i].m.datacenter;
    if (!d) continue;
    if (!dc) dc = d;
    else if (strcmp(dc, d)) return NULL;
  }
  return dc;
}

/* The ClusterLoadAssignment a cluster carries inline, as Consul's BasicEnvoyExtender sees it
 * after the cluster's own patches: classified by its cluster_name (local_app inbound, else by
 * SNI) and given the cluster-load-assignment patches ("updates can come from either" CDS or
 * EDS). NULL when the cluster has none. */
static po_Message *inline_cla(const po_PreviewOptions *opt, const char *dc, const Res *r, po_Message *msg, po_Arena *a,
                              po_MeshResource *m) {
  if (r->r->type != kPo_ResourceType_Cluster) return NULL;
  const char *name = NULL;
  po_Message *la = po_Message_InlineLoadAssignment(msg, a, &name);
  if (!la) return NULL;
  po_DumpResource d = {.type = kPo_ResourceType_ClusterLoadAssignment, .state = r->r->state, .name = name, .message = la};
  return po_Mesh_Classify(opt->mesh, dc, &d, a, m) ? la : NULL;
}

/* The temporary file's whole content to out; false (said) when it cannot be read back. */
static bool copy_out(FILE *tmp, FILE *out) {
  char buf[1 << 16];
  size_t got;
  rewind(tmp);
  while ((got = fread(buf, 1, sizeof buf, tmp)) > 0) fwrite(buf, 1, got, out);
  if (ferror(tmp)) {
    fprintf(stderr, "propertyoverride preview: cannot read back the report's temporary file: %s\n", strerror(errno));
    return false;
  }
  return true;
}

/* One entry of a JSON list the report prints later (splice): as the whole report would print
 * it, an item of a root member (depth 2, 4 spaces), every line indented (JSON strings hold no
 * newline), after a comma from the second on. false when out of memory. */
static bool spill_entry(FILE *f, size_t *n, const po_Value *v, po_Arena *a) {
  char *e = po_Preview_PrettyValue(v, a);
  /* a put or a string the arena could not allocate left a piece out: no entry, out of memory */
  if (!e || po_Engine_OutOfMemory(a)) return false;
  fputs((*n)++ ? ",\n    " : "    ", f);
  for (char *line = e, *nl; *line; line = nl + 1) {
    nl = strchr(line, '\n');
    if (!nl) { /* never: the printer ends its text with a newline */
      fputs(line, f);
      break;
    }
    fwrite(line, 1, (size_t)(nl - line), f);
    if (nl[1]) fputs("\n    ", f);
  }
  return true;
}

/* The root's text from *s up to the member `key`, printed empty ("[]": the one line at depth 1
 * that names it), then the n entries spilled to f in its place; *s moves past it. 0, -1 when the
 * member is not there (out of memory upstream), -3 when f cannot be read back (said). */
static int splice(FILE *out, const char **s, const char *key, FILE *f, size_t n) {
  char want[64];
  snprintf(want, sizeof want, "\n  \"%s\": []", key);
  const char *at = strstr(*s, want);
  if (!at) return -1;
  at += strlen(want) - 2; /* at the "[]" */
  fwrite(*s, 1, (size_t)(at - *s), out);
  if (n) {
    fputs("[\n", out);
    if (!copy_out(f, out)) return -3;
    fputs("\n  ]", out);
  } else {
    fputs("[]", out);
  }
  *s = at + 2;
  return 0;
}

/* ================================ run ================================
 * One preview's state: what it reads (the options, the overrides in apply order, the dump's
 * resources) and what it writes as it goes (the spilled entries, the counts, the JSON lists).
 * Each step below returns 0, -1 (out of memory: the caller says so) or -3 (said already: a
 * resource that cannot be printed, a temporary file that cannot be made, written or read). */
typedef struct {
  const po_PreviewOptions *opt;
  po_ConfigDump *dump;
  po_Arena *a;
  FILE *out;
  po_PreviewOverride *pos; /* the overrides applied to this proxy, in apply order */
  size_t npo;
  const po_PreviewOverride **aside; /* Consul: another service's ServiceDefaults', set aside */
  size_t naside;
  const char *self; /* the service whose proxy this is (Consul's bootstrap), or NULL */
  const char *dc;   /* Consul's local datacenter, or NULL */
  Res *rs;          /* the active resources, sorted */
  size_t n;
  Res *others; /* warming and draining ones */
  size_t nother, nstatic;
  bool *hit;    /* per active resource: some patch matches it */
  bool any_cla; /* some patch is a cluster-load-assignment one (inline load_assignments matter) */
  FILE *body;   /* the changed resources' diffs or JSON entries */
  FILE *unres;  /* --output json: the unmatched resources' entries */
  size_t jn, jun; /* JSON entries written to body, to unres */
  po_Value *jres, *junres, *jerrs, *junp;
  size_t changed, unmatched, errors, nunp;
  char *unp_text; /* the text report's lines of the patches that matched nothing (malloc'd) */
} Run;

/* Consul runs a ServiceDefaults' extensions on that service's proxies only (ProxyDefaults'
 * on all): when the dump's bootstrap says whose proxy this is, the others are set aside. */
static int set_aside(Run *r, po_PreviewOverride *all, size_t nall) {
  r->self = r->opt->mesh == kPo_Mesh_Consul ? r->dump->consul_service : NULL;
  r->pos = po_Arena_Malloc(r->a, (nall ? nall : 1) * sizeof *r->pos);
  r->aside = po_Arena_Malloc(r->a, (nall ? nall : 1) * sizeof *r->aside);
  if (!r->pos || !r->aside) return -1;
  for (size_t p = 0; p < nall; p++) {
    const po_CompiledOverride *c = all[p].c;
    if (r->self && c->target_kind == kPo_TargetKind_ServiceDefaults && strcmp(c->target_name, r->self)) {
      r->aside[r->naside++] = &all[p];
    } else {
      r->pos[r->npo++] = all[p];
    }
  }
  bool any_cla = false;
  for (size_t p = 0; p < r->npo; p++) {
    for (size_t k = 0; k < r->pos[p].c->args->patch_count; k++) {
      const char *t = r->pos[p].c->args->patches[k].resource_filter.resource_type;
      any_cla |= t && strcmp(t, "cluster-load-assignment") == 0;
    }
  }
  r->any_cla = any_cla;
  return 0;
}

/* The dump's resources by state, each active one classified by the mesh's naming, sorted. */
static int collect(Run *r) {
  size_t nactive = 0;
  /* each list sized for what it holds: a record per resource is most of preview's memory on a
   * dump of many small resources */
  for (size_t i = 0; i < r->dump->count; i++) nactive += r->dump->resources[i].state == kPo_DumpState_Active;
  size_t nrest = r->dump->count - nactive;
  r->rs = po_Arena_Malloc(r->a, (nactive ? nactive : 1) * sizeof *r->rs);
  r->others = po_Arena_Malloc(r->a, (nrest ? nrest : 1) * sizeof *r->others);
  r->hit = po_Arena_Malloc(r->a, (nactive ? nactive : 1) * sizeof *r->hit);
  if (!r->rs || !r->others || !r->hit) return -1;
  for (size_t i = 0; i < r->dump->count; i++) {
    po_DumpResource *d = &r->dump->resources[i];
    if (d->state == kPo_DumpState_Static) r->nstatic++;
    else if (d->state == kPo_DumpState_Active) r->rs[r->n++].r = d;
    else r->others[r->nother++].r = d;
  }
  /* The local datacenter: --datacenter, else what Consul's bootstrap in the dump says, else the
   * one the upstream SNIs name (a first classification without one finds them). */
  bool consul = r->opt->mesh == kPo_Mesh_Consul;
  r->dc = r->opt->datacenter ? r->opt->datacenter : consul ? r->dump->consul_datacenter : NULL;
  bool again = true;
  for (int pass = 0; pass < 2 && again; pass++) {
    for (size_t i = 0; i < r->n; i++) {
      if (!po_Mesh_Classify(r->opt->mesh, r->dc, r->rs[i].r, r->a, &r->rs[i].m)) return -1;
    }
    again = pass == 0 && consul && !r->dc;
    if (again) r->dc = local_dc(r->rs, r->n);
    again = again && r->dc;
  }
  qsort(r->rs, r->n, sizeof *r->rs, by_resource);
  qsort(r->others, r->nother, sizeof *r->others, by_resource);
  r->jres = po_Value_NewList(r->a);
  r->junres = po_Value_NewList(r->a);
  r->jerrs = po_Value_NewList(r->a);
  return r->jres && r->junres && r->jerrs ? 0 : -1;
}

/* A temporary file for the report, or -1 (out of memory) / -3 (said). */
static int open_spill(FILE **f) {
  *f = tmpfile();
  if (*f) return 0;
  if (errno == ENOMEM) return -1; /* said as out of memory */
  fprintf(stderr, "propertyoverride preview: cannot create a temporary file for the report in /tmp: %s\n", strerror(errno));
  return -3;
}

/* Changed resources go to an unlinked temporary file first, copied out after the summary (the
 * text report prints its summary first; the JSON report's keys are sorted, "resources" among
 * them): held in memory, the diffs made preview's memory its output's, 81 MB of text and 210 MB
 * of JSON trees for a 1.16 MB dump. JSON entries are written as each resource is done, its tree
 * freed with it. */
static int open_spills(Run *r) {
  int rc = open_spill(&r->body);
  if (!rc && r->opt->json) rc = open_spill(&r->unres);
  return rc;
}

/* Whether the controller's object for po would reach the resource at all, whatever its patches'
 * filters: with Envoy Gateway, a PropertyOverride's EnvoyPatchPolicy holds entries for the
 * clusters of the HTTPRoute rules of the namespaces it follows (its own, the Gateway's, and
 * spec.routeNamespaces', "*" every one) and for no other cluster (docs/crd.md, Envoy Gateway); the
 * Gateway's listeners and route configurations it reaches all. Every other mesh: all. */
static bool reaches(const Run *r, const po_PreviewOverride *po, const Res *res, po_Arena *a) {
  if (r->opt->mesh != kPo_Mesh_EnvoyGateway) return true;
  if (res->r->type != kPo_ResourceType_Cluster && res->r->type != kPo_ResourceType_ClusterLoadAssignment) return true;
  const char *ns = po_Mesh_EGRouteNamespace(res->r->name, a);
  const po_CompiledOverride *c = po->c;
  if (!ns) return false;
  if (c->ns && !strcmp(c->ns, ns)) return true;
  for (size_t i = 0; i < c->route_namespace_count; i++) {
    if (!strcmp(c->route_namespaces[i], "*") || !strcmp(c->route_namespaces[i], ns)) return true;
  }
  return false;
}

/* Whether some patch matches the resource (only those are decoded, printed and patched). A
 * cluster's inline load_assignment is looked at (which decodes the cluster) only when a
 * cluster-load-assignment patch exists: otherwise names decide alone. A cluster that does not
 * decode counts as matched, so that the error is reported when it is previewed. */
static int resource_matches(const Run *r, const Res *res, bool *matches) {
  po_Payload pl = {res->m.resource_type, res->m.direction, res->m.has_service ? &res->m.service : NULL};
  po_MeshResource lm = {0};
  po_Arena *probe = po_Arena_New();
  if (!probe) return -1;
  int rc = 0;
  bool has_la = false;
  *matches = false;
  if (r->any_cla && res->r->type == kPo_ResourceType_Cluster) {
    po_Status dst;
    po_Status_Clear(&dst);
    po_Message *cm = po_DumpResource_DecodeIn(res->r, probe, &dst);
    if (!cm && (dst.code == kPo_Status_NoMemory || po_Engine_OutOfMemory(probe))) rc = -1;
    else if (!cm) *matches = true;
    else has_la = inline_cla(r->opt, r->dc, res, cm, probe, &lm) != NULL;
  }
  po_Payload lp = {kPo_ResourceType_ClusterLoadAssignment, lm.direction, lm.has_service ? &lm.service : NULL};
  for (size_t p = 0; !rc && p < r->npo && !*matches; p++) {
    if (!reaches(r, &r->pos[p], res, probe)) continue;
    const po_Arguments *args = r->pos[p].c->args;
    for (size_t k = 0; k < args->patch_count && !*matches; k++) {
      *matches = po_ResourceFilter_Matches(&args->patches[k].resource_filter, &pl) ||
                 (has_la && po_ResourceFilter_Matches(&args->patches[k].resource_filter, &lp));
    }
  }
  po_Arena_Free(probe);
  return rc;
}

/* What happened to one resource: the patches that applied (the JSON report's list, in the
 * resource's arena; the text's line, built in it by doubling - one string per patch, each a
 * copy of the last, made one PropertyOverride of 100 patches on 10,000 clusters cost 3 GB and
 * 42 s), and its errors (in the run's arena: the report's list keeps them). */
typedef struct {
  po_Arena *sa; /* the resource's own arena */
  po_Value *applied;
  po_TextBuf text;
  po_Value *errs;
  /* the fields the resource carries that the judging snapshot lacks (po_Message_Lacked) */
  const char *lacked[kMaxLacked];
  size_t nlacked;
} Applied;

/* Records patch k of override p as applied (pass 1: on the cluster's inline load_assignment). */
static void note_applied(Applied *ap, const po_PreviewOverride *po, size_t k, int pass) {
  if (ap->applied) {
    po_Value *e = po_Value_NewMap(ap->sa);
    po_Value_MapPut(ap->sa, e, "override", str(ap->sa, po->label));
    po_Value_MapPut(ap->sa, e, "patch", po_Value_NewInt(ap->sa, (int64_t)k));
    if (pass) po_Value_MapPut(ap->sa, e, "on", str(ap->sa, "load_assignment"));
    po_Value_ListAppend(ap->sa, ap->applied, e);
  } else {
    char idx[64];
    snprintf(idx, sizeof idx, " patches[%zu]%s", k, pass ? " (on its load_assignment)" : "");
    po_TextBuf_Puts(&ap->text, ap->text.len ? ", " : "");
    po_TextBuf_Puts(&ap->text, po->label);
    po_TextBuf_Puts(&ap->text, idx);
  }
}

/* Override po's patches that match tp applied to target, then Envoy's rules on the messages
 * they created; failures and broken rules are the resource's errors. */
static int apply_one(Run *r, po_PreviewOverride *po, po_Message *target, const po_Payload *tp, int pass, Applied *ap) {
  const po_Arguments *args = po->c->args;
  bool any = false;
  for (size_t k = 0; k < args->patch_count; k++) {
    if (!po_ResourceFilter_Matches(&args->patches[k].resource_filter, tp)) continue;
    po->matched[k]++;
    any = true;
    note_applied(ap, po, k, pass);
  }
  if (!any) return 0;
  po_Status st;
  po_Status_Clear(&st);
  po_Diagnostics *rules = po_Diagnostics_New(ap->sa); /* its messages are copied into r->a below */
  if (!rules) return -1;
  if (!po_Override_ApplyChecked(po->c->override, target, tp, NULL, rules, &st)) {
    if (st.code == kPo_Status_NoMemory) return -1;
    r->errors++;
    const char *why = po_Arena_Printf(r->a, "%s%s: %s", po->label, pass ? " (load_assignment)" : "", st.message);
    po_Value_ListAppend(r->a, ap->errs, str(r->a, why));
  }
  for (size_t k = 0; k < po_Diagnostics_Count(rules); k++) {
    const po_Diagnostic *dg = po_Diagnostics_At(rules, k);
    r->errors++;
    po_Value_ListAppend(r->a, ap->errs, str(r->a, po_Arena_Printf(r->a, "%s patches[%d] (%s%s): %s", po->label, dg->patch_index,
                                                                    pass ? "load_assignment" : "", dg->path ? dg->path : "",
                                                                    dg->message)));
  }
  return 0;
}

/* Every override in order on the resource's message: pass 0 the resource; pass 1 the
 * ClusterLoadAssignment a cluster carries inline, as it is after this override's cluster
 * patches (Consul's BasicEnvoyExtender order). */
static int apply_all(Run *r, const Res *res, po_Message *msg, Applied *ap) {
  po_Payload pl = {res->m.resource_type, res->m.direction, res->m.has_service ? &res->m.service : NULL};
  int rc = 0;
  for (size_t p = 0; !rc && p < r->npo; p++) {
    if (!reaches(r, &r->pos[p], res, ap->sa)) continue;
    rc = apply_one(r, &r->pos[p], msg, &pl, 0, ap);
    po_MeshResource tm;
    po_Message *la = rc ? NULL : inline_cla(r->opt, r->dc, res, msg, ap->sa, &tm);
    if (!la) continue;
    po_Payload tp = {kPo_ResourceType_ClusterLoadAssignment, tm.direction, tm.has_service ? &tm.service : NULL};
    rc = apply_one(r, &r->pos[p], la, &tp, 1, ap);
  }
  return rc;
}

/* The resource's texts before and after: `before` compact (--output json) or indented, `pb` and
 * `pa` indented with sorted keys (what is compared and diffed). */
typedef struct {
  char *before, *after, *pb, *pa;
  size_t blen, alen;
} Texts;

/* The JSON report's entry of a previewed resource, spilled to r->body. */
static int write_json_entry(Run *r, const Res *res, const Texts *t, bool same, Applied *ap) {
  po_Value *jr = res_value(res, ap->sa);
  po_Value_MapPut(ap->sa, jr, "patches", ap->applied);
  po_Status js;
  po_Status_Clear(&js);
  /* our own JSON texts: a parse fails only for memory (json-c's, outside the arena), and a
   * resource printed as null would be a report read short */
  po_Value *before = t->before ? po_Value_ParseJson(t->before, t->blen, ap->sa, &js) : NULL;
  po_Value *after = t->after ? po_Value_ParseJson(t->after, t->alen, ap->sa, &js) : NULL;
  if ((t->before && !before) || (t->after && !after)) return -1;
  po_Value_MapPut(ap->sa, jr, "before", before);
  if (after) po_Value_MapPut(ap->sa, jr, "after", after);
  po_Value_MapPut(ap->sa, jr, "changed", po_Value_NewBool(ap->sa, !same));
  if (po_Value_Size(ap->errs)) po_Value_MapPut(ap->sa, jr, "errors", ap->errs);
  if (ap->nlacked) {
    po_Value *l = po_Value_NewList(ap->sa);
    for (size_t i = 0; i < ap->nlacked && i < kMaxLacked; i++) {
      if (!ap->lacked[i]) return -1; /* its text could not be made: out of memory */
      po_Value_ListAppend(ap->sa, l, str(ap->sa, ap->lacked[i]));
    }
    po_Value_MapPut(ap->sa, jr, "fields_the_judging_api_lacks", l);
    if (ap->nlacked > kMaxLacked) {
      po_Value_MapPut(ap->sa, jr, "fields_the_judging_api_lacks_count", po_Value_NewInt(ap->sa, (int64_t)ap->nlacked));
    }
  }
  return spill_entry(r->body, &r->jn, jr, ap->sa) ? 0 : -1;
}

/* The text report's part of a previewed resource, spilled to r->body: its line, its errors,
 * its diff. */
static int write_text_entry(Run *r, const Res *res, const Texts *t, bool same, Applied *ap) {
  const char *desc = describe(res, ap->sa);
  if (!desc) return -1;
  fprintf(r->body, "\n%s %s (%s): %s\n", type_name(res->r->type), shown(res->r->name, ap->sa), desc,
          ap->text.buf ? ap->text.buf : "");
  if (ap->text.oom) return -1;
  for (size_t i = 0; i < ap->nlacked && i < kMaxLacked; i++) {
    if (!ap->lacked[i]) return -1; /* its text could not be made: out of memory */
    fprintf(r->body, "warning: the proxy sets %s, which %s (judging this proxy) lacks: kept as it is; no patch may set it\n",
            shown(ap->lacked[i], ap->sa), po_EnvoyApi_Name(r->opt->judge));
  }
  if (ap->nlacked > kMaxLacked) fprintf(r->body, "warning: and %zu more such fields\n", ap->nlacked - kMaxLacked);
  for (size_t e = 0; e < po_Value_Size(ap->errs); e++) {
    fprintf(r->body, "error: %s\n", po_Value_String(po_Value_At(ap->errs, e), NULL));
  }
  const char *label = po_Arena_Printf(ap->sa, "%s/%s", type_name(res->r->type), shown(res->r->name, ap->sa));
  if (same) fprintf(r->body, "(no change: the patches set what the resource already has)\n");
  else if (t->pa && !po_Preview_Diff(t->pb, t->pa, label, ap->sa, r->body)) return -1;
  return 0;
}

/* The resource's text before any patch: NULL when it cannot be decoded or printed (said on
 * stderr: -3) or out of memory. The diff's indented texts come straight from the message (no
 * JSON text to parse back); the compact texts only for the --output json report, which carries
 * them as values. */
static int said(const Res *res, po_Arena *sa, const po_Status *st) {
  if (st->code == kPo_Status_NoMemory) return -1;
  fprintf(stderr, "propertyoverride preview: %s %s: %s\n", type_name(res->r->type), shown(res->r->name, sa), st->message);
  return -3;
}

static int text_before(const Run *r, const Res *res, po_Message *msg, po_Arena *sa, po_Status *st, Texts *t) {
  if (msg && r->opt->json) t->before = po_Message_ToJson(msg, sa, &t->blen, st);
  if (msg && r->opt->json && t->before) t->pb = po_Preview_PrettyJson(t->before, t->blen, sa, st);
  if (msg && !r->opt->json) t->pb = po_Message_ToPrettyJson(msg, sa, NULL, st);
  return t->pb ? 0 : said(res, sa, st); /* out of memory: -1, never an error of the resource */
}

/* The resource's text after the patches; a result with no JSON form (a Duration out of range)
 * is an error of the resource, out of memory never one (exit 2, never what a pipeline reads as
 * "this override breaks the proxy"). */
static int text_after(Run *r, po_Message *judged, Applied *ap, Texts *t) {
  po_Status st;
  po_Status_Clear(&st);
  /* printed as read: in the dump's snapshot, where the fields the judging one lacks are known */
  po_Message *msg = po_Message_As(r->dump->api, judged, ap->sa, &st);
  if (msg) {
    t->after = r->opt->json ? po_Message_ToJson(msg, ap->sa, &t->alen, &st) : po_Message_ToPrettyJson(msg, ap->sa, &t->alen, &st);
  }
  if (!t->after && st.code == kPo_Status_NoMemory) return -1;
  if (!t->after) {
    r->errors++;
    po_Value_ListAppend(r->a, ap->errs, str(r->a, po_Arena_Printf(r->a, "the result cannot be written as JSON: %s", st.message)));
  }
  t->pa = t->after && r->opt->json ? po_Preview_PrettyJson(t->after, t->alen, ap->sa, &st) : t->after;
  return t->after && !t->pa ? -1 : 0;
}

/* One resource some patch matches: decoded, printed, patched, printed again and compared. The
 * texts, their indented forms and the diff live in an arena of their own, freed after it:
 * memory stays that of the dump, not of 10,000 diffs. */
static int preview_matched(Run *r, const Res *res) {
  po_Arena *sa = po_Arena_New();
  if (!sa) return -1;
  po_Status st;
  po_Status_Clear(&st);
  Texts t = {0};
  /* decoded from the dump's text into this resource's arena, and gone with it */
  po_Message *msg = po_DumpResource_DecodeIn(res->r, sa, &st);
  int rc = text_before(r, res, msg, sa, &st, &t);
  Applied ap = {sa, NULL, {.a = sa, .initial = 128}, po_Value_NewList(r->a), {0}, 0};
  if (!rc && r->opt->json) ap.applied = po_Value_NewList(sa);
  po_Message *judged = rc ? NULL : po_Message_As(r->opt->judge, msg, sa, &st);
  if (!rc && !judged) rc = said(res, sa, &st);
  if (judged && judged != msg) ap.nlacked = po_Message_Lacked(judged, r->dump->api, sa, ap.lacked, kMaxLacked);
  if (!rc) rc = apply_all(r, res, judged, &ap);
  if (!rc) rc = text_after(r, judged, &ap, &t);
  bool same = t.pa && !strcmp(t.pb, t.pa);
  r->changed += !rc && !same;
  if (!rc) rc = r->opt->json ? write_json_entry(r, res, &t, same, &ap) : write_text_entry(r, res, &t, same, &ap);
  for (size_t e = 0; !rc && e < po_Value_Size(ap.errs); e++) po_Value_ListAppend(r->a, r->jerrs, (po_Value *)po_Value_At(ap.errs, e));
  po_Arena_Free(sa);
  return rc;
}

/* One active resource: previewed when a patch matches it, else listed (as met, in JSON, like
 * the changed ones: 20,000 of them were 27 MB of tree). */
static int preview_resource(Run *r, size_t i) {
  bool matches = false;
  int rc = resource_matches(r, &r->rs[i], &matches);
  r->hit[i] = matches;
  if (!rc && matches) return preview_matched(r, &r->rs[i]);
  r->unmatched += !rc;
  if (!rc && r->opt->json) {
    po_Arena *ja = po_Arena_New();
    rc = ja && spill_entry(r->unres, &r->jun, res_value(&r->rs[i], ja), ja) ? 0 : -1;
    po_Arena_Free(ja);
  }
  return rc;
}

static int flush_spills(Run *r) {
  if (fflush(r->body) == 0 && !ferror(r->body) && (!r->unres || (fflush(r->unres) == 0 && !ferror(r->unres)))) return 0;
  fprintf(stderr, "propertyoverride preview: cannot write the report's temporary file: %s\n", strerror(errno));
  return -3;
}

/* Envoy Gateway: why a cluster patch of po matched nothing when the dump has HTTPRoute clusters
 * its policy does not reach (reaches()), naming their namespaces' first; NULL otherwise (or out
 * of memory, which why_unmatched then says). */
static const char *unreached(const Run *r, const po_PreviewOverride *po, const po_Patch *p) {
  po_ResourceType t = po_ResourceType_Parse(p->resource_filter.resource_type);
  if (r->opt->mesh != kPo_Mesh_EnvoyGateway || (t != kPo_ResourceType_Cluster && t != kPo_ResourceType_ClusterLoadAssignment)) {
    return NULL;
  }
  for (size_t i = 0; i < r->n; i++) {
    if (r->rs[i].r->type != t || reaches(r, po, &r->rs[i], r->a)) continue;
    const char *ns = po_Mesh_EGRouteNamespace(r->rs[i].r->name, r->a);
    if (!ns) continue;
    return po_Arena_Printf(r->a, "its EnvoyPatchPolicy reaches the clusters of the HTTPRoutes of namespace %s and of "
                           "those spec.routeNamespaces names, and this proxy's are of others (%s: add it to "
                           "spec.routeNamespaces to follow them)", po->c->ns ? po->c->ns : "", ns);
  }
  return NULL;
}

/* The patches that matched nothing, each with why: the JSON list and the text's lines. */
static int unmatched_patches(Run *r) {
  r->junp = po_Value_NewList(r->a);
  size_t unp_len = 0;
  FILE *unp = open_memstream(&r->unp_text, &unp_len);
  int rc = unp && r->junp ? 0 : -1;
  for (size_t p = 0; !rc && p < r->npo; p++) {
    const po_Arguments *args = r->pos[p].c->args;
    for (size_t k = 0; !rc && k < args->patch_count; k++) {
      if (r->pos[p].matched[k]) continue;
      r->nunp++;
      const char *why = unreached(r, &r->pos[p], &args->patches[k]);
      if (!why) why = why_unmatched(&args->patches[k], r->rs, r->n, r->a); /* JSON: as it is; text: shown */
      if (!why) {
        rc = -1; /* out of memory, not a reason left out */
        break;
      }
      po_Value *e = po_Value_NewMap(r->a);
      po_Value_MapPut(r->a, e, "override", str(r->a, r->pos[p].label));
      po_Value_MapPut(r->a, e, "patch", po_Value_NewInt(r->a, (int64_t)k));
      po_Value_MapPut(r->a, e, "reason", str(r->a, why));
      po_Value_ListAppend(r->a, r->junp, e);
      fprintf(unp, "  %s patches[%zu] (%s %s %s): %s\n", r->pos[p].label, k, args->patches[k].op, args->patches[k].path,
              args->patches[k].resource_filter.resource_type, shown(why, r->a));
    }
  }
  /* a line the stream could not grow for is out of memory: never a list printed short (exit 0) */
  if (unp && (fclose(unp) != 0 || !r->unp_text)) rc = -1;
  return rc;
}

/* ================================ report ================================ */

/* The JSON report's members other than the spilled lists. */
static po_Value *json_root(const Run *r) {
  po_Arena *a = r->a;
  po_Value *root = po_Value_NewMap(a);
  po_Value_MapPut(a, root, "mesh", str(a, po_Mesh_Name(r->opt->mesh)));
  po_Value *mc = po_Value_NewMap(a);
  po_Value_MapPut(a, mc, "chosen_by", str(a, r->opt->mesh_by));
  bool flag = !strcmp(r->opt->mesh_by, "flag");
  po_Value_MapPut(a, mc, "reason", str(a, flag ? po_Arena_Printf(a, "--mesh %s", r->opt->mesh_reason) : r->opt->mesh_reason));
  po_Value_MapPut(a, root, "mesh_choice", mc);
  po_Value *api = po_Value_NewMap(a);
  po_Value_MapPut(a, api, "judged_with", str(a, po_EnvoyApi_Version(r->opt->judge)));
  po_Value_MapPut(a, api, "chosen_by", str(a, r->opt->chosen_by));
  po_Value_MapPut(a, api, "reason", str(a, r->opt->reason));
  po_Value_MapPut(a, api, "read_with", str(a, po_EnvoyApi_Version(r->dump->api)));
  po_Value_MapPut(a, root, "envoy_api", api);
  if (r->dc) po_Value_MapPut(a, root, "datacenter", str(a, r->dc));
  po_Value *lim = po_Value_NewList(a);
  po_Value_ListAppend(a, lim, str(a, kLimits));
  po_Value_ListAppend(a, lim, str(a, kLimitsEds));
  po_Value_MapPut(a, root, "limits", lim);
  po_Value_MapPut(a, root, "resources", r->jres);
  po_Value_MapPut(a, root, "unmatched_resources", r->junres);
  po_Value_MapPut(a, root, "unmatched_patches", r->junp);
  po_Value *np = po_Value_NewList(a);
  for (size_t i = 0; i < r->nother; i++) {
    po_Value *e = po_Value_NewMap(a);
    po_Value_MapPut(a, e, "type", str(a, type_name(r->others[i].r->type)));
    po_Value_MapPut(a, e, "name", str(a, r->others[i].r->name));
    po_Value_MapPut(a, e, "state", str(a, po_DumpState_Name(r->others[i].r->state)));
    po_Value_ListAppend(a, np, e);
  }
  po_Value_MapPut(a, root, "not_previewed", np);
  po_Value_MapPut(a, root, "static_resources", po_Value_NewInt(a, (int64_t)r->nstatic));
  if (r->self) po_Value_MapPut(a, root, "service", str(a, r->self));
  po_Value *na = po_Value_NewList(a);
  for (size_t i = 0; i < r->naside; i++) {
    po_Value *e = po_Value_NewMap(a);
    po_Value_MapPut(a, e, "override", str(a, r->aside[i]->label));
    po_Value_MapPut(a, e, "target", str(a, r->aside[i]->c->target_name));
    po_Value_ListAppend(a, na, e);
  }
  po_Value_MapPut(a, root, "other_services_overrides", na);
  if (r->dump->unknown_types) {
    po_Value *u = po_Value_NewMap(a);
    po_Value_MapPut(a, u, "count", po_Value_NewInt(a, (int64_t)r->dump->unknown_types));
    po_Value_MapPut(a, u, "first", str(a, r->dump->first_unknown_type));
    po_Value_MapPut(a, root, "unknown_types", u);
  }
  po_Value_MapPut(a, root, "errors", r->jerrs);
  return root;
}

static int report_json(const Run *r) {
  const char *s = po_Preview_PrettyValue(json_root(r), r->a);
  /* a put that failed left a member or an element out of the tree: out of memory, no report */
  if (po_Engine_OutOfMemory(r->a)) return -1;
  /* "resources" and "unmatched_resources" printed empty (keys in byte order: in that order),
   * their entries put in place from the temporary files */
  int rc = s ? splice(r->out, &s, "resources", r->body, r->jn) : -1;
  if (!rc) rc = splice(r->out, &s, "unmatched_resources", r->unres, r->jun);
  if (!rc) fputs(s, r->out);
  return rc;
}

/* The text report's summary: the counts, the limits, what was set aside, the unknown types. */
static void report_summary(const Run *r) {
  FILE *out = r->out;
  fprintf(out, "preview: mesh %s", po_Mesh_Name(r->opt->mesh));
  /* a mesh --mesh did not name: which and why, so a wrong guess is seen (every resource
   * "matched by no patch") and put right */
  if (strcmp(r->opt->mesh_by, "flag") != 0) {
    fprintf(out, " (%s: %s; --mesh names another)", !strcmp(r->opt->mesh_by, "dump") ? "detected from the dump" : "assumed",
            shown(r->opt->mesh_reason, r->a));
  }
  if (r->dc) fprintf(out, ", local datacenter %s", shown(r->dc, r->a));
  fprintf(out, "; %zu active resources: %zu changed, %zu matched by no patch; %zu static (the bootstrap's: no mesh "
               "extension patches them); %zu warming or draining (not previewed)\n",
          r->n, r->changed, r->unmatched, r->nstatic, r->nother);
  fprintf(out, "envoy api: judged with %s, %s; the dump read with %s\n", po_EnvoyApi_Name(r->opt->judge),
          shown(r->opt->reason, r->a), po_EnvoyApi_Name(r->dump->api));
  fprintf(out, "limits: %s; %s\n", kLimits, kLimitsEds);
  if (r->naside) {
    fprintf(out, "overrides for other services' proxies, not applied (this is %s's proxy, says the dump's bootstrap): %zu\n",
            shown(r->self, r->a), r->naside);
    for (size_t i = 0; i < r->naside; i++) {
      fprintf(out, "  %s (ServiceDefaults %s)\n", r->aside[i]->label, r->aside[i]->c->target_name);
    }
  }
  if (r->dump->unknown_types) {
    fprintf(out, "note: %zu embedded configurations are of types the Envoy API of this build lacks (the first: %s); "
                 "they are shown as placeholders (no patch path can enter an Any)\n",
            r->dump->unknown_types, shown(r->dump->first_unknown_type, r->a));
  }
}

static int report_text(const Run *r) {
  FILE *out = r->out;
  report_summary(r);
  if (!copy_out(r->body, out)) return -3;
  fprintf(out, "\npatches that matched nothing: %zu\n%s", r->nunp, r->unp_text ? r->unp_text : "");
  fprintf(out, "\nresources no patch matched: %zu\n", r->unmatched);
  for (size_t i = 0; i < r->n; i++) {
    const char *desc = r->hit[i] ? "" : describe(&r->rs[i], r->a);
    if (!desc) return -1;
    if (!r->hit[i]) fprintf(out, "  %s %s (%s)\n", type_name(r->rs[i].r->type), shown(r->rs[i].r->name, r->a), desc);
  }
  if (r->nother) {
    fprintf(out, "\nwarming or draining, not previewed: %zu\n", r->nother);
    for (size_t i = 0; i < r->nother; i++) {
      fprintf(out, "  %s %s (%s)\n", type_name(r->others[i].r->type), shown(r->others[i].r->name, r->a),
              po_DumpState_Name(r->others[i].r->state));
    }
  }
  fprintf(out, "\nerrors: %zu\n", r->errors);
  return 0;
}

int po_Preview_Run(const po_PreviewOptions *opt, po_PreviewOverride *all, size_t nall, po_ConfigDump *dump, po_Arena *a, FILE *out) {
  Run r = {.opt = opt, .dump = dump, .a = a, .out = out};
  int rc = set_aside(&r, all, nall);
  if (!rc) rc = collect(&r);
  if (!rc) rc = open_spills(&r);
  for (size_t i = 0; !rc && i < r.n; i++) rc = preview_resource(&r, i);
  if (!rc) rc = flush_spills(&r);
  if (!rc) rc = unmatched_patches(&r);
  /* The run's lists (each resource's errors, the patches that matched nothing) are put into the
   * run's arena without a check at each put: a put that failed left an entry out, and the arena
   * says so. Asked here, before anything reaches `out`: out of memory, not a report short of an
   * error (the text's "errors: N" listing fewer, the JSON's "errors" list). */
  if (!rc && po_Engine_OutOfMemory(a)) rc = -1;
  if (!rc) rc = opt->json ? report_json(&r) : report_text(&r);
  if (r.body) fclose(r.body);
  if (r.unres) fclose(r.unres);
  free(r.unp_text);
  return rc ? rc : r.errors ? 1 : 0;
}
