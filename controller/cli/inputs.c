/* Manifests in: files, directories (walked recursively, sorted, so output is the same on every
 * machine), stdin; multi-document YAML or JSON; List kinds unpacked. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "gitops.h"
#include "po/meshes/mesh.h"

/* Streamed files (validate -f) cost about their size in memory, so they may be larger than the
 * 64 MiB po_Cli_ReadFile allows whole-tree readers (render), which take ~10x. */
enum { kMaxDirDepth = 32, kMaxObjects = 1 << 20 };
static const size_t kMaxStreamed = (size_t)1 << 30;

static bool input_error(po_CliInputs *in, po_CliReport *r, const char *file, po_Pos pos, const char *msg) {
  po_CliFinding *f = po_CliReport_Add(r, NULL);
  if (!f) return false;
  f->file = file;
  f->file_seq = in->files;
  f->pos = pos;
  f->code = "input";
  size_t fl = strlen(file);
  if (msg && !strncmp(msg, file, fl) && !strncmp(msg + fl, ": ", 2)) msg += fl + 2; /* the file is said apart */
  f->message = msg;
  r->unreadable++;
  return true;
}

static const char *str(const po_Value *m, const char *k) {
  const po_Value *v = po_Value_Get(m, k);
  return po_Value_Kind(v) == kPo_ValueKind_String ? po_Value_String(v, NULL) : NULL;
}

static bool group_is(const char *api, const char *group) {
  size_t n = strlen(group);
  return api && strncmp(api, group, n) == 0 && api[n] == '/';
}

po_ObjKind po_CliObject_Kind(const po_Value *v, const char **kind_name, const po_MeshOps **native) {
  const char *api = str(v, "apiVersion"), *kind = str(v, "kind");
  *kind_name = kind ? kind : "";
  *native = NULL;
  if (!kind) return kPo_ObjKind_Other;
  if (group_is(api, "propertyoverride.io") && !strcmp(kind, "PropertyOverride")) return kPo_ObjKind_PropertyOverride;
  if (group_is(api, "consul.hashicorp.com") && !strcmp(kind, "ServiceDefaults")) return kPo_ObjKind_ServiceDefaults;
  if (group_is(api, "consul.hashicorp.com") && !strcmp(kind, "ProxyDefaults")) return kPo_ObjKind_ProxyDefaults;
  /* a mesh's own object: the API group (before the version's '/') and kind its row names */
  const char *slash = api ? strchr(api, '/') : NULL;
  char group[256];
  if (slash && (size_t)(slash - api) < sizeof group) {
    snprintf(group, sizeof group, "%.*s", (int)(slash - api), api);
    if ((*native = po_Mesh_ForNative(group, kind))) return kPo_ObjKind_MeshNative;
  }
  return kPo_ObjKind_Other;
}

static bool push(po_CliInputs *in, po_Arena *a, const po_CliObject *o) {
  if (in->count == in->cap) {
    if (in->cap >= kMaxObjects) return false;
    size_t cap = in->cap ? in->cap * 2 : 64;
    po_CliObject *bigger = po_Arena_Malloc(a, cap * sizeof *bigger);
    if (!bigger) return false;
    if (in->count) memcpy(bigger, in->objects, in->count * sizeof *bigger);
    in->objects = bigger;
    in->cap = cap;
  }
  in->objects[in->count++] = *o;
  return true;
}

static bool add_document(po_CliInputs *in, po_CliReport *r, po_Arena *a, const char *file, int doc, const po_Value *v) {
  if (po_Value_Kind(v) == kPo_ValueKind_Null) return true; /* an empty document ("---" at the end) */
  if (po_Value_Kind(v) != kPo_ValueKind_Map) {
    /* kubectl refuses the whole file ("error validating data: invalid object to validate"). */
    po_Pos at = po_Value_Pos(v);
    return input_error(in, r, file, at.line ? at : (po_Pos){1, 1},
                       po_Arena_Printf(a, "document %d: invalid object to validate: a manifest is a mapping "
                                          "(apiVersion, kind, ...), not a %s (kubectl refuses it too)",
                                       doc, po_Value_Kind(v) == kPo_ValueKind_List ? "list" : "scalar"));
  }
  po_CliObject o = {.file = file, .file_seq = in->files, .doc = doc, .item = -1, .pos = po_Value_Pos(v), .value = v};
  o.kind = po_CliObject_Kind(v, &o.kind_name, &o.native);
  const po_Value *items = po_Value_Get(v, "items");
  size_t kl = strlen(o.kind_name);
  bool list = kl >= 4 && !strcmp(o.kind_name + kl - 4, "List") && po_Value_Kind(items) == kPo_ValueKind_List;
  if (!list) return push(in, a, &o);
  for (size_t i = 0; i < po_Value_Size(items); i++) {
    const po_Value *it = po_Value_At(items, i);
    po_CliObject x = {.file = file, .file_seq = in->files, .doc = doc, .item = (int)i, .pos = po_Value_Pos(it), .value = it};
    x.kind = po_CliObject_Kind(it, &x.kind_name, &x.native);
    if (!push(in, a, &x)) return false;
  }
  return true;
}

