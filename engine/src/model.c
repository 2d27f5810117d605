/* The sets and names of the seed: Op, ResourceType, TrafficDirection. */
#include <string.h>

#include "internal.h"

static const char *const kOps[] = {[kPo_Op_Add] = "add", [kPo_Op_Remove] = "remove"};
static const char *const kResourceTypes[] = {
    [kPo_ResourceType_Cluster] = "cluster",
    [kPo_ResourceType_ClusterLoadAssignment] = "cluster-load-assignment",
    [kPo_ResourceType_Route] = "route",
    [kPo_ResourceType_Listener] = "listener",
};
static const char *const kResourceMessages[] = {
    [kPo_ResourceType_Cluster] = "envoy.config.cluster.v3.Cluster",
    [kPo_ResourceType_ClusterLoadAssignment] = "envoy.config.endpoint.v3.ClusterLoadAssignment",
    [kPo_ResourceType_Route] = "envoy.config.route.v3.RouteConfiguration",
    [kPo_ResourceType_Listener] = "envoy.config.listener.v3.Listener",
};
static const char *const kDirections[] = {[kPo_TrafficDirection_Inbound] = "inbound",
                                          [kPo_TrafficDirection_Outbound] = "outbound"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int find(const char *const *names, int n, const char *s) {
  if (!s) return 0;
  for (int i = 1; i < n; i++) {
    if (names[i] && strcmp(names[i], s) == 0) return i;
  }
  return 0;
}

/* On every compile: the two ops by their bytes, without strcmp calls (each && stops at the
 * first difference, so a shorter string is never read past its NUL); find() for the rest. */
po_Op po_Op_Parse(const char *s) {
  if (s && s[0] == 'a' && s[1] == 'd' && s[2] == 'd' && s[3] == '\0') return kPo_Op_Add;
  if (s && s[0] == 'r' && s[1] == 'e' && s[2] == 'm' && s[3] == 'o' && s[4] == 'v' && s[5] == 'e' && s[6] == '\0') {
    return kPo_Op_Remove;
  }
  return (po_Op)find(kOps, COUNT(kOps), s);
}
po_ResourceType po_ResourceType_Parse(const char *s) {
  return (po_ResourceType)find(kResourceTypes, COUNT(kResourceTypes), s);
}
po_TrafficDirection po_TrafficDirection_Parse(const char *s) {
  return (po_TrafficDirection)find(kDirections, COUNT(kDirections), s);
}
bool po_Ops_Contains(const char *op) { return po_Op_Parse(op) != kPo_Op_Unknown; }
bool po_ResourceTypes_Contains(const char *t) { return po_ResourceType_Parse(t) != kPo_ResourceType_Unknown; }

const char *po_ResourceType_Message(po_ResourceType t) {
  return t > 0 && t < COUNT(kResourceMessages) ? kResourceMessages[t] : NULL;
}
