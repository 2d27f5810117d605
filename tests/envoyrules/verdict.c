/* Our verdict on a case through the product's own entry points, in process (a process per case
 * would cost more than everything else together), each given the run's snapshot
 * (po_DiffSnapshot_TargetOptions: a mesh release judged with it, else the snapshot named):
 *   validate --consul-arguments  po_Constructor under the wire convention, as cmd_validate.c calls it
 *   the webhook                  po_Admission_Review on an AdmissionReview of a ServiceDefaults
 *                                holding the arguments, and of a PropertyOverride with the patch
 *   validate -f                  po_Cli_CheckObject on the same two objects, as cmd_validate.c's
 *                                check_one calls it
 * and the patch applied to an empty resource (Consul's PatchStruct meaning) for the oracle. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "gitops.h"
#include "internal.h"
#include "po/meshes/mesh.h"
#include "po/webhook/admission.h"

const char *po_DiffPath_Name(int path) {
  static const char *const kNames[] = {"validate --consul-arguments", "webhook (ServiceDefaults)",
                                       "webhook (PropertyOverride)", "validate -f (ServiceDefaults)",
                                       "validate -f (PropertyOverride)", "webhook (PropertyOverride, mesh target)",
                                       "validate -f (PropertyOverride, mesh target)"};
  return path >= 0 && path < kPo_DiffPath_Count ? kNames[path] : "?";
}

static const char *arguments(const po_DiffCase *c, po_Arena *a) {
  return po_Arena_Printf(a,
                         "{\"Patches\":[{\"ResourceFilter\":{\"ResourceType\":\"%s\",\"TrafficDirection\":\"outbound\"},"
                         "\"Op\":\"add\",\"Path\":%s,\"Value\":%s}]}",
                         c->resource, po_Diff_JsonString(a, c->path, strlen(c->path)), c->value);
}

static const char *service_defaults(const po_DiffCase *c, po_Arena *a) {
  return po_Arena_Printf(a,
                         "{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ServiceDefaults\","
                         "\"metadata\":{\"name\":\"api\",\"namespace\":\"team-a\"},\"spec\":{\"protocol\":\"http\","
                         "\"envoyExtensions\":[{\"name\":\"builtin/property-override\",\"arguments\":%s}]}}",
                         arguments(c, a));
}

static const char *property_override(const po_DiffCase *c, po_Arena *a) {
  return po_Arena_Printf(a,
                         "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                         "\"metadata\":{\"name\":\"po\",\"namespace\":\"team-a\"},\"spec\":{\"targetRef\":"
                         "{\"kind\":\"ServiceDefaults\",\"name\":\"api\"},\"patches\":[{\"resourceFilter\":"
                         "{\"resourceType\":\"%s\",\"trafficDirection\":\"outbound\"},\"op\":\"add\",\"path\":%s,"
                         "\"value\":%s}]}}",
                         c->resource, po_Diff_JsonString(a, c->path, strlen(c->path)), c->value);
}

bool po_DiffVerdict_Mesh(po_Mesh *mesh) {
  static const po_Mesh kOrder[] = {kPo_Mesh_Istio, kPo_Mesh_EnvoyGateway};
  for (size_t i = 0; i < 2; i++) {
    if (po_DiffSnapshot_Release(kOrder[i])) return *mesh = kOrder[i], true;
  }
  return false;
}

/* The same PropertyOverride targeting an Istio Service or an Envoy Gateway Gateway. */
static const char *mesh_override(const po_DiffCase *c, po_Mesh mesh, po_Arena *a) {
  const char *ref = mesh == kPo_Mesh_Istio ? "{\"group\":\"\",\"kind\":\"Service\",\"name\":\"api\"}"
                                           : "{\"group\":\"gateway.networking.k8s.io\",\"kind\":\"Gateway\",\"name\":\"eg\"}";
  return po_Arena_Printf(a,
                         "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\","
                         "\"metadata\":{\"name\":\"po\",\"namespace\":\"team-a\"},\"spec\":{\"targetRef\":%s,"
                         "\"patches\":[{\"resourceFilter\":{\"resourceType\":\"%s\",\"trafficDirection\":\"outbound\"},"
                         "\"op\":\"add\",\"path\":%s,\"value\":%s}]}}",
                         ref, c->resource, po_Diff_JsonString(a, c->path, strlen(c->path)), c->value);
}

