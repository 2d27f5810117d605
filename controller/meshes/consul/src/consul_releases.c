/* Consul's releases and the Envoy API each is judged by (po/targets/release.h). What a release
 * pins is read from its go.mod as the Go module proxy serves github.com/hashicorp/consul. */
#include "po/meshes/consul.h"

static const po_MeshRelease kRows[] = {
    {"1.21", "v1.32.4", "github.com/envoyproxy/go-control-plane v0.12.0 (the module before the envoy module was split out)",
     "go.mod of github.com/hashicorp/consul v1.21.4; older than every embedded snapshot: judged with the oldest, "
     "v1.32.4 (Consul 1.22's own)"},
    {"1.22", "v1.32.4", "github.com/envoyproxy/go-control-plane/envoy v1.32.4",
     "go.mod of github.com/hashicorp/consul v1.22.0: exactly the embedded v1.32.4"},
};

const po_MeshReleases po_Consul_Releases = {kRows, sizeof kRows / sizeof kRows[0], 1};
