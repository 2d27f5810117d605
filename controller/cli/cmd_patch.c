/* propertyoverride patch: Consul's PatchStruct on one message, from files. */
#include <getopt.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "gitops.h"

static const char kUsage[] =
    "usage: propertyoverride patch --message FULL.NAME --input IN.json --patches PATCHES.json [--debug]\n"
    "                              [--rules] [--mesh MESH[@RELEASE]] [--envoy-api VERSION]\n"
    "\n"
    "Applies patches to one Envoy message with the exact semantics of Consul's\n"
    "builtin/property-override PatchStruct, in order, stopping at the first error. Values are\n"
    "typed as Consul's own Go tests write them (integers int, lists typed by their elements);\n"
    "`validate --consul-arguments` types them as Consul's HTTP API delivers them.\n"
    "Like PatchStruct, it does not check Envoy's protoc-gen-validate rules by default: a patched\n"
    "message Envoy would refuse (`max_ejection_percent` 150) is printed as Consul would make it.\n"
    "\n"
    "  --message FULL.NAME   the message type, e.g. envoy.config.cluster.v3.Cluster\n"
    "  --input FILE          the message as proto3 JSON (`@type` Anys allowed); - for stdin\n"
    "  --patches FILE        a JSON array of {\"op\", \"path\", \"value\"} objects (keys in any case;\n"
    "                        no \"value\" means none)\n"
    "  --debug               list every field of a message in unknown-field errors, not 10\n"
    "  --mesh MESH[@RELEASE] the message and patches are of the Envoy API this mesh release is\n"
    "                        built on (consul@1.22, istio@1.30, envoy-gateway@1.9; `version`\n"
    "                        lists them); default: go-control-plane envoy v1.32.4, Consul's\n"
    "  --envoy-api VERSION   the embedded Envoy API snapshot instead (v1.32.4, v1.37.0, v1.40.0)\n"
    "  --rules               also judge Envoy's protoc-gen-validate rules, as `preview` does, on\n"
    "                        what each patch leaves in this message: the value it sets (a\n"
    "                        Duration set a part at a time with this message's other part), the\n"
    "                        messages it creates, what a remove leaves; each violation on\n"
    "                        stderr, nothing on stdout, exit 1 (rule kinds not judged are said\n"
    "                        as warnings)\n"
    "\n"
    "Exit status: 0 patched (the message on stdout, proto field names); 1 a patch failed (the\n"
    "error on stderr), or with --rules the result breaks Envoy's rules; 2 bad usage, unreadable input, or a patched message JSON cannot carry\n"
    "(a Duration or Timestamp out of protobuf's range: the field is named).\n";

static const po_Value *key(const po_Value *m, const char *name) {
  const po_Value *v = po_Value_Get(m, name);
  for (size_t i = 0; !v && i < po_Value_Size(m); i++) {
    if (strcasecmp(po_Value_KeyAt(m, i), name) == 0) v = po_Value_At(m, i);
  }
  return v;
}

static int usage_error(const char *msg) {
  fprintf(stderr, "propertyoverride patch: %s\n\n%s", msg, kUsage);
  return kPo_Exit_Usage;
}

/* --rules: Envoy's rules on the patched message itself (po_Override_ApplyChecked: what each add
 * created and set, with the message's own parts where the patch sets a Duration's one part), and
 * the compile's findings on each remove (`judged`, compiled with the rules: what a remove leaves
 * is known from the schema; its warnings that leave a resource to preview are left out, this is
 * the resource). Each on stderr; exit 1 when any is an error. */
