/* `MESH[@RELEASE]` (mesh.h, po_Mesh_ParseChoice): a mesh of the table and a release of its own
 * release table, with errors that list what would be valid. */
#include <stdio.h>
#include <string.h>

#include "po/meshes/mesh.h"

const char *po_Mesh_Names(char *buf, size_t len) {
  size_t at = 0;
  if (len) buf[0] = '\0';
  for (size_t i = 0; i < po_Mesh_Count() && at < len; i++) {
    int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", po_Mesh_Name(po_Mesh_At(i)->mesh));
    at += n > 0 ? (size_t)n : 0;
  }
  return buf;
}

/* "1.26, 1.27 (default 1.27)" into buf. */
static void releases_of(const po_MeshOps *m, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = '\0';
  for (size_t i = 0; m->releases && i < m->releases->count && at < len; i++) {
    int n = snprintf(buf + at, len - at, "%s%s", i ? ", " : "", m->releases->rows[i].release);
    at += n > 0 ? (size_t)n : 0;
  }
  const po_MeshRelease *d = po_MeshReleases_Default(m->releases);
  if (d && at < len) snprintf(buf + at, len - at, " (default %s)", d->release);
}

bool po_Mesh_ParseChoice(const char *text, po_MeshChoice *out, po_CtlStatus *st) {
  memset(out, 0, sizeof *out);
  const char *at = strchr(text, '@');
  size_t name_len = at ? (size_t)(at - text) : strlen(text);
  for (size_t i = 0; i < po_Mesh_Count(); i++) {
    const po_MeshOps *m = po_Mesh_At(i);
    const char *name = po_Mesh_Name(m->mesh);
    if (strlen(name) == name_len && !memcmp(name, text, name_len)) out->mesh = m;
  }
  if (!out->mesh) {
    char names[128];
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "unknown mesh '%.*s': one of %s is expected, optionally with @RELEASE (istio@1.30)",
                            (int)name_len, text, po_Mesh_Names(names, sizeof names));
  }
  char valid[256];
  releases_of(out->mesh, valid, sizeof valid);
  if (!at) {
    out->release = po_MeshReleases_Default(out->mesh->releases);
    out->defaulted = true;
    return out->release != NULL;
  }
  const char *rel = at + 1;
  if (!po_MeshRelease_Valid(rel)) {
    return po_CtlStatus_Set(st, kPo_Ctl_Usage,
                            "'%s' is not a release: MAJOR.MINOR or MAJOR.MINOR.PATCH is expected; %s's releases: %s", rel,
                            po_Mesh_Name(out->mesh->mesh), valid);
  }
  out->release = po_MeshReleases_Find(out->mesh->releases, rel);
  if (!out->release) {
    return po_CtlStatus_Set(st, kPo_Ctl_Usage, "%s %s is not a release this build knows; %s's releases: %s",
                            out->mesh->name, rel + (*rel == 'v'), po_Mesh_Name(out->mesh->mesh), valid);
  }
  return true;
}
