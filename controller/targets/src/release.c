/* A mesh's release table (release.h): lookups by release text. */
#include "po/targets/release.h"

#include <stdlib.h>
#include <string.h>

/* A prerelease or build tag after the version, as semver writes it ("-beta.0", "+ent", "-dev",
 * "-asm.1"): '-' or '+' then letters, digits, '.', '-', '+'. The version a mesh reports carries
 * one often (Istio's ISTIO_VERSION and its chart's label on a beta or a vendor's build, Consul
 * Enterprise's "1.22.0+ent"); the release line it is built on is the one before it. */
static bool tag(const char *p) {
  if (*p != '-' && *p != '+') return false;
  size_t n = strspn(p + 1, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-+");
  return n > 0 && p[1 + n] == '\0';
}

/* MAJOR.MINOR[.PATCH] with an optional leading 'v' and an optional tag: the length of
 * MAJOR.MINOR (after the 'v') in *line_len and where it starts in *line; false for anything
 * else. */
static bool split(const char *s, const char **line, size_t *line_len) {
  if (!s) return false;
  if (*s == 'v') s++;
  const char *p = s;
  for (int part = 0; part < 3; part++) {
    size_t digits = strspn(p, "0123456789");
    if (digits == 0 || digits > 4) return false;
    p += digits;
    if (part == 1) *line_len = (size_t)(p - s);
    if (*p == '\0' || (part >= 1 && tag(p))) {
      *line = s;
      return part >= 1;
    }
    if (*p != '.' || part == 2) return false;
    p++;
  }
  return false;
}

bool po_MeshRelease_Valid(const char *release) {
  const char *line;
  size_t n;
  return split(release, &line, &n);
}

bool po_MeshRelease_Line(const char *release, int *major, int *minor) {
  const char *line;
  size_t n;
  if (!split(release, &line, &n)) return false;
  /* split saw "DIGITS.DIGITS" of at most 4 digits each at line: no overflow */
  *major = atoi(line);
  *minor = atoi(strchr(line, '.') + 1);
  return true;
}

const po_MeshRelease *po_MeshReleases_Find(const po_MeshReleases *t, const char *release) {
  const char *line;
  size_t n;
  if (!t || !split(release, &line, &n)) return NULL;
  for (size_t i = 0; i < t->count; i++) {
    const char *r = t->rows[i].release;
    if (strlen(r) == n && !memcmp(r, line, n)) return &t->rows[i];
  }
  return NULL;
}

const po_MeshRelease *po_MeshReleases_Default(const po_MeshReleases *t) {
  return t && t->count ? &t->rows[t->default_row < t->count ? t->default_row : t->count - 1] : NULL;
}

const po_EnvoyApi *po_MeshRelease_Api(const po_MeshRelease *r) {
  const po_EnvoyApi *api = r ? po_EnvoyApi_Find(r->api) : NULL;
  return api ? api : po_EnvoyApi_Default();
}

size_t po_MeshReleases_ApiRows(const po_MeshReleases *t, const char *mesh, po_ApiRelease *rows, size_t max) {
  size_t n = 0;
  for (size_t i = 0; t && i < t->count && n < max; i++) {
    rows[n++] = (po_ApiRelease){.mesh = mesh, .release = t->rows[i].release, .api = po_MeshRelease_Api(&t->rows[i])};
  }
  return n;
}

const char *po_MeshReleases_List(const po_MeshReleases *t, po_Arena *a) {
  po_TextBuf b = {.a = a};
  for (size_t i = 0; t && i < t->count; i++) {
    if (i) po_TextBuf_Puts(&b, ", ");
    po_TextBuf_Puts(&b, t->rows[i].release);
  }
  if (!b.buf && !b.oom) return "";
  return b.oom ? NULL : b.buf;
}
