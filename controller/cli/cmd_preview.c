/* propertyoverride preview: what PropertyOverrides would change in a running proxy's
 * configuration, from Envoy's admin /config_dump (a file, or fetched from the admin port).
 *
 *   inputs -> the webhook's checks and compile (po_Cli_CheckObject) -> the dump read by the
 *   engine (po_ConfigDump_ParseJson) -> each active resource classified by the mesh's naming
 *   (po_Mesh_Classify) -> every override applied in order, as Consul runs its extensions, each
 *   one's matching patches in order with errors collected, then Envoy's rules on the messages
 *   the patches created (po_Override_ApplyChecked) -> a diff per
 *   changed resource, the resources no patch matched, the patches that matched nothing (and
 *   why), and the errors.
 * Cost: linear in the dump plus, per changed resource, its JSON twice and a diff bounded by
 * kPo_DiffMaxEdits. Memory: the engine reads the dump a piece at a time and keeps each resource
 * as its bytes (about half its JSON) and a record; a resource is decoded, patched, printed and
 * diffed in an arena of its own, freed before the next (po_DumpResource_DecodeIn): peak RSS about
 * 2x the dump's text, 2.7x with every cluster changed (t_hostile_files.sh holds it under 4x);
 * one piece of the dump at most max(4x the dump, 32 MiB) while it is decoded (the engine refuses
 * it past that); the report spilled to a temporary file, not kept (t_adv_hostile.sh). */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gitops.h"
#include "preview.h"

static const char kUsage[] =
    "usage: propertyoverride preview -f FILE|DIR|- [-f ...] (--config-dump FILE | --envoy-admin URL)\n"
    "                                [--mesh consul|istio] [--datacenter DC] [--istio-version 1.N]\n"
    "                                [-o text|json]\n"
    "\n"
    "Applies PropertyOverrides to the configuration a proxy is running, as the mesh would, and\n"
    "shows what changes: a unified diff of each changed resource's JSON (keys sorted), the\n"
    "resources no patch matched, each patch that matched nothing and why, and errors.\n"
    "Overrides are applied in the order Consul runs them (ProxyDefaults' first, then the\n"
    "ServiceDefaults'; each by spec.priority, lower first, then name), each one's matching\n"
    "patches in order (with Consul, those of a ServiceDefaults other than the proxy's service,\n"
    "which the dump's bootstrap names, are set aside and listed), to the\n"
    "dynamic active resources (warming and draining ones are listed, not patched; static ones\n"
    "come from the bootstrap, which no mesh extension patches).\n"
    "\n"
    "  -f, --filename PATH    PropertyOverride manifests: a file, a directory, or - (repeatable)\n"
    "  --config-dump FILE     Envoy's /config_dump output (JSON; - for stdin)\n"
    "  --envoy-admin URL      fetch it: http://127.0.0.1:19000 after\n"
    "                         `kubectl port-forward POD 19000` (Consul) or 15000 (Istio); endpoints\n"
    "                         are asked for (?include_eds)\n"
    "  --mesh consul|istio    whose naming decides direction and service (default consul)\n"
    "  --istio-version 1.N    the Istio release a Service or Mesh target runs, judged as render\n"
    "                         and validate judge it (arrays need 1.31+; refused when not given)\n"
    "  --datacenter DC        Consul's local datacenter, for the report (every datacenter's\n"
    "                         upstream SNI is its service's, as in Consul); by default the\n"
    "                         bootstrap's consul.source.datacenter stats tag, else the one\n"
    "                         datacenter the upstream SNIs name\n"
    "  --timeout SECONDS      for --envoy-admin (default 10)\n"
    "  -o, --output FORMAT    text (default) or json (before and after of each changed resource)\n"
    "  -v, --verbose          Consul's field lists in full in error reports\n"
    "\n"
    "Limits, stated in the output too: the dump already holds whatever extensions are live, so a\n"
    "patch removed from a new generation cannot be shown reverting; endpoint dumps are rebuilt\n"
    "by Envoy from its host sets, not what the control plane sent.\n"
    "\n"
    "Exit status: 0 previewed; 1 an override is invalid (reported as validate reports it), a\n"
    "patch failed on a resource, or a message a patch created breaks Envoy's rules; 2 bad usage, an unreadable input or dump, a failed fetch, or\n"
    "output that could not be written.\n";

enum { kMaxDump = 256 << 20 }; /* 10,000 clusters are about 10 MB: far beyond any sidecar */

