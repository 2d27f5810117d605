/* libFuzzer target: Envoy admin /config_dump JSON, preview's input (po_ConfigDump_ParseJson),
 * and the meshes' naming over what it read (po_Mesh_Classify: Consul with and without a local
 * datacenter, Istio). Nothing may crash, assert, leak or hang; every failure carries a message;
 * every resource read has a name, a known type and a message that prints as JSON or says why
 * not; every classification gives a direction, and a service only with a name. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "po/engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  po_Arena *a = po_Arena_New();
  if (!a) return 0;
  /* exactly the input's bytes: the reader must not read past them */
  char *json = malloc(size ? size : 1);
  if (!json) abort();
  memcpy(json, data, size);
  po_Status st;
  po_Status_Clear(&st);
  po_ConfigDump d;
  if (!po_ConfigDump_ParseJson(NULL, json, size, a, &d, &st)) {
    if (!st.message[0]) abort();
  } else {
    for (size_t i = 0; i < d.count; i++) {
      po_DumpResource *r = &d.resources[i];
      if (!r->name || !r->where || r->type == kPo_ResourceType_Unknown) abort();
      /* a route is decoded by po_Mesh_Classify when it needs to look inside (streamed dumps) */
      static const char *const kDcs[] = {NULL, "dc1"};
      for (int mesh = 0; mesh < 2; mesh++) {
        for (int k = 0; k < 2; k++) {
          po_MeshResource m;
          if (!po_Mesh_Classify(mesh ? kPo_Mesh_Istio : kPo_Mesh_Consul, kDcs[k], r, a, &m)) abort();
          if (m.direction != kPo_TrafficDirection_Inbound && m.direction != kPo_TrafficDirection_Outbound) abort();
          if (m.has_service && (!m.service.name || !m.service.namespace_ || !m.service.partition)) abort();
        }
      }
      po_Status es;
      po_Status_Clear(&es);
      size_t len = 0;
      /* decoded on demand: an invalid resource is an error naming where, never a crash */
      po_Message *msg = po_DumpResource_Decode(r, &es);
      if (!msg) {
        if (!strstr(es.message, r->where)) abort();
        continue;
      }
      if (po_DumpResource_Decode(r, &es) != msg) abort(); /* decoded once, then kept */
      if (!po_Message_ToJson(msg, a, &len, &es) && !es.message[0]) abort();
    }
  }
  free(json);
  po_Arena_Free(a);
  return 0;
}