static bool looks_like_json(const char *text, size_t len) {
  for (size_t i = 0; i < len; i++) {
    if (strchr(" \t\r\n", text[i])) continue;
    return text[i] == '{' || text[i] == '[';
  }
  return false;
}

/* ---- streaming: each object checked as it is read -------------------------------------------
 * validate -f hands each object to a callback as the engine's stream reader produces it, in an
 * arena freed after it, so a 200,000-item List never exists as one tree. The report keeps the
 * old behaviour exactly: a file that turns out unparsable contributes only its error (what its
 * objects produced is rolled back), and a document the reader retracts is rolled back too. */

typedef struct {
  size_t count, valid, invalid, skipped, unreadable;
  size_t judged[kPo_MeshSlots];
} Mark;

static Mark mark_of(const po_CliReport *r) {
  Mark m = {r->count, r->valid, r->invalid, r->skipped, r->unreadable, {0}};
  memcpy(m.judged, r->judged, sizeof m.judged);
  return m;
}

static void roll_back(po_CliReport *r, Mark m) {
  memcpy(r->judged, m.judged, sizeof m.judged);
  r->count = m.count;
  r->valid = m.valid;
  r->invalid = m.invalid;
  r->skipped = m.skipped;
  r->unreadable = m.unreadable;
}

typedef struct {
  po_CliInputs *in;
  po_CliReport *r;
  po_Arena *a;            /* the run's: file names, input errors */
  const char *file;
  po_CliObjectFn fn;
  void *fn_ctx;
  int doc;                /* the document being handed over, and the report before it */
  Mark doc_mark;
} Streamed;

static bool stream_is_list(void *ctx, const po_Value *head) {
  (void)ctx;
  const char *kind = str(head, "kind");
  size_t kl = kind ? strlen(kind) : 0;
  return kl >= 4 && !strcmp(kind + kl - 4, "List");
}

static bool stream_object(void *ctx, const po_StreamObject *so, po_Arena *scratch, po_Status *st) {
  (void)st;
  Streamed *s = ctx;
  if (so->doc != s->doc) {
    s->doc = so->doc;
    s->doc_mark = mark_of(s->r);
  }
  const po_Value *v = so->value;
  if (so->item < 0) {
    if (po_Value_Kind(v) == kPo_ValueKind_Null) return true;
    if (po_Value_Kind(v) != kPo_ValueKind_Map) return add_document(s->in, s->r, s->a, s->file, so->doc, v);
  }
  po_CliObject o = {.file = s->file, .file_seq = s->in->files, .doc = so->doc, .item = (int)so->item,
                    .pos = po_Value_Pos(v), .value = v};
  o.kind = po_CliObject_Kind(v, &o.kind_name, &o.native);
  return s->fn(s->fn_ctx, &o, scratch);
}

static bool stream_retract(void *ctx, int doc) {
  Streamed *s = ctx;
  if (doc == s->doc) roll_back(s->r, s->doc_mark);
  return true;
}

