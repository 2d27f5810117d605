/* Envoy Gateway's releases and the Envoy API each is judged by (po/targets/release.h). What a
 * release pins is read from the go.mod of its tag of github.com/envoyproxy/gateway as the Go
 * module proxy serves it (v1.5.0, v1.7.0, v1.8.0, v1.9.0 and v1.9.1; no v1.6 tag is served: that
 * row is issue 24's). Each pins a pseudo-version: judged with the nearest embedded tag (the issue
 * allows one v1.37.x for 1.6 to 1.9). */
#include "po/meshes/eg.h"

static const po_MeshRelease kRows[] = {
    {"1.5", "v1.32.4", "github.com/envoyproxy/go-control-plane/envoy v1.32.5-0.20250622153809-434b6986176d",
     "go.mod of github.com/envoyproxy/gateway v1.5.0; nearest tag v1.32.4"},
    {"1.6", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.35.x .. v1.36.x (a pseudo-version)",
     "issue 24's table (no v1.6 tag is served here); one v1.37.x for 1.6 to 1.9"},
    {"1.7", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.36.1-0.20260113062649-004b9ec70a46",
     "go.mod of github.com/envoyproxy/gateway v1.7.0; the nearest embedded snapshot at least as new, v1.37.0"},
    {"1.8", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260409050421-3f47accd6e14",
     "go.mod of github.com/envoyproxy/gateway v1.8.0; nearest tag v1.37.0"},
    {"1.9", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260729145720-a2d8c7492908",
     "go.mod of github.com/envoyproxy/gateway v1.9.0 and v1.9.1; nearest tag v1.37.0"},
};

const po_MeshReleases po_EG_Releases = {kRows, sizeof kRows / sizeof kRows[0], 4};
