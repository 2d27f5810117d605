/* The Consul target (DESIGN.md section 6): our builtin/property-override entries in the
 * spec.envoyExtensions of a consul.hashicorp.com/v1alpha1 ServiceDefaults (or the ProxyDefaults
 * named global).
 *
 * Each entry we write carries its source in its arguments, under a key Consul's decoder ignores
 * (unknown keys are ignored, docs/consul-semantics.md 2.4):
 *     "PropertyOverride": {"name": "<PropertyOverride name>", "generation": <N>}
 * That is how we find our own entries again (to replace, restore or remove only them), and
 * what tells which generation is live. Entries of others are never touched and keep their
 * order; ours follow them, ordered by PropertyOverride name. A target we create is labelled
 * app.kubernetes.io/managed-by=propertyoverride and annotated propertyoverride.io/created=true;
 * we delete it only when it is ours and nothing else is left in it. */
#ifndef PO_TARGETS_CONSUL_H_
#define PO_TARGETS_CONSUL_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "po/engine.h"
#include "po/targets/override.h"

struct json_object;

#define PO_CONSUL_GROUP "consul.hashicorp.com"
#define PO_CONSUL_VERSION "v1alpha1"
#define PO_EXTENSION_NAME "builtin/property-override"

typedef struct {
  const char *owner;               /* PropertyOverride name (same namespace as the target) */
  int64_t generation;
  struct json_object *arguments;   /* borrowed; the arguments including the source key */
} po_ConsulEntry;

/* The resource name of a kind ("servicedefaults", "proxydefaults"). */
const char *po_Consul_Resource(po_TargetKind kind);

/* The arguments to write for one compiled PropertyOverride (a new reference). */
struct json_object *po_Consul_Arguments(const po_CompiledOverride *c);

/* Our entries in a target as it is (NULL: absent). Returns how many; at most `cap` are filled.
 * Borrowed from `target`. */
size_t po_Consul_OwnedEntries(const struct json_object *target, po_ConsulEntry *out, size_t cap);

typedef struct {
  struct json_object *object; /* the desired target (new reference), NULL when it should not exist */
  bool changed;               /* differs from the current one (create, update or delete needed) */
  bool create;                /* it does not exist yet */
  bool remove;                /* it should be deleted (we created it and nothing else is left) */
} po_ConsulPlan;

/* The target as it should be with exactly `entries` (sorted here by owner) as our entries.
 * `current` NULL means it does not exist. Every other field and extension is preserved. */
po_ConsulPlan po_Consul_Plan(const struct json_object *current, po_TargetKind kind, const char *ns,
                             const char *name, const po_ConsulEntry *entries, size_t n);

#endif
