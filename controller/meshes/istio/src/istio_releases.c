/* Istio's releases and the Envoy API each is judged by (po/targets/release.h). Istio tags no Go
 * module versions: the Go module proxy serves istio.io/istio as pseudo-versions, and where one of
 * a release's branch is served its go.mod says what it pins (its VERSION file names the release).
 * The others are from issue 24's table, which read each release's go.mod. A release pinning a
 * pseudo-version is judged with the nearest embedded tag (the issue allows one v1.37.x for
 * 1.28 to 1.31). */
#include "po/meshes/istio.h"

static const po_MeshRelease kRows[] = {
    {"1.26", "v1.32.4", "github.com/envoyproxy/go-control-plane/envoy v1.32.5-0.2025... (a pseudo-version)",
     "issue 24's table (no istio.io/istio pseudo-version of the 1.26 branch is served here); nearest tag v1.32.4"},
    {"1.27", "v1.32.4", "github.com/envoyproxy/go-control-plane/envoy v1.32.5-0.2025... (a pseudo-version)",
     "issue 24's table (no pseudo-version of the 1.27 branch is served here); nearest tag v1.32.4"},
    {"1.28", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.35.1-0.2025... (a pseudo-version)",
     "issue 24's table (no pseudo-version of the 1.28 branch is served here); one v1.37.x for 1.28 to 1.31"},
    {"1.29", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.35.1 .. v1.37.1 pseudo-versions",
     "issue 24's table (no pseudo-version of the 1.29 branch is served here); one v1.37.x for 1.28 to 1.31"},
    {"1.30", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260409083702-98966259b99a",
     "go.mod of istio.io/istio v0.0.0-20260826214018-9739e10eb9d7 (VERSION 1.30); nearest tag v1.37.0"},
    {"1.31", "v1.37.0", "github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260713214202-ca8ce173c36f",
     "go.mod of istio.io/istio v0.0.0-20260827124520-eed52ebb66ad (VERSION 1.31); nearest tag v1.37.0"},
};

const po_MeshReleases po_Istio_Releases = {kRows, sizeof kRows / sizeof kRows[0], 5};