static bool stream_file(po_CliInputs *in, const char *path, const char *text, size_t len, po_Arena *a, po_CliReport *r,
                        po_CliObjectFn fn, void *fn_ctx) {
  Streamed s = {.in = in, .r = r, .a = a, .file = path, .fn = fn, .fn_ctx = fn_ctx};
  po_ValueStream vs = {.ctx = &s, .is_list = stream_is_list, .object = stream_object, .retract = stream_retract,
                       .stats = in->stats};
  Mark file_mark = mark_of(r);
  po_Status st;
  po_Status_Clear(&st);
  bool json = looks_like_json(text, len);
  if (json ? po_Value_StreamJson(text, len, &vs, &st) : po_Value_StreamYaml(text, len, &vs, &st)) return true;
  /* An engine arena that ran out (a value of the tree) may leave no status: po_Engine_OutOfMemory. */
  if (st.code == kPo_Status_NoMemory || po_Engine_OutOfMemory(a) || !strcmp(st.message, "stopped by the caller")) return false;
  roll_back(r, file_mark);
  po_Pos at = {0, 0}; /* the parser's "line L, column C: ..." as a position, for annotations */
  if (json || sscanf(st.message, "line %d, column %d:", &at.line, &at.column) != 2) at = (po_Pos){0, 0};
  return input_error(in, r, path, at, po_Arena_Printf(a, "%s", st.message));
}

static bool read_file(po_CliInputs *in, const char *path, po_Arena *a, po_CliReport *r);

/* One file: its objects and its findings carry its place in the order of files read. */
static bool load_file(po_CliInputs *in, const char *path, po_Arena *a, po_CliReport *r) {
  bool ok = read_file(in, path, a, r);
  in->files++;
  return ok;
}

/* A file that could not be read or parsed: unreadable input, unless memory ran out (false: the
 * command then says "out of memory" and gives no verdict, the input being no worse for it). */
static bool read_error(po_CliInputs *in, po_CliReport *r, const char *path, po_Arena *a, const po_Status *st) {
  if (st->code == kPo_Status_NoMemory || po_Engine_OutOfMemory(a)) return false;
  return input_error(in, r, path, (po_Pos){0, 0}, po_Arena_Printf(a, "%s", st->message));
}

static bool read_file(po_CliInputs *in, const char *path, po_Arena *a, po_CliReport *r) {
  po_Status st;
  po_Status_Clear(&st);
  size_t len = 0;
  if (in->fn) {
    char *text = po_Cli_ReadFileMalloc(path, kMaxStreamed, &len, &st);
    if (!text) return read_error(in, r, path, a, &st);
    bool ok = stream_file(in, path, text, len, a, r, in->fn, in->fn_ctx);
    free(text);
    return ok;
  }
  char *text = po_Cli_ReadFile(path, a, &len, &st);
  if (!text) return read_error(in, r, path, a, &st);
  if (looks_like_json(text, len)) {
    po_Value *v = po_Value_ParseJson(text, len, a, &st);
    if (!v) return read_error(in, r, path, a, &st);
    return add_document(in, r, a, path, 1, v);
  }
  po_Value **docs = NULL;
  size_t count = 0;
  if (!po_Value_ParseYaml(text, len, a, &docs, &count, &st)) {
    if (st.code == kPo_Status_NoMemory || po_Engine_OutOfMemory(a)) return false;
    po_Pos at = {0, 0}; /* the parser's "line L, column C: ..." as a position, for annotations */
    if (sscanf(st.message, "line %d, column %d:", &at.line, &at.column) != 2) at = (po_Pos){0, 0};
    return input_error(in, r, path, at, po_Arena_Printf(a, "%s", st.message));
  }
  for (size_t i = 0; i < count; i++) {
    if (!add_document(in, r, a, path, (int)i + 1, docs[i])) return false;
  }
  return true;
}

static bool manifest_name(const char *n) {
  size_t l = strlen(n);
  return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml")) ||
         (l > 5 && !strcmp(n + l - 5, ".json"));
}

