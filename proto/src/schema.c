/* Loading the embedded Envoy descriptor set into a upb pool, and name lookups. */
#include "po/schema.h"

#include <pthread.h>
#include <string.h>

#include "google/protobuf/descriptor.upb.h"
#include "schema_internal.h"

extern const unsigned char po_envoy_descriptor_set[];
extern const size_t po_envoy_descriptor_set_size;

static const struct {
  const char *type;
  const char *message;
} kResources[] = {
    {"cluster", "envoy.config.cluster.v3.Cluster"},
    {"cluster-load-assignment", "envoy.config.endpoint.v3.ClusterLoadAssignment"},
    {"route", "envoy.config.route.v3.RouteConfiguration"},
    {"listener", "envoy.config.listener.v3.Listener"},
};
enum { kResourceCount = sizeof kResources / sizeof kResources[0] };

po_Schema *po_Schema_New(const void *set, size_t size, po_Status *status) {
  po_Schema *s = calloc(1, sizeof *s);
  if (!s) return po_Status_Set(status, kPo_ErrNoMemory, "schema: out of memory"), NULL;
  s->pool = upb_DefPool_New();
  upb_Arena *tmp = upb_Arena_New();
  if (!s->pool || !tmp) {
    po_Status_Set(status, kPo_ErrNoMemory, "schema: out of memory");
    goto fail;
  }
  const google_protobuf_FileDescriptorSet *fds =
      google_protobuf_FileDescriptorSet_parse((const char *)set, size, tmp);
  if (!fds) {
    po_Status_Set(status, kPo_ErrParse, "schema: the descriptor set is not a FileDescriptorSet");
    goto fail;
  }
  size_t n = 0;
  const google_protobuf_FileDescriptorProto *const *files =
      google_protobuf_FileDescriptorSet_file(fds, &n);
  for (size_t i = 0; i < n; i++) {
    upb_Status st;
    upb_Status_Clear(&st);
    if (!upb_DefPool_AddFile(s->pool, files[i], &st)) {
      upb_StringView name = google_protobuf_FileDescriptorProto_name(files[i]);
      po_Status_Set(status, kPo_ErrParse, "schema: %.*s: %s", (int)name.size, name.data,
                    upb_Status_ErrorMessage(&st));
      goto fail;
    }
  }
  s->file_count = n;
  upb_Arena_Free(tmp);
  tmp = NULL;
  for (int i = 0; i < kResourceCount; i++) {
    s->resources[i] = upb_DefPool_FindMessageByName(s->pool, kResources[i].message);
    if (!s->resources[i]) {
      po_Status_Set(status, kPo_ErrNotFound, "schema: %s is not in the descriptor set",
                    kResources[i].message);
      goto fail;
    }
  }
  /* Optional: without validate.proto there are simply no rules to check. */
  s->field_options = upb_DefPool_FindMessageByName(s->pool, "google.protobuf.FieldOptions");
  s->rules_ext = upb_DefPool_FindExtensionByName(s->pool, "validate.rules");
  return s;
fail:
  if (tmp) upb_Arena_Free(tmp);
  po_Schema_Free(s);
  return NULL;
}

void po_Schema_Free(po_Schema *s) {
  if (!s) return;
  if (s->pool) upb_DefPool_Free(s->pool);
  free(s);
}

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static po_Schema *g_schema;
static po_Status g_status;

static void load_default(void) {
  po_Status_Clear(&g_status);
  g_schema = po_Schema_New(po_envoy_descriptor_set, po_envoy_descriptor_set_size, &g_status);
}

const po_Schema *po_Schema_Get(po_Status *status) {
  pthread_once(&g_once, load_default);
  if (!g_schema && status) *status = g_status;
  return g_schema;
}

const upb_DefPool *po_Schema_Pool(const po_Schema *s) { return s->pool; }
size_t po_Schema_FileCount(const po_Schema *s) { return s->file_count; }

#ifndef PO_ENVOY_API_SNAPSHOT
#define PO_ENVOY_API_SNAPSHOT "unknown"
#endif
const char *po_Schema_Snapshot(void) { return PO_ENVOY_API_SNAPSHOT; }

const upb_MessageDef *po_Schema_FindMessage(const po_Schema *s, const char *name) {
  return name ? upb_DefPool_FindMessageByName(s->pool, name) : NULL;
}

const upb_MessageDef *po_Schema_ResourceMessage(const po_Schema *s, const char *type) {
  if (!type) return NULL;
  for (int i = 0; i < kResourceCount; i++) {
    if (strcmp(kResources[i].type, type) == 0) return s->resources[i];
  }
  return NULL;
}

const char *po_Schema_ResourceTypeOf(const upb_MessageDef *m) {
  const char *name = upb_MessageDef_FullName(m);
  for (int i = 0; i < kResourceCount; i++) {
    if (strcmp(kResources[i].message, name) == 0) return kResources[i].type;
  }
  return NULL;
}