/* Whether the compile the webhook and validate -f share refuses the object for its mesh's rules
 * alone (every error of kind target). */
static bool mesh_only(const char *object, po_Arena *a, const char **why) {
  json_object *obj = json_tokener_parse(object);
  po_TargetOptions topts = {0};
  po_DiffSnapshot_TargetOptions(&topts);
  po_CompiledOverride c;
  bool target = false, other = false;
  if (obj && po_CompiledOverride_FromObject(obj, &topts, a, &c) == kPo_CompileOutcome_Refused) {
    for (size_t i = 0; c.diags && i < po_Diagnostics_Count(c.diags); i++) {
      const po_Diagnostic *d = po_Diagnostics_At(c.diags, i);
      if (d->severity != kPo_Severity_Error) continue;
      if (d->kind == kPo_DiagKind_Target && !target) *why = po_Arena_Strndup(a, d->message, strlen(d->message));
      if (d->kind == kPo_DiagKind_Target) target = true;
      else other = true;
    }
  }
  json_object_put(obj);
  return target && !other;
}

static po_Value *parse(const char *json, po_Arena *a) {
  po_Status st;
  po_Status_Clear(&st);
  return json ? po_Value_ParseJson(json, strlen(json), a, &st) : NULL;
}

/* Consul's Constructor as `validate --consul-arguments` runs it (its default, wire convention). */
static bool by_arguments(const po_DiffCase *c, po_Arena *a, po_DiffVerdict *out) {
  po_Value *args = parse(arguments(c, a), a);
  po_Diagnostics *d = po_Diagnostics_New(a);
  if (!args || !d) return false;
  po_CompileOptions co = po_CompileOptions_Default();
  co.convention = kPo_Convention_Wire;
  co.api = po_DiffSnapshot_Api();
  out->ok[kPo_DiffPath_Args] = po_Constructor(NULL, args, &co, a, d) != NULL;
  for (size_t i = 0; i < po_Diagnostics_Count(d); i++) {
    const po_Diagnostic *x = po_Diagnostics_At(d, i);
    if (x->severity != kPo_Severity_Error) continue;
    if (!out->why) out->why = x->message;
  }
  return true;
}

bool po_DiffVerdict_Webhook(const char *group, const char *kind, const char *object, po_Arena *a, bool *ok,
                           const char **why) {
  const char *body = po_Arena_Printf(a,
                                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":"
                                     "{\"uid\":\"u1\",\"kind\":{\"group\":\"%s\",\"version\":\"v1alpha1\",\"kind\":\"%s\"},"
                                     "\"operation\":\"CREATE\",\"namespace\":\"team-a\",\"object\":%s,\"oldObject\":null}}",
                                     group, kind, object);
  po_TargetOptions topts = {0};
  po_DiffSnapshot_TargetOptions(&topts);
  po_AdmissionOptions opt = {.targets = &topts};
  po_CtlStatus cst;
  json_object *resp = body ? po_Admission_Review(body, strlen(body), &opt, a, &cst) : NULL;
  if (!resp) return false;
  json_object *r = NULL, *allowed = NULL, *st = NULL, *msg = NULL;
  json_object_object_get_ex(resp, "response", &r);
  json_object_object_get_ex(r, "allowed", &allowed);
  *ok = allowed && json_object_get_boolean(allowed);
  if (!*ok && json_object_object_get_ex(r, "status", &st) && json_object_object_get_ex(st, "message", &msg) && !*why) {
    *why = po_Arena_Strndup(a, json_object_get_string(msg), strlen(json_object_get_string(msg)));
  }
  json_object_put(resp);
  return true;
}

bool po_DiffVerdict_File(int kind, const char *kind_name, const char *object, po_Arena *a, bool *ok) {
  po_Value *v = parse(object, a);
  if (!v) return false;
  po_Tenancy tenancy = {0};
  po_TargetOptions topts = {.tenancy = &tenancy};
  po_DiffSnapshot_TargetOptions(&topts);
  po_CliReport r;
  po_CliReport_Init(&r, a);
  po_CliObject o = {.file = "-", .doc = 1, .item = -1, .kind = (po_ObjKind)kind, .kind_name = kind_name, .value = v};
  /* a mesh's own object: its mesh as validate -f finds it (by apiVersion group and kind) */
  if (o.kind == kPo_ObjKind_MeshNative && po_CliObject_Kind(v, &o.kind_name, &o.native) != kPo_ObjKind_MeshNative) return false;
  if (!po_Cli_CheckObject(&o, &topts, a, &r, NULL)) return false;
  *ok = r.invalid == 0 && r.valid == 1;
  return true;
}

