/* A mesh's releases and the Envoy API each is judged by: the table each mesh folder keeps
 * (controller/meshes/<mesh>/src/<mesh>_releases.c, its row's po_MeshOps.releases), one line per
 * supported release, saying which embedded snapshot judges it and what the release itself pins
 * (go-control-plane's envoy module in its go.mod), and where that was read. Declared here, below
 * the meshes, so that each mesh keeps its own table without seeing the others. */
#ifndef PO_TARGETS_RELEASE_H_
#define PO_TARGETS_RELEASE_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/engine.h"

typedef struct po_MeshRelease {
  const char *release; /* "1.30": the release line, MAJOR.MINOR */
  const char *api;     /* the embedded snapshot judging it, a po_EnvoyApi version: "v1.37.0" */
  /* What the release pins: "github.com/envoyproxy/go-control-plane/envoy v1.37.1-0.20260409083702-98966259b99a" */
  const char *pins;
  /* Where `pins` was read, and why `api` is the snapshot for it (the nearest tag...) */
  const char *source;
} po_MeshRelease;

typedef struct po_MeshReleases {
  const po_MeshRelease *rows; /* oldest first */
  size_t count;
  size_t default_row;         /* the release assumed when none is named: the newest listed */
} po_MeshReleases;

/* The row of `release` ("1.30", "1.30.2", "v1.9", "1.30.0-beta.0", "1.22.0+ent":
 * MAJOR.MINOR[.PATCH], an optional 'v', an optional semver prerelease or build tag: its line's),
 * NULL when it is not listed or not such a text. */
const po_MeshRelease *po_MeshReleases_Find(const po_MeshReleases *t, const char *release);
const po_MeshRelease *po_MeshReleases_Default(const po_MeshReleases *t);
/* Whether `release` is a release's text (MAJOR.MINOR[.PATCH], optional 'v', optional tag),
 * listed or not. */
bool po_MeshRelease_Valid(const char *release);
/* The release line of such a text (MAJOR.MINOR: "1.30.0-beta.0" -> 1, 30); false when it is not
 * one. The one parser of a release text: flags, labels, a proxy's ISTIO_VERSION. */
bool po_MeshRelease_Line(const char *release, int *major, int *minor);
/* The snapshot judging it (po_EnvoyApi_Find of its `api`); the default snapshot when that one is
 * not embedded in this build (tests/meshes checks every row names an embedded one). */
const po_EnvoyApi *po_MeshRelease_Api(const po_MeshRelease *r);
/* Every row of `t` as the engine's hint names releases (po_ApiRelease: `mesh`, the release, its
 * snapshot), into rows[0..max); how many were written. */
size_t po_MeshReleases_ApiRows(const po_MeshReleases *t, const char *mesh, po_ApiRelease *rows, size_t max);
/* "1.26, 1.27, 1.28": every listed release, in `a`; NULL when out of memory. */
const char *po_MeshReleases_List(const po_MeshReleases *t, po_Arena *a);

#endif
