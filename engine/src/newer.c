/* Fields that newer Envoy APIs have and this snapshot lacks, as data: so an unknown-field error
 * about one can say so plainly instead of suggesting a typo. Each entry names its evidence.
 * Only fields a source we read shows are listed; nothing is guessed. */
#include <string.h>

#include "compiled.h"

static const struct {
  const char *message, *field, *evidence;
} kNewer[] = {
    /* Consul's structpatcher_test.go (newest) lists Cluster's fields from the go-control-plane
     * Consul builds with; dns_jitter is the one this snapshot lacks. */
    {"envoy.config.cluster.v3.Cluster", "dns_jitter", "the go-control-plane Consul builds with has it"},
};

const char *po_EnvoyApi_Snapshot(void) { return po_Schema_Snapshot(); }
bool po_EnvoyApi_LoadOnDemand(void) { return po_Schema_LoadOnDemand(); }

const char *po_Hint_NewerField(const upb_MessageDef *m, const char *name, size_t len, po_Arena *a) {
  const char *full = NULL;
  for (size_t i = 0; i < sizeof kNewer / sizeof kNewer[0]; i++) {
    if (strlen(kNewer[i].field) != len || memcmp(kNewer[i].field, name, len)) continue;
    if (!full) full = upb_MessageDef_FullName(m);
    if (strcmp(kNewer[i].message, full)) continue;
    return po_Arena_Printf(a,
                           "'%s' is a field of %s in newer Envoy APIs (%s) but not in the API snapshot "
                           "this tool validates against (%s), so it cannot be checked here; Consul built "
                           "with a newer Envoy may accept it",
                           kNewer[i].field, full, kNewer[i].evidence, po_Schema_Snapshot());
  }
  return NULL;
}
