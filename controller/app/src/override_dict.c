/* What a PropertyOverride's text looks like on the API server (keys sorted, as the server writes a
 * custom resource; managedFields cut by the informer), for the PropertyOverride informer's
 * compressed cache (po_InformerOptions.text_dictionary): a text compressed against it keeps little
 * more than what differs from it (names, uid, resourceVersion, times, values). Not a schema and not
 * read as JSON: any text reads back exact whatever this holds; the closer it is to the cached
 * texts, the smaller they keep (tests/kube/test_kube_compact.c measures it). The most common
 * parts come last: zstd reaches the dictionary's end at the smallest offsets. It holds the
 * product's own vocabulary only (the keys, the finalizer, the reasons, the skeletons of the
 * messages the controller writes), never one workload's paths, values or names: fitted to the
 * benchmark's, it would measure the benchmark, not the users' PropertyOverrides. */
#include "kube_io.h"

const char kPo_App_OverrideDictionary[] =
    "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{\"annotations\":"
    "{\"kubectl.kubernetes.io/last-applied-configuration\":\"\"},\"creationTimestamp\":\"2026-01-01T00:00:00Z\","
    "\"deletionGracePeriodSeconds\":0,\"deletionTimestamp\":\"2026-01-01T00:00:00Z\",\"finalizers\":"
    "[\"propertyoverride.io/finalizer\"],\"generation\":2,\"labels\":{\"app.kubernetes.io/name\":\"\"},\"name\":\"\","
    "\"namespace\":\"default\",\"resourceVersion\":\"\",\"uid\":\"\"},\"spec\":{\"patches\":[{\"op\":\"remove\","
    "\"path\":\"/\",\"resourceFilter\":{\"resourceType\":\"listener\",\"trafficDirection\":\"inbound\",\"services\":"
    "[{\"name\":\"\",\"namespace\":\"\"}]},\"value\":{}}],\"priority\":10,\"targetRef\":{\"kind\":\"ProxyDefaults\","
    "\"name\":\"global\"}},\"status\":{\"conditions\":[{\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"message\":"
    "\"spec.patches[0].path: \",\"observedGeneration\":2,\"reason\":\"Invalid\",\"status\":\"False\",\"type\":"
    "\"Accepted\"},{\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"message\":\"nothing is live in ProxyDefaults "
    "default/global\",\"observedGeneration\":2,\"reason\":\"TargetNotFound\",\"status\":\"False\",\"type\":"
    "\"Programmed\"}],\"target\":{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":\"ProxyDefaults\"},"
    "\"programmedGeneration\":1}}"
    "{\"apiVersion\":\"propertyoverride.io/v1alpha1\",\"kind\":\"PropertyOverride\",\"metadata\":{"
    "\"creationTimestamp\":\"2026-01-01T00:00:00Z\",\"finalizers\":[\"propertyoverride.io/finalizer\"],"
    "\"generation\":1,\"name\":\"\",\"namespace\":\"default\",\"resourceVersion\":\"\",\"uid\":\"\"},\"spec\":{"
    "\"patches\":[{\"op\":\"add\",\"path\":\"/\",\"resourceFilter\":{\"resourceType\":\"cluster\","
    "\"trafficDirection\":\"outbound\"},\"value\":0}],\"targetRef\":{\"kind\":\"ServiceDefaults\",\"name\":\"\"}},"
    "\"status\":{\"conditions\":[{\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"message\":\" patch is valid for "
    "Consul and Envoy (judged against go-control-plane envoy v1.32.4, the Envoy API of Consul 1.22)\","
    "\"observedGeneration\":1,\"reason\":\"Accepted\",\"status\":\"True\",\"type\":\"Accepted\"},{"
    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\",\"message\":\"generation 1 is live in ServiceDefaults default/; "
    "patches[0] / and PropertyOverride default/ patches[0] set envoy.config.cluster.v3.Cluster. differently; default/ "
    "is applied before this one (same priority 0, then by name), so this one wins where both match; also patches[0] / "
    "and PropertyOverride default/ patches[0] set envoy.config.listener.v3.Listener. differently; default/ is applied "
    "after this one (same priority 0, then by name), so default/ wins where both match; and further "
    "PropertyOverrides (the first three are named)\",\"observedGeneration\":1,\"reason\":\"Overlapping\",\"status\":"
    "\"True\",\"type\":\"Programmed\"}],\"envoyApi\":{\"mesh\":\"Consul\",\"release\":\"1.22\",\"snapshot\":"
    "\"v1.32.4\"},\"lastValid\":{\"generation\":1,\"spec\":{\"patches\":[{\"op\":\"add\",\"path\":\"/\","
    "\"resourceFilter\":{\"resourceType\":\"cluster\",\"trafficDirection\":\"outbound\"},\"value\":0}],"
    "\"targetRef\":{\"kind\":\"ServiceDefaults\",\"name\":\"\"}}},\"observedGeneration\":1,"
    "\"programmedGeneration\":1,\"target\":{\"apiVersion\":\"consul.hashicorp.com/v1alpha1\",\"kind\":"
    "\"ServiceDefaults\",\"name\":\"\",\"namespace\":\"default\"}}}";

const size_t kPo_App_OverrideDictionaryLen = sizeof kPo_App_OverrideDictionary - 1;