static int rule_report(const po_Arguments *args, const po_Diagnostics *judged, const po_Diagnostics *applied) {
  int rc = kPo_Exit_Ok;
  const po_Diagnostics *all[2] = {judged, applied};
  for (int k = 0; k < 2; k++) {
    for (size_t i = 0; all[k] && i < po_Diagnostics_Count(all[k]); i++) {
      const po_Diagnostic *x = po_Diagnostics_At(all[k], i);
      if (x->kind != kPo_DiagKind_EnvoyRule && x->kind != kPo_DiagKind_EnvoyRuleNotJudged) continue;
      bool remove = x->patch_index >= 0 && (size_t)x->patch_index < args->patch_count &&
                    !strcmp(args->patches[x->patch_index].op, "remove");
      if (k == 0 && !remove) continue;
      bool err = x->severity == kPo_Severity_Error;
      if (err) rc = kPo_Exit_Invalid;
      fprintf(stderr, "%s: patch %d (%s): %s\n", err ? "Envoy's rules" : "warning", x->patch_index, x->path ? x->path : "",
              x->message);
    }
  }
  return rc;
}

/* --rules: the patches applied to the message, which is known here, so what they create and set
 * is judged on it (not left to preview as a compile leaves it); removes by a compile with the
 * rules. The exit status. */
static int apply_judged(const char *message, const po_Arguments *args, const po_CompileOptions *co, const po_Override *o,
                        po_Message *msg, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  po_Diagnostics *found = po_Diagnostics_New(a), *judged = po_Diagnostics_New(a);
  po_CompileOptions ro = *co;
  ro.envoy_rules = true;
  if (!found || !judged || !po_Override_BuildFor(message, args, &ro, a, judged) ||
      !po_Override_ApplyChecked(o, msg, NULL, NULL, found, &st)) {
    fprintf(stderr, "propertyoverride patch: %s\n", found && judged ? st.message : "out of memory");
    return kPo_Exit_Usage;
  }
  return rule_report(args, judged, found);
}

/* ---- parse ---- */

typedef struct {
  const char *message, *input, *patches_path;
  bool debug, rules;
  po_CliApiChoice api; /* --mesh / --envoy-api: the snapshot the message and patches are of */
} PatchArgs;

/* The flags into *pa; -1 to go on, else the exit status (help printed, or a usage error). */
static int parse(int argc, char **argv, PatchArgs *pa) {
  static const struct option opts[] = {{"message", required_argument, 0, 'm'},
                                       {"input", required_argument, 0, 'i'},
                                       {"patches", required_argument, 0, 'p'},
                                       {"debug", no_argument, 0, 'd'},
                                       {"rules", no_argument, 0, 'r'},
                                       {"help", no_argument, 0, 'h'},
                                       {"mesh", required_argument, 0, kPo_CliOpt_Mesh},
                                       {"envoy-api", required_argument, 0, kPo_CliOpt_EnvoyApi},
                                       {0, 0, 0, 0}};
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
    switch (c) {
      case 'm': pa->message = optarg; break;
      case 'i': pa->input = optarg; break;
      case 'p': pa->patches_path = optarg; break;
      case 'd': pa->debug = true; break;
      case 'r': pa->rules = true; break;
      case 'h': fputs(kUsage, stdout); return kPo_Exit_Ok;
      case kPo_CliOpt_Mesh:
      case kPo_CliOpt_EnvoyApi:
        if (!po_Cli_ApiOption(c, optarg, "patch", &pa->api)) return kPo_Exit_Usage;
        break;
      default: return usage_error(optopt ? "an option is missing its argument" : "unknown option");
    }
  }
  if (optind < argc) return usage_error("unexpected argument");
  if (!pa->message || !pa->input || !pa->patches_path) return usage_error("--message, --input and --patches are required");
  return -1;
}

/* ---- the inputs: the message and the patches ---- */

/* The patches file's array checked (objects, string op and path) and made bare patches (no
 * filters: PatchStruct's checks only). false with st set. */