static int by_name(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* ---- directory walk ----------------------------------------------------------------------------
 * stat() follows symbolic links, so a link to an ancestor makes the tree infinite, and two such
 * links make even a depth limit useless (2^32 paths). Each directory is therefore walked at most
 * once, known by device and inode: one reached again while it is still being walked (an
 * ancestor) is a loop, reported as unreadable input (exit 2); one reached again through another
 * link after it was walked is skipped, so its objects are not counted twice. */

typedef struct {
  dev_t dev;
  ino_t ino;
} DirId;

typedef struct {
  DirId *seen;            /* open addressing, a power of two; zero slot: empty */
  size_t cap, used;
  struct {
    DirId id;
    const char *path;
  } open[kMaxDirDepth + 1]; /* the directories being walked, outermost first */
  int depth;
  const char *root; /* the directory given, resolved (realpath): links to files stay inside it */
} Walk;

static bool same(DirId x, DirId y) { return x.dev == y.dev && x.ino == y.ino; }
static bool empty(DirId x) { return x.dev == 0 && x.ino == 0; }

static size_t slot(const Walk *w, DirId id) {
  uint64_t h = ((uint64_t)id.ino * 0x9E3779B97F4A7C15u) ^ ((uint64_t)id.dev * 0xC2B2AE3D27D4EB4Fu);
  size_t i = (size_t)(h >> 17) & (w->cap - 1);
  while (!empty(w->seen[i]) && !same(w->seen[i], id)) i = (i + 1) & (w->cap - 1);
  return i;
}

/* Adds id; false when out of memory. *was_seen tells whether it was there already. */
static bool remember(Walk *w, DirId id, po_Arena *a, bool *was_seen) {
  if (empty(id)) id.ino = (ino_t)-1; /* device 0, inode 0 cannot be told from an empty slot */
  if (w->used * 2 >= w->cap) {
    size_t cap = w->cap ? w->cap * 2 : 64;
    DirId *old = w->seen;
    size_t old_cap = w->cap;
    w->seen = po_Arena_Malloc(a, cap * sizeof *w->seen);
    if (!w->seen) return false;
    memset(w->seen, 0, cap * sizeof *w->seen);
    w->cap = cap;
    for (size_t i = 0; i < old_cap; i++) if (!empty(old[i])) w->seen[slot(w, old[i])] = old[i];
  }
  size_t i = slot(w, id);
  *was_seen = !empty(w->seen[i]);
  if (!*was_seen) {
    w->seen[i] = id;
    w->used++;
  }
  return true;
}

/* The entries of d (but . and ..), each as path/name, sorted; false when out of memory. */
static bool sorted_names(DIR *d, const char *path, po_Arena *a, const char ***out, size_t *count) {
  const char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 32;
      const char **bigger = po_Arena_Malloc(a, cap * sizeof *bigger);
      if (!bigger) return false;
      if (n) memcpy(bigger, names, n * sizeof *bigger);
      names = bigger;
    }
    size_t pl = strlen(path);
    names[n] = po_Arena_Printf(a, "%s%s%s", path, pl && path[pl - 1] == '/' ? "" : "/", e->d_name);
    if (!names[n++]) return false;
  }
  if (n) qsort(names, n, sizeof *names, by_name);
  *out = names;
  *count = n;
  return true;
}

/* A symbolic link inside the tree is not a way out of it (find without -L): one to a
 * directory is not descended into (a link to / once walked the whole file system: 113 s,
 * 19,847 files read), one to a file outside the directory given is not read (its content
 * would reach the CI log in an error: a token, a kubeconfig). Links to devices and FIFOs
 * are said for what they lead to, by the caller. The reason when name is such a link, else NULL. */
static const char *link_not_followed(const char *name, const Walk *w) {
  struct stat lst, st;
  if (lstat(name, &lst) != 0 || !S_ISLNK(lst.st_mode) || stat(name, &st) != 0) return NULL;
  if (S_ISDIR(st.st_mode)) return "a symbolic link to a directory: not followed";
  if (!S_ISREG(st.st_mode)) return NULL;
  char *real = realpath(name, NULL);
  size_t rl = w->root ? strlen(w->root) : 0;
  bool inside = real && w->root && (!strcmp(w->root, "/") || (!strncmp(real, w->root, rl) && real[rl] == '/'));
  free(real);
  return inside ? NULL : "a symbolic link to a file outside the directory given: not followed";
}

static bool load_dir(po_CliInputs *in, const char *path, const struct stat *sb, po_Arena *a, po_CliReport *r, Walk *w);

/* One entry of a directory walked: read, descended into, or said not read with why. The type
 * comes from stat (links followed) before anything is opened: a FIFO or a device is never
 * opened here, so it cannot block the walk. */