bool po_DiffVerdict_Of(const po_DiffCase *c, po_Arena *a, po_DiffVerdict *out) {
  *out = (po_DiffVerdict){0};
  for (int p = 0; p < kPo_DiffPath_Count; p++) out->used[p] = true;
  const char *sd = service_defaults(c, a), *po = property_override(c, a);
  const char *why = NULL;
  po_Mesh mesh;
  out->used[kPo_DiffPath_HookMesh] = out->used[kPo_DiffPath_FileMesh] = po_DiffVerdict_Mesh(&mesh);
  if (out->used[kPo_DiffPath_HookMesh]) {
    const char *mo = mesh_override(c, mesh, a);
    if (!mo || !po_DiffVerdict_Webhook("propertyoverride.io", "PropertyOverride", mo, a, &out->ok[kPo_DiffPath_HookMesh], &why) ||
        !po_DiffVerdict_File(kPo_ObjKind_PropertyOverride, "PropertyOverride", mo, a, &out->ok[kPo_DiffPath_FileMesh]))
      return false;
    out->mesh_refused = !out->ok[kPo_DiffPath_HookMesh] && mesh_only(mo, a, &out->mesh_why);
  }
  return sd && po && by_arguments(c, a, out) &&
         po_DiffVerdict_Webhook("consul.hashicorp.com", "ServiceDefaults", sd, a, &out->ok[kPo_DiffPath_HookSD], &why) &&
         po_DiffVerdict_Webhook("propertyoverride.io", "PropertyOverride", po, a, &out->ok[kPo_DiffPath_HookPO], &why) &&
         po_DiffVerdict_File(kPo_ObjKind_ServiceDefaults, "ServiceDefaults", sd, a, &out->ok[kPo_DiffPath_FileSD]) &&
         po_DiffVerdict_File(kPo_ObjKind_PropertyOverride, "PropertyOverride", po, a, &out->ok[kPo_DiffPath_FilePO]) &&
         (out->why = out->why ? out->why : why, true);
}

/* ---- the patched resource ---- */

static const char *base64(const char *p, size_t n, po_Arena *a) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  char *out = po_Arena_Malloc(a, (n + 2) / 3 * 4 + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)(unsigned char)p[i] << 16;
    if (i + 1 < n) v |= (uint32_t)(unsigned char)p[i + 1] << 8;
    if (i + 2 < n) v |= (unsigned char)p[i + 2];
    out[o++] = kAlphabet[v >> 18 & 63];
    out[o++] = kAlphabet[v >> 12 & 63];
    out[o++] = i + 1 < n ? kAlphabet[v >> 6 & 63] : '=';
    out[o++] = i + 2 < n ? kAlphabet[v & 63] : '=';
  }
  out[o] = '\0';
  return out;
}

/* The wire bytes, not proto3 JSON: what Consul sends Envoy, and a Duration whose nanos are out of
 * range (which PatchStruct sets through /nanos) has no JSON form but is judged by the validators. */
const char *po_Diff_Apply(const po_DiffCase *c, po_Arena *a, const char **message_name, const char **why) {
  po_Status st;
  po_Status_Clear(&st);
  *message_name = po_ResourceType_Message(po_ResourceType_Parse(c->resource));
  po_Message *m = *message_name ? po_Message_New(po_DiffSnapshot_Api(), *message_name, a, &st) : NULL;
  po_Patch p = {.op = "add", .path = c->path, .value = parse(c->value, a)};
  if (!m || !p.value) {
    *why = m ? "the value is not JSON" : st.message;
    return NULL;
  }
  if (!po_PatchStruct(m, &p, false, kPo_Convention_Wire, &st)) {
    *why = po_Arena_Strndup(a, st.message, strlen(st.message));
    return NULL;
  }
  size_t len = 0;
  char *bytes = po_Binary_Encode(m->def, m->msg, po_Arena_Upb(a), &len, &st);
  if (!bytes) {
    *why = po_Arena_Strndup(a, st.message, strlen(st.message));
    return NULL;
  }
  return base64(bytes, len, a);
}