static bool read_patches(const PatchArgs *pa, const char *ptext, size_t plen, po_Arena *a, po_Arguments *args,
                         po_Status *st) {
  po_Value *patches = po_Value_ParseJson(ptext, plen, a, st);
  if (!patches) return po_Status_Prefix(st, "%s: ", pa->patches_path), false;
  if (po_Value_Kind(patches) != kPo_ValueKind_List) {
    return po_Status_Set(st, kPo_Status_Parse, "%s: expected a JSON array of patches, found %s", pa->patches_path,
                         po_Value_GoType(patches));
  }
  for (size_t i = 0; i < po_Value_Size(patches); i++) {
    const po_Value *pv = po_Value_At(patches, i);
    if (po_Value_Kind(pv) != kPo_ValueKind_Map) {
      return po_Status_Set(st, kPo_Status_Parse, "%s: patch %zu: expected an object with op, path and value, found %s",
                           pa->patches_path, i, po_Value_GoType(pv));
    }
    const po_Value *op = key(pv, "op"), *path = key(pv, "path");
    if ((op && po_Value_Kind(op) != kPo_ValueKind_String) || (path && po_Value_Kind(path) != kPo_ValueKind_String)) {
      return po_Status_Set(st, kPo_Status_Parse, "%s: patch %zu: \"op\" and \"path\" must be strings", pa->patches_path, i);
    }
  }
  *args = (po_Arguments){.debug = pa->debug, .proxy_type = ""};
  args->patch_count = po_Value_Size(patches);
  args->patches = po_Arena_Malloc(a, (args->patch_count ? args->patch_count : 1) * sizeof *args->patches);
  if (!args->patches) return po_Status_Set(st, kPo_Status_NoMemory, "out of memory");
  for (size_t i = 0; i < args->patch_count; i++) {
    const po_Value *pv = po_Value_At(patches, i);
    const po_Value *op = key(pv, "op"), *path = key(pv, "path");
    po_Patch *p = &args->patches[i];
    p->op = op ? po_Value_String(op, NULL) : "";
    p->path = path ? po_Value_String(path, NULL) : "";
    p->value = key(pv, "value");
    if (p->value && po_Value_Kind(p->value) == kPo_ValueKind_Null) p->value = NULL;
  }
  return true;
}

/* The message (in the chosen snapshot) and the patches; false with st set, which the caller
 * reports. */
static bool read_inputs(const PatchArgs *pa, po_Arena *a, po_Message **msg, po_Arguments *args, po_Status *st) {
  size_t len = 0, plen = 0;
  char *in = po_Cli_ReadFile(pa->input, a, &len, st);
  char *ptext = in ? po_Cli_ReadFile(pa->patches_path, a, &plen, st) : NULL;
  if (!ptext) return false;
  *msg = po_Message_ParseJson(po_CliApiChoice_Api(&pa->api), pa->message, in, len, a, st);
  if (!*msg && st->code == kPo_Status_Parse) po_Status_Prefix(st, "%s: ", pa->input);
  return *msg && read_patches(pa, ptext, plen, a, args, st);
}

/* ---- run: one compile of every patch, one apply ---- */

/* The first compile error: Consul's text, then our hint on a line of its own, in one
 * status-sized buffer as po_PatchStruct composes it; exit 1. */
static int report_invalid(const po_Diagnostics *d, po_Arena *a) {
  po_Status *st = po_Arena_Malloc(a, sizeof *st); /* 8 KiB: not on the stack, nor static */
  if (!st) return fprintf(stderr, "propertyoverride patch: out of memory\n"), kPo_Exit_Usage;
  const po_Diagnostic *x = NULL;
  for (size_t i = 0; !x && i < po_Diagnostics_Count(d); i++) {
    if (po_Diagnostics_At(d, i)->severity == kPo_Severity_Error) x = po_Diagnostics_At(d, i);
  }
  snprintf(st->message, sizeof st->message, "%s", x ? x->message : "");
  size_t mlen = strlen(st->message);
  if (x && x->hint) {
    snprintf(st->message + mlen, sizeof st->message - mlen, "%s%s", mlen && st->message[mlen - 1] == '\n' ? "" : "\n",
             x->hint);
  }
  fputs(st->message, stderr);
  if (st->message[0] && st->message[strlen(st->message) - 1] != '\n') fputc('\n', stderr);
  return kPo_Exit_Invalid;
}