static bool load_entry(po_CliInputs *in, const char *name, po_Arena *a, po_CliReport *r, Walk *w) {
  const char *base = strrchr(name, '/') + 1;
  if (base[0] == '.') return po_CliReport_NotRead(r, name, "hidden (its name starts with a dot)"); /* .git and the like */
  const char *why = link_not_followed(name, w);
  if (why) return po_CliReport_NotRead(r, name, why);
  struct stat st, lst;
  if (stat(name, &st) != 0) {
    int err = errno;
    /* a link that leads to itself is a loop; a dangling link has nothing to validate */
    if (err == ELOOP) {
      return input_error(in, r, name, (po_Pos){0, 0}, po_Arena_Printf(a, "%s: symbolic link loop: %s", name, strerror(ELOOP)));
    }
    if (err == ENOENT && lstat(name, &lst) == 0 && S_ISLNK(lst.st_mode)) { /* lstat again: errno */
      return po_CliReport_NotRead(r, name, "a dangling symbolic link");
    }
    return input_error(in, r, name, (po_Pos){0, 0}, po_Arena_Printf(a, "%s: cannot stat: %s", name, strerror(err)));
  }
  if (S_ISDIR(st.st_mode)) return load_dir(in, name, &st, a, r, w);
  if (!S_ISREG(st.st_mode)) {
    why = po_Arena_Printf(a, "%s, not a regular file", po_Cli_FileType(st.st_mode));
    return why && po_CliReport_NotRead(r, name, why);
  }
  if (!manifest_name(name)) return po_CliReport_NotRead(r, name, "not named *.yaml, *.yml or *.json");
  return load_file(in, name, a, r);
}

static bool load_dir(po_CliInputs *in, const char *path, const struct stat *sb, po_Arena *a, po_CliReport *r, Walk *w) {
  DirId id = {sb->st_dev, sb->st_ino};
  for (int i = 0; i < w->depth; i++) {
    if (same(w->open[i].id, id)) {
      return input_error(in, r, path, (po_Pos){0, 0},
                         po_Arena_Printf(a, "%s: directory loop: this is %s again (a symbolic link to a directory that contains it); not followed",
                                         path, w->open[i].path));
    }
  }
  if (w->depth > kMaxDirDepth) {
    return input_error(in, r, path, (po_Pos){0, 0}, po_Arena_Printf(a, "%s: directories nested deeper than %d levels", path, kMaxDirDepth));
  }
  bool seen = false;
  if (!remember(w, id, a, &seen)) return false;
  if (seen) return po_CliReport_NotRead(r, path, "a directory walked already, through another link");
  DIR *d = opendir(path);
  if (!d && errno == ENOMEM) return false; /* opendir's own allocation: memory, not the directory */
  if (!d) return input_error(in, r, path, (po_Pos){0, 0}, po_Arena_Printf(a, "%s: cannot open: %s", path, strerror(errno)));
  const char **names = NULL;
  size_t n = 0;
  bool ok = sorted_names(d, path, a, &names, &n);
  closedir(d);
  if (!ok) return false;
  w->open[w->depth].id = id;
  w->open[w->depth].path = path;
  w->depth++;
  /* Every entry is read or said not read, with why: a directory holding only a FIFO, links to
   * devices or README files once gave "0 valid, 0 invalid, 0 skipped" and exit 0, a CI job
   * green having validated nothing. */
  for (size_t i = 0; ok && i < n; i++) ok = load_entry(in, names[i], a, r, w);
  w->depth--;
  return ok;
}

/* A file, "-", or a directory walked on its own (a directory given twice is read twice, as a
 * file given twice is). */
static bool load_path(po_CliInputs *in, const char *path, po_Arena *a, po_CliReport *r) {
  struct stat sb;
  if (strcmp(path, "-") != 0 && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    Walk w = {0};
    char *root = realpath(path, NULL);
    if (!root && errno == ENOMEM) return false;
    w.root = root ? po_Arena_Strndup(a, root, strlen(root)) : NULL; /* none: no link to a file is read */
    free(root);
    if (root && !w.root) return false;
    return load_dir(in, path, &sb, a, r, &w);
  }
  return load_file(in, path, a, r);
}

static bool load_all(po_CliInputs *in, const char *const *paths, size_t n, po_Arena *a, po_CliReport *r) {
  for (size_t i = 0; i < n; i++) {
    if (!load_path(in, paths[i], a, r)) return false;
  }
  r->files_read = in->files; /* none: nothing validated, which the exit code says */
  r->inputs_done = true;
  return true;
}

bool po_CliInputs_Load(po_CliInputs *in, const char *const *paths, size_t n, po_Arena *a, po_CliReport *r) {
  memset(in, 0, sizeof *in);
  return load_all(in, paths, n, a, r);
}

bool po_CliInputs_Each(const char *const *paths, size_t n, po_Arena *a, po_CliReport *r, po_CliObjectFn fn, void *ctx,
                       po_StreamStats *stats) {
  po_CliInputs in = {.fn = fn, .fn_ctx = ctx, .stats = stats};
  return load_all(&in, paths, n, a, r);
}