static const char kLimits[] =
    "the dump already holds the extensions that are live: a patch removed from a new generation "
    "cannot be shown reverting";
static const char kLimitsEds[] = "endpoint dumps are rebuilt by Envoy from its host sets";

typedef struct {
  const po_CompiledOverride *c;
  const char *label; /* namespace/name */
  size_t *matched;   /* per patch: resources it applied to */
  size_t index;      /* its place in the inputs: the last tie-break */
} Po;

/* The order Consul runs a proxy's extensions in (docs/crd.md, "Priority and conflicts"): the
 * ProxyDefaults `global` entries first, then the service's ServiceDefaults entries; within a
 * target ours follow spec.priority (lower first), then the PropertyOverride's name (the
 * controller's order, controller/meshes/consul/src/consul.c). Not the order of the inputs: a later
 * patch wins a conflict, so the inputs' order would show the wrong winner. */
static int by_apply_order(const void *x, const void *y) {
  const Po *a = x, *b = y;
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

typedef struct {
  po_Mesh mesh;
  const char *datacenter;
  bool json, verbose;
} Options;

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
static po_Message *inline_cla(const Options *opt, const char *dc, const Res *r, po_Message *msg, po_Arena *a,
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
  if (!e) return false;
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

static void close_spills(FILE *body, FILE *unres) {
  fclose(body);
  if (unres) fclose(unres);
}

static int preview(const Options *opt, Po *all, size_t nall, po_ConfigDump *dump, po_Arena *a, FILE *out) {
  /* Consul runs a ServiceDefaults' extensions on that service's proxies only (ProxyDefaults'
   * on all): when the dump's bootstrap says whose proxy this is, the others are set aside. */
  const char *self = opt->mesh == kPo_Mesh_Consul ? dump->consul_service : NULL;
  Po *pos = po_Arena_Malloc(a, (nall ? nall : 1) * sizeof *pos);
  const Po **aside = po_Arena_Malloc(a, (nall ? nall : 1) * sizeof *aside);
  if (!pos || !aside) return -1;
  size_t npo = 0, naside = 0;
  for (size_t p = 0; p < nall; p++) {
    const po_CompiledOverride *c = all[p].c;
    if (self && c->target_kind == kPo_TargetKind_ServiceDefaults && strcmp(c->target_name, self)) aside[naside++] = &all[p];
    else pos[npo++] = all[p];
  }
  size_t n = 0, nstatic = 0, nother = 0, nactive = 0;
  /* each list sized for what it holds: a record per resource is most of preview's memory on a
   * dump of many small resources */
  for (size_t i = 0; i < dump->count; i++) nactive += dump->resources[i].state == kPo_DumpState_Active;
  size_t nrest = dump->count - nactive;
  Res *rs = po_Arena_Malloc(a, (nactive ? nactive : 1) * sizeof *rs);
  Res *others = po_Arena_Malloc(a, (nrest ? nrest : 1) * sizeof *others);
  if (!rs || !others) return -1;
  for (size_t i = 0; i < dump->count; i++) {
    po_DumpResource *r = &dump->resources[i];
    if (r->state == kPo_DumpState_Static) nstatic++;
    else if (r->state == kPo_DumpState_Active) rs[n++].r = r;
    else others[nother++].r = r;
  }
  /* The local datacenter: --datacenter, else what Consul's bootstrap in the dump says, else the
   * one the upstream SNIs name (below). */
  const char *dc = opt->datacenter;
  if (!dc && opt->mesh == kPo_Mesh_Consul) dc = dump->consul_datacenter;
  for (int pass = 0; pass < 2; pass++) {
    /* pass 0 without a datacenter finds the SNIs' datacenters; pass 1 decides with the local one */
    for (size_t i = 0; i < n; i++) {
      if (!po_Mesh_Classify(opt->mesh, dc, rs[i].r, a, &rs[i].m)) return -1;
    }
    if (pass == 0 && opt->mesh == kPo_Mesh_Consul && !dc) {
      dc = local_dc(rs, n);
      if (!dc) break;
    } else {
      break;
    }
  }
  qsort(rs, n, sizeof *rs, by_resource);
  qsort(others, nother, sizeof *others, by_resource);

  po_Value *jres = po_Value_NewList(a), *junres = po_Value_NewList(a), *jerrs = po_Value_NewList(a);
  size_t changed = 0, unmatched = 0, errors = 0;
  bool *hit = po_Arena_Malloc(a, (n ? n : 1) * sizeof *hit);
  if (!hit || !jres || !junres || !jerrs) return -1;
  /* Changed resources go to an unlinked temporary file first, copied out after the summary
   * (the text report prints its summary first; the JSON report's keys are sorted, "resources"
   * among them): held in memory, the diffs made preview's memory its output's, 81 MB of text
   * and 210 MB of JSON trees for a 1.16 MB dump. JSON entries are written as each resource is
   * done, its tree freed with it. */
  FILE *body = tmpfile();
  if (!body && errno == ENOMEM) return -1; /* said as out of memory */
  if (!body) {
    fprintf(stderr, "propertyoverride preview: cannot create a temporary file for the report in /tmp: %s\n",
            strerror(errno));
    return -3;
  }
  size_t jn = 0, jun = 0; /* JSON entries written: changed resources, unmatched ones */
  FILE *unres = opt->json ? tmpfile() : NULL;
  if (opt->json && !unres) {
    fclose(body);
    if (errno == ENOMEM) return -1;
    fprintf(stderr, "propertyoverride preview: cannot create a temporary file for the report in /tmp: %s\n",
            strerror(errno));
    return -3;
  }
  bool any_cla = false;
  for (size_t p = 0; p < npo; p++) {
    for (size_t k = 0; k < pos[p].c->args->patch_count; k++) {
      const char *t = pos[p].c->args->patches[k].resource_filter.resource_type;
      any_cla |= t && strcmp(t, "cluster-load-assignment") == 0;
    }
  }
  for (size_t i = 0; i < n; i++) {
    const Res *r = &rs[i];
    po_Payload pl = {r->m.resource_type, r->m.direction, r->m.has_service ? &r->m.service : NULL};
    /* Only a resource some patch matches is printed (and so encoded) before patching. */
    bool matches = false;
    po_MeshResource lm = {0};
    po_Arena *probe = po_Arena_New();
    if (!probe) return -1;
    /* A cluster's inline load_assignment is looked at (which decodes the cluster) only when a
     * cluster-load-assignment patch exists: otherwise names decide alone. A cluster that does
     * not decode counts as matched, so that the error is reported below. */
    bool has_la = false;
    if (any_cla && r->r->type == kPo_ResourceType_Cluster) {
      po_Status dst;
      po_Status_Clear(&dst);
      po_Message *cm = po_DumpResource_DecodeIn(r->r, probe, &dst);
      if (!cm && (dst.code == kPo_Status_NoMemory || po_Engine_OutOfMemory(probe))) return po_Arena_Free(probe), -1;
      if (!cm) matches = true;
      else has_la = inline_cla(opt, dc, r, cm, probe, &lm) != NULL;
    }
    po_Payload lp = {kPo_ResourceType_ClusterLoadAssignment, lm.direction, lm.has_service ? &lm.service : NULL};
    for (size_t p = 0; p < npo && !matches; p++) {
      const po_Arguments *args = pos[p].c->args;
      for (size_t k = 0; k < args->patch_count && !matches; k++) {
        matches = po_ResourceFilter_Matches(&args->patches[k].resource_filter, &pl) ||
                  (has_la && po_ResourceFilter_Matches(&args->patches[k].resource_filter, &lp));
      }
    }
    po_Arena_Free(probe);
    hit[i] = matches;
    if (!matches) {
      unmatched++;
      if (opt->json) { /* written as met, like the changed ones: 20,000 of them were 27 MB of tree */
        po_Arena *ja = po_Arena_New();
        bool ok = ja && spill_entry(unres, &jun, res_value(r, ja), ja);
        po_Arena_Free(ja);
        if (!ok) return close_spills(body, unres), -1;
      }
      continue;
    }
    /* The texts, their indented forms and the diff of one resource live in an arena of their
     * own, freed after it: memory stays that of the dump, not of 10,000 diffs. */
    po_Arena *sa = po_Arena_New();
    if (!sa) return -1;
    size_t blen = 0;
    po_Status st;
    po_Status_Clear(&st);
    /* decoded from the dump's text into this resource's arena, and gone with it */
    po_Message *msg = po_DumpResource_DecodeIn(r->r, sa, &st);
    /* The diff's indented texts come straight from the message (no JSON text to parse back);
     * the compact texts only for the --output json report, which carries them as values. */
    char *before = NULL, *pb = NULL;
    if (msg && opt->json) before = po_Message_ToJson(msg, sa, &blen, &st);
    if (msg && opt->json && before) pb = po_Preview_PrettyJson(before, blen, sa);
    if (msg && !opt->json) pb = po_Message_ToPrettyJson(msg, sa, NULL, &st);
    if (!pb) {
      /* shown() writes into sa: said before sa goes */
      fprintf(stderr, "propertyoverride preview: %s %s: %s\n", type_name(r->r->type), shown(r->r->name, sa), st.message);
      po_Arena_Free(sa);
      close_spills(body, unres);
      return -3;
    }
    /* What applied, per resource: the JSON report keeps it (arena a); the text's line is built
     * in the resource's arena, by doubling - one string per patch, each a copy of the last,
     * made one PropertyOverride of 100 patches on 10,000 clusters cost 3 GB and 42 s. */
    po_Value *applied = opt->json ? po_Value_NewList(sa) : NULL, *rerrs = po_Value_NewList(a);
    po_TextBuf applied_text = {.a = sa, .initial = 128};
    for (size_t p = 0; p < npo; p++) {
      const po_Arguments *args = pos[p].c->args;
      /* pass 0: the resource; pass 1: the ClusterLoadAssignment a cluster carries inline, as it
       * is after this override's cluster patches (Consul's BasicEnvoyExtender order) */
      for (int pass = 0; pass < 2; pass++) {
        po_Message *target = msg;
        po_Payload tp = pl;
        po_MeshResource tm;
        if (pass == 1) {
          target = inline_cla(opt, dc, r, msg, sa, &tm);
          if (!target) break;
          tp = (po_Payload){kPo_ResourceType_ClusterLoadAssignment, tm.direction, tm.has_service ? &tm.service : NULL};
        }
        bool any = false;
        for (size_t k = 0; k < args->patch_count; k++) {
          if (!po_ResourceFilter_Matches(&args->patches[k].resource_filter, &tp)) continue;
          pos[p].matched[k]++;
          any = true;
          if (applied) {
            po_Value *e = po_Value_NewMap(sa);
            po_Value_MapPut(sa, e, "override", str(sa, pos[p].label));
            po_Value_MapPut(sa, e, "patch", po_Value_NewInt(sa, (int64_t)k));
            if (pass) po_Value_MapPut(sa, e, "on", str(sa, "load_assignment"));
            po_Value_ListAppend(sa, applied, e);
          } else {
            char idx[64];
            snprintf(idx, sizeof idx, " patches[%zu]%s", k, pass ? " (on its load_assignment)" : "");
            po_TextBuf_Puts(&applied_text, applied_text.len ? ", " : "");
            po_TextBuf_Puts(&applied_text, pos[p].label);
            po_TextBuf_Puts(&applied_text, idx);
          }
        }
        if (!any) continue;
        po_Status_Clear(&st);
        po_Diagnostics *rules = po_Diagnostics_New(sa); /* its messages are copied into a below */
        if (!rules) return po_Arena_Free(sa), -1;
        if (!po_Override_ApplyChecked(pos[p].c->override, target, &tp, NULL, rules, &st)) {
          if (st.code == kPo_Status_NoMemory) return po_Arena_Free(sa), -1;
          errors++;
          const char *why = po_Arena_Printf(a, "%s%s: %s", pos[p].label, pass ? " (load_assignment)" : "", st.message);
          po_Value_ListAppend(a, rerrs, str(a, why));
        }
        for (size_t k = 0; k < po_Diagnostics_Count(rules); k++) {
          const po_Diagnostic *dg = po_Diagnostics_At(rules, k);
          errors++;
          po_Value_ListAppend(a, rerrs, str(a, po_Arena_Printf(a, "%s patches[%d] (%s%s): %s", pos[p].label, dg->patch_index,
                                                               pass ? "load_assignment" : "", dg->path ? dg->path : "",
                                                               dg->message)));
        }
      }
    }
    size_t alen = 0;
    po_Status_Clear(&st);
    char *after = opt->json ? po_Message_ToJson(msg, sa, &alen, &st) : po_Message_ToPrettyJson(msg, sa, &alen, &st);
    const char *label = po_Arena_Printf(sa, "%s/%s", type_name(r->r->type), shown(r->r->name, sa));
    po_Value *jr = opt->json ? res_value(r, sa) : NULL;
    if (jr) po_Value_MapPut(sa, jr, "patches", applied);
    if (!after && st.code == kPo_Status_NoMemory) {
      /* not a verdict on the override: said as out of memory (exit 2), never as an error in the
       * result (exit 1, what a pipeline reads as "this override breaks the proxy") */
      po_Arena_Free(sa);
      close_spills(body, unres);
      return -1;
    }
    if (!after) {
      /* the patches applied, but the result has no JSON form (a Duration out of range) */
      errors++;
      po_Value_ListAppend(a, rerrs, str(a, po_Arena_Printf(a, "the result cannot be written as JSON: %s", st.message)));
    }
    char *pa = after && opt->json ? po_Preview_PrettyJson(after, alen, sa) : after;
    if (after && !pa) return po_Arena_Free(sa), -1;
    bool same = pa && !strcmp(pb, pa);
    changed += !same;
    if (opt->json) {
      po_Status js;
      po_Value_MapPut(sa, jr, "before", po_Value_ParseJson(before, blen, sa, &js));
      if (after) po_Value_MapPut(sa, jr, "after", po_Value_ParseJson(after, alen, sa, &js));
      po_Value_MapPut(sa, jr, "changed", po_Value_NewBool(sa, !same));
      if (po_Value_Size(rerrs)) po_Value_MapPut(sa, jr, "errors", rerrs);
      if (!spill_entry(body, &jn, jr, sa)) return po_Arena_Free(sa), close_spills(body, unres), -1;
    } else {
      const char *desc = describe(r, sa);
      if (!desc) return po_Arena_Free(sa), close_spills(body, unres), -1;
      fprintf(body, "\n%s %s (%s): %s\n", type_name(r->r->type), shown(r->r->name, sa), desc,
              applied_text.buf ? applied_text.buf : "");
      if (applied_text.oom) return po_Arena_Free(sa), -1;
      for (size_t e = 0; e < po_Value_Size(rerrs); e++) {
        fprintf(body, "error: %s\n", po_Value_String(po_Value_At(rerrs, e), NULL));
      }
      if (same) fprintf(body, "(no change: the patches set what the resource already has)\n");
      else if (pa && !po_Preview_Diff(pb, pa, label, sa, body)) return po_Arena_Free(sa), -1;
    }
    for (size_t e = 0; e < po_Value_Size(rerrs); e++) po_Value_ListAppend(a, jerrs, (po_Value *)po_Value_At(rerrs, e));
    po_Arena_Free(sa);
  }
  if (fflush(body) != 0 || ferror(body) || (unres && (fflush(unres) != 0 || ferror(unres)))) {
    fprintf(stderr, "propertyoverride preview: cannot write the report's temporary file: %s\n", strerror(errno));
    close_spills(body, unres);
    return -3;
  }

  /* the patches that matched nothing */
  po_Value *junp = po_Value_NewList(a);
  size_t nunp = 0;
  char *unp_text = NULL;
  size_t unp_len = 0;
  FILE *unp = open_memstream(&unp_text, &unp_len);
  if (!unp || !junp) return close_spills(body, unres), -1;
  for (size_t p = 0; p < npo; p++) {
    const po_Arguments *args = pos[p].c->args;
    for (size_t k = 0; k < args->patch_count; k++) {
      if (pos[p].matched[k]) continue;
      nunp++;
      const char *why = why_unmatched(&args->patches[k], rs, n, a); /* JSON: as it is; text: shown */
      if (!why) return fclose(unp), free(unp_text), close_spills(body, unres), -1; /* out of memory, not a reason left out */
      po_Value *e = po_Value_NewMap(a);
      po_Value_MapPut(a, e, "override", str(a, pos[p].label));
      po_Value_MapPut(a, e, "patch", po_Value_NewInt(a, (int64_t)k));
      po_Value_MapPut(a, e, "reason", str(a, why));
      po_Value_ListAppend(a, junp, e);
      fprintf(unp, "  %s patches[%zu] (%s %s %s): %s\n", pos[p].label, k, args->patches[k].op, args->patches[k].path,
              args->patches[k].resource_filter.resource_type, shown(why, a));
    }
  }
  /* a line the stream could not grow for is out of memory: never a list printed short (exit 0) */
  if (fclose(unp) != 0 || !unp_text) return free(unp_text), close_spills(body, unres), -1;

  if (opt->json) {
    po_Value *root = po_Value_NewMap(a);
    po_Value_MapPut(a, root, "mesh", str(a, po_Mesh_Name(opt->mesh)));
    if (dc) po_Value_MapPut(a, root, "datacenter", str(a, dc));
    po_Value *lim = po_Value_NewList(a);
    po_Value_ListAppend(a, lim, str(a, kLimits));
    po_Value_ListAppend(a, lim, str(a, kLimitsEds));
    po_Value_MapPut(a, root, "limits", lim);
    po_Value_MapPut(a, root, "resources", jres);
    po_Value_MapPut(a, root, "unmatched_resources", junres);
    po_Value_MapPut(a, root, "unmatched_patches", junp);
    po_Value *np = po_Value_NewList(a);
    for (size_t i = 0; i < nother; i++) {
      po_Value *e = po_Value_NewMap(a);
      po_Value_MapPut(a, e, "type", str(a, type_name(others[i].r->type)));
      po_Value_MapPut(a, e, "name", str(a, others[i].r->name));
      po_Value_MapPut(a, e, "state", str(a, po_DumpState_Name(others[i].r->state)));
      po_Value_ListAppend(a, np, e);
    }
    po_Value_MapPut(a, root, "not_previewed", np);
    po_Value_MapPut(a, root, "static_resources", po_Value_NewInt(a, (int64_t)nstatic));
    if (self) po_Value_MapPut(a, root, "service", str(a, self));
    po_Value *na = po_Value_NewList(a);
    for (size_t i = 0; i < naside; i++) {
      po_Value *e = po_Value_NewMap(a);
      po_Value_MapPut(a, e, "override", str(a, aside[i]->label));
      po_Value_MapPut(a, e, "target", str(a, aside[i]->c->target_name));
      po_Value_ListAppend(a, na, e);
    }
    po_Value_MapPut(a, root, "other_services_overrides", na);
    if (dump->unknown_types) {
      po_Value *u = po_Value_NewMap(a);
      po_Value_MapPut(a, u, "count", po_Value_NewInt(a, (int64_t)dump->unknown_types));
      po_Value_MapPut(a, u, "first", str(a, dump->first_unknown_type));
      po_Value_MapPut(a, root, "unknown_types", u);
    }
    po_Value_MapPut(a, root, "errors", jerrs);
    const char *s = po_Preview_PrettyValue(root, a);
    /* "resources" and "unmatched_resources" printed empty (keys in byte order: in that order),
     * their entries put in place from the temporary files */
    int sr = s ? splice(out, &s, "resources", body, jn) : -1;
    if (!sr) sr = splice(out, &s, "unmatched_resources", unres, jun);
    if (sr) return close_spills(body, unres), free(unp_text), sr;
    fputs(s, out);
  } else {
    fprintf(out, "preview: mesh %s", po_Mesh_Name(opt->mesh));
    if (dc) fprintf(out, ", local datacenter %s", shown(dc, a));
    fprintf(out, "; %zu active resources: %zu changed, %zu matched by no patch; %zu static (the bootstrap's: no mesh "
                 "extension patches them); %zu warming or draining (not previewed)\n",
            n, changed, unmatched, nstatic, nother);
    fprintf(out, "limits: %s; %s\n", kLimits, kLimitsEds);
    if (naside) {
      fprintf(out, "overrides for other services' proxies, not applied (this is %s's proxy, says the dump's bootstrap): %zu\n",
              shown(self, a), naside);
      for (size_t i = 0; i < naside; i++) {
        fprintf(out, "  %s (ServiceDefaults %s)\n", aside[i]->label, aside[i]->c->target_name);
      }
    }
    if (dump->unknown_types) {
      fprintf(out, "note: %zu embedded configurations are of types the Envoy API of this build lacks (the first: %s); "
                   "they are shown as placeholders (no patch path can enter an Any)\n",
              dump->unknown_types, shown(dump->first_unknown_type, a));
    }
    if (!copy_out(body, out)) return close_spills(body, unres), free(unp_text), -3;
    fprintf(out, "\npatches that matched nothing: %zu\n%s", nunp, unp_text ? unp_text : "");
    fprintf(out, "\nresources no patch matched: %zu\n", unmatched);
    for (size_t i = 0; i < n; i++) {
      const char *desc = hit[i] ? "" : describe(&rs[i], a);
      if (!desc) return close_spills(body, unres), free(unp_text), -1;
      if (!hit[i]) fprintf(out, "  %s %s (%s)\n", type_name(rs[i].r->type), shown(rs[i].r->name, a), desc);
    }
    if (nother) {
      fprintf(out, "\nwarming or draining, not previewed: %zu\n", nother);
      for (size_t i = 0; i < nother; i++) {
        fprintf(out, "  %s %s (%s)\n", type_name(others[i].r->type), shown(others[i].r->name, a), po_DumpState_Name(others[i].r->state));
      }
    }
    fprintf(out, "\nerrors: %zu\n", errors);
  }
  close_spills(body, unres);
  free(unp_text);
  return errors ? 1 : 0;
}

/* Preview applies each PropertyOverride to the proxy of its own namespace's dump, so another
 * namespace in targetRef is refused whatever the controller's policy (an empty one: the message
 * names the controller's flag), as render refuses it. */
static const po_Tenancy kPreviewNobody = {0};

int po_Cmd_Preview(int argc, char **argv) {
  static const struct option opts[] = {{"filename", required_argument, 0, 'f'},
                                       {"config-dump", required_argument, 0, 'c'},
                                       {"envoy-admin", required_argument, 0, 'e'},
                                       {"mesh", required_argument, 0, 'm'},
                                       {"datacenter", required_argument, 0, 'd'},
                                       {"timeout", required_argument, 0, 't'},
                                       {"output", required_argument, 0, 'o'},
                                       {"verbose", no_argument, 0, 'v'},
                                       {"help", no_argument, 0, 'h'},
                                       {"istio-version", required_argument, 0, kPo_CliOpt_IstioVersion},
                                       {0, 0, 0, 0}};
  const char **paths = calloc((size_t)argc + 1, sizeof *paths);
  size_t npaths = 0;
  const char *dump_path = NULL, *admin = NULL, *usage_err = NULL;
  /* the Istio release decides what an Istio target accepts (its arrays), as for render */
  po_TargetOptions topts = {.tenancy = &kPreviewNobody};
  Options opt = {.mesh = kPo_Mesh_Consul};
  long timeout_s = 10;
  int c;
  optind = 1;
  opterr = 0;
  if (!paths) return fprintf(stderr, "propertyoverride preview: out of memory\n"), kPo_Exit_Usage;
  while (!usage_err && (c = getopt_long(argc, argv, "f:o:vh", opts, NULL)) != -1) {
    switch (c) {
      case 'f': paths[npaths++] = optarg; break;
      case 'c': dump_path = optarg; break;
      case 'e': admin = optarg; break;
      case 'd': opt.datacenter = optarg; break;
      case 'v': opt.verbose = true; break;
      case 'm':
        if (!strcmp(optarg, "consul")) opt.mesh = kPo_Mesh_Consul;
        else if (!strcmp(optarg, "istio")) opt.mesh = kPo_Mesh_Istio;
        else usage_err = "--mesh: expected consul or istio";
        break;
      case 'o':
        if (!strcmp(optarg, "json")) opt.json = true;
        else if (strcmp(optarg, "text")) usage_err = "--output: expected text or json";
        break;
      case 't': {
        char *end = NULL;
        timeout_s = strtol(optarg, &end, 10);
        if (!*optarg || *end || timeout_s < 1 || timeout_s > 3600) usage_err = "--timeout: expected whole seconds, 1 to 3600";
        break;
      }
      case 'h': free(paths); fputs(kUsage, stdout); return kPo_Exit_Ok;
      case kPo_CliOpt_IstioVersion:
        if (!po_Cli_TargetOption(c, optarg, "preview", &topts, NULL)) return free(paths), kPo_Exit_Usage;
        break;
      default: usage_err = optopt ? "an option is missing its argument" : "unknown option";
    }
  }
  if (!usage_err && optind < argc) usage_err = "unexpected argument";
  if (!usage_err && !npaths) usage_err = "-f is required";
  if (!usage_err && !dump_path == !admin) usage_err = "one of --config-dump and --envoy-admin is required";
  if (!usage_err && opt.datacenter && opt.mesh != kPo_Mesh_Consul) usage_err = "--datacenter is Consul's";
  if (usage_err) {
    free(paths);
    fprintf(stderr, "propertyoverride preview: %s\n\n%s", usage_err, kUsage);
    return kPo_Exit_Usage;
  }

  /* The dump's decoded tree is most of what a preview touches (117 MB for 20,000 resources):
   * in huge pages, not 30,000 faults of 4 KB (docs/benchmarks.md, preview). */
  po_Arena *a = po_Arena_NewLarge();
  if (!a) return free(paths), fprintf(stderr, "propertyoverride preview: out of memory\n"), kPo_Exit_Usage;
  /* The dump is read with the snapshot of the --mesh's release (its default: Consul's v1.32.4,
   * Istio's as --istio-version or its newest release says, as render judges it), and the overrides
   * are compiled under that one too, so they apply to its messages (an override refuses another
   * snapshot's message). Which snapshot judges a proxy is preview's own choice (issue 24). */
  po_TargetOptions filled = topts;
  po_Mesh_FillReleases(&filled);
  const po_EnvoyApi *dump_api = po_TargetOptions_Api(&filled, opt.mesh);
  for (size_t m = 0; m < kPo_MeshSlots; m++) topts.api[m] = dump_api;
  int rc = kPo_Exit_Usage;
  po_CliReport rep;
  po_CliInputs in;
  po_CliReport_Init(&rep, a);
  bool ok = po_CliInputs_Load(&in, paths, npaths, a, &rep);
  free(paths);
  po_CompiledOverride *compiled = ok ? po_Arena_Malloc(a, (in.count ? in.count : 1) * sizeof *compiled) : NULL;
  Po *pos = compiled ? po_Arena_Malloc(a, (in.count ? in.count : 1) * sizeof *pos) : NULL;
  size_t npo = 0;
  ok = pos != NULL;
  for (size_t i = 0; ok && i < in.count; i++) {
    ok = po_Cli_CheckObject(&in.objects[i], &topts, a, &rep, &compiled[i]);
    if (!ok || in.objects[i].kind != kPo_ObjKind_PropertyOverride || !compiled[i].accepted) continue;
    const po_CompiledOverride *co = &compiled[i];
    pos[npo].c = co;
    pos[npo].label = *co->ns ? po_Arena_Printf(a, "%s/%s", co->ns, co->name) : co->name;
    pos[npo].matched = po_Arena_Malloc(a, (co->args->patch_count ? co->args->patch_count : 1) * sizeof(size_t));
    pos[npo].index = npo;
    ok = pos[npo].label && pos[npo].matched;
    npo++;
  }
  if (ok) qsort(pos, npo, sizeof *pos, by_apply_order);
  if (!ok) {
    fprintf(stderr, "propertyoverride preview: out of memory\n");
  } else if (po_CliReport_ExitCode(&rep) != 0) {
    /* An override the webhook would refuse is never previewed: what it would do is nothing. */
    po_CliReport_Print(&rep, kPo_OutputFormat_Text, opt.verbose, stderr);
    rc = po_CliReport_ExitCode(&rep);
  } else if (npo == 0) {
    if (rep.count) po_CliReport_Print(&rep, kPo_OutputFormat_Text, opt.verbose, stderr);
    fprintf(stderr, "propertyoverride preview: no PropertyOverride in the inputs\n");
  } else {
    po_Status st;
    po_Status_Clear(&st);
    size_t len = 0;
    char *text = NULL, *fetched = NULL;
    if (admin) fetched = po_Preview_Fetch(admin, kMaxDump, timeout_s * 1000, a, &len, &st);
    else text = po_Cli_ReadFileMalloc(dump_path, kMaxDump, &len, &st);
    const char *src = admin ? admin : dump_path;
    po_ConfigDump dump;
    bool read = (text || fetched) && po_ConfigDump_ParseJson(dump_api, text ? text : fetched, len, a, &dump, &st);
    if ((text || fetched) && !read) po_Status_Prefix(&st, "%s: ", src);
    /* The dump's text is no longer needed: the arena holds a record and the bytes of each
     * resource, decoded when a patch matches it into an arena of its own, freed after it. */
    free(text);
    text = NULL;
    if (!read) {
      fprintf(stderr, "propertyoverride preview: %s\n", st.message);
    } else {
      if (rep.count) po_CliReport_Print(&rep, kPo_OutputFormat_Text, opt.verbose, stderr); /* warnings */
      int r = preview(&opt, pos, npo, &dump, a, stdout);
      if (r == -1) fprintf(stderr, "propertyoverride preview: out of memory\n");
      if (r >= 0 && po_Cli_Flush(stdout, "preview", "the preview")) rc = r;
    }
  }
  po_Arena_Free(a);
  return rc;
}