/* Compiling never depends on the message, so the first patch that fails to compile is the first
 * that PatchStruct, applying in order, would fail on. The exit status; 0 when msg is patched. */
static int run(const PatchArgs *pa, const po_Arguments *args, po_Message *msg, po_Arena *a) {
  po_CompileOptions co = po_CompileOptions_Default();
  co.envoy_rules = co.deprecations = false; /* PatchStruct is Consul's: rules belong to validation */
  co.api = po_Message_Api(msg);
  /* an unknown field's hint names --mesh's release and the releases accepting it, as explain's */
  co.releases = pa->api.mesh ? po_Mesh_ApiReleases(pa->api.mesh->mesh) : po_Mesh_AllApiReleases();
  if (pa->api.release && !pa->api.api) {
    co.judged_for = po_Arena_Printf(a, "%s@%s", po_Mesh_Name(pa->api.mesh->mesh), pa->api.release->release);
  }
  po_Diagnostics *d = po_Diagnostics_New(a);
  po_Override *o = d ? po_Override_BuildFor(pa->message, args, &co, a, d) : NULL;
  /* A lookup that failed for lack of memory reads as "no such field": no verdict then. */
  if (!o || po_Engine_OutOfMemory(a)) {
    fprintf(stderr, "propertyoverride patch: out of memory\n");
    return kPo_Exit_Usage;
  }
  if (!po_Override_Valid(o)) return report_invalid(d, a);
  if (pa->rules) return apply_judged(pa->message, args, &co, o, msg, a);
  po_Status st;
  po_Status_Clear(&st);
  if (!po_Override_Apply(o, msg, NULL, NULL, &st)) {
    fprintf(stderr, "propertyoverride patch: %s\n", st.message);
    return kPo_Exit_Usage;
  }
  return kPo_Exit_Ok;
}

/* ---- report: the patched message ---- */

static int report(const po_Message *msg, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  char *out = po_Message_ToJson(msg, a, &len, &st);
  if (!out) {
    /* Every patch applied (Consul's PatchStruct accepts it: Go sets the int64 as given), but the
     * result has no proto3 JSON form: output that cannot be produced, as a report that cannot be
     * written is, not a patch that failed. */
    fprintf(stderr, "propertyoverride patch: the patches applied, but %s\n", st.message);
    return kPo_Exit_Usage;
  }
  fwrite(out, 1, len, stdout);
  fputc('\n', stdout);
  return kPo_Exit_Ok;
}

int po_Cmd_Patch(int argc, char **argv) {
  PatchArgs pa = {0};
  int rc = parse(argc, argv, &pa);
  if (rc >= 0) return rc;
  po_Arena *a = po_Arena_New();
  po_Status *st = a ? po_Arena_Malloc(a, sizeof *st) : NULL; /* 8 KiB: not on the stack, nor static */
  if (!st) return po_Arena_Free(a), fprintf(stderr, "propertyoverride patch: out of memory\n"), kPo_Exit_Usage;
  po_Status_Clear(st);
  po_Message *msg = NULL;
  po_Arguments args;
  if (!read_inputs(&pa, a, &msg, &args, st)) {
    bool oom = po_Engine_OutOfMemory(a) || st->code == kPo_Status_NoMemory;
    fprintf(stderr, "propertyoverride patch: %s\n", oom ? "out of memory" : st->message);
    rc = kPo_Exit_Usage;
  } else {
    rc = run(&pa, &args, msg, a);
    if (rc == kPo_Exit_Ok) rc = report(msg, a);
  }
  po_Arena_Free(a);
  return rc;
}
