/* kubeconfig files, parsed with libyaml's document API (so every error can name file:line:col).
 *
 * Merging follows kubectl: across the files of $KUBECONFIG, the first file that sets
 * current-context wins, and for each cluster/user/context name the first file that defines it
 * wins. Relative paths are relative to the file that holds the entry. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>

#include "config_internal.h"

typedef struct {
  yaml_document_t doc;
  bool loaded;     /* doc is valid (may still be empty) */
  char *origin;    /* file name or caller's label */
  char *dir;       /* directory of origin, for relative paths ("" when none) */
} Doc;

static yaml_node_t *root(Doc *d) { return yaml_document_get_root_node(&d->doc); }
static yaml_node_t *node_at(Doc *d, int i) { return yaml_document_get_node(&d->doc, i); }

static const char *kind_name(yaml_node_t *n) {
  switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
  }
}

static bool fail_at(po_CtlStatus *st, Doc *d, yaml_node_t *n, const char *path, const char *fmt,
                    const char *arg) {
  char what[320];
  snprintf(what, sizeof what, fmt, arg);
  return po_CtlStatus_Set(st, kPo_Ctl_Config, "%s:%zu:%zu: %s: %s", d->origin,
                           n ? n->start_mark.line + 1 : 0, n ? n->start_mark.column + 1 : 0, path,
                           what);
}

static bool is_null(yaml_node_t *n) {
  if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  const char *v = (const char *)n->data.scalar.value;
  return n->data.scalar.length == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0;
}

/* The value of `key` in mapping m, or NULL. */
static yaml_node_t *map_get(Doc *d, yaml_node_t *m, const char *key) {
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
    yaml_node_t *k = node_at(d, p->key);
    if (k && k->type == YAML_SCALAR_NODE && strcmp((const char *)k->data.scalar.value, key) == 0)
      return node_at(d, p->value);
  }
  return NULL;
}

/* A string field: absent or null -> *out NULL; a scalar -> its text; else an error. */
static bool get_str(Doc *d, yaml_node_t *m, const char *key, const char *path, const char **out,
                    po_CtlStatus *st) {
  *out = NULL;
  yaml_node_t *v = map_get(d, m, key);
  if (!v || is_null(v)) return true;
  if (v->type != YAML_SCALAR_NODE) {
    char p[384];
    snprintf(p, sizeof p, "%s.%s", path, key);
    return fail_at(st, d, v, p, "expected a string, found %s", kind_name(v));
  }
  *out = (const char *)v->data.scalar.value;
  return true;
}

static bool get_bool(Doc *d, yaml_node_t *m, const char *key, const char *path, bool *out,
                     po_CtlStatus *st) {
  const char *s;
  if (!get_str(d, m, key, path, &s, st)) return false;
  if (!s) return true;
  if (strcasecmp(s, "true") == 0 || strcasecmp(s, "yes") == 0 || strcasecmp(s, "on") == 0) {
    *out = true;
  } else if (strcasecmp(s, "false") == 0 || strcasecmp(s, "no") == 0 || strcasecmp(s, "off") == 0) {
    *out = false;
  } else {
    char p[384];
    snprintf(p, sizeof p, "%s.%s", path, key);
    return fail_at(st, d, map_get(d, m, key), p, "expected true or false, found \"%.40s\"", s);
  }
  return true;
}

static bool dup(char **dst, const char *s, po_CtlStatus *st) {
  if (!s) return true;
  *dst = strdup(s);
  return *dst ? true : po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
}

/* Absolute paths stay; relative ones are joined to the directory of the file holding them. */
static bool dup_path(char **dst, Doc *d, const char *s, po_CtlStatus *st) {
  if (!s || !*s) return true;
  if (s[0] == '/' || !d->dir[0]) return dup(dst, s, st);
  size_t n = strlen(d->dir) + strlen(s) + 2;
  *dst = malloc(n);
  if (!*dst) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  snprintf(*dst, n, "%s/%s", d->dir, s);
  return true;
}

/* Checks the top level is a mapping (or the document is empty); *top NULL for empty. */
static bool top_map(Doc *d, yaml_node_t **top, po_CtlStatus *st) {
  *top = root(d);
  if (!*top || is_null(*top)) {
    *top = NULL;
    return true;
  }
  if ((*top)->type != YAML_MAPPING_NODE)
    return fail_at(st, d, *top, "(top level)", "expected a mapping, found %s", kind_name(*top));
  return true;
}

/* Finds the entry `name` of list `list` ("clusters", "users", "contexts") in d; *inner is the
 * mapping under `field` ("cluster", "user", "context"). Every entry passed is type-checked. */
static bool find_named(Doc *d, const char *list, const char *field, const char *name,
                       yaml_node_t **inner, char *path, size_t pathsz, po_CtlStatus *st) {
  *inner = NULL;
  yaml_node_t *top;
  if (!top_map(d, &top, st)) return false;
  if (!top) return true;
  yaml_node_t *seq = map_get(d, top, list);
  if (!seq || is_null(seq)) return true;
  if (seq->type != YAML_SEQUENCE_NODE)
    return fail_at(st, d, seq, list, "expected a list, found %s", kind_name(seq));
  int i = 0;
  for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++, i++) {
    yaml_node_t *e = node_at(d, *it);
    snprintf(path, pathsz, "%s[%d]", list, i);
    if (!e || e->type != YAML_MAPPING_NODE) {
      char what[96];
      snprintf(what, sizeof what, "expected a mapping with name and %s, found %s", field,
               e ? kind_name(e) : "nothing");
      return fail_at(st, d, e, path, "%s", what);
    }
    const char *n;
    if (!get_str(d, e, "name", path, &n, st)) return false;
    if (!n) return fail_at(st, d, e, path, "expected a name%s", "");
    if (strcmp(n, name) != 0) continue;
    yaml_node_t *v = map_get(d, e, field);
    size_t l = strlen(path);
    snprintf(path + l, pathsz - l, ".%s", field);
    if (!v || is_null(v)) return fail_at(st, d, e, path, "expected a mapping, found nothing%s", "");
    if (v->type != YAML_MAPPING_NODE)
      return fail_at(st, d, v, path, "expected a mapping, found %s", kind_name(v));
    *inner = v;
    return true;
  }
  return true;
}

/* Lists the names in `list` across docs, for "available: a, b" hints. */
static void names(Doc *docs, int n, const char *list, char *buf, size_t size) {
  buf[0] = '\0';
  size_t used = 0;
  for (int k = 0; k < n; k++) {
    yaml_node_t *top = root(&docs[k]);
    if (!docs[k].loaded || !top || top->type != YAML_MAPPING_NODE) continue;
    yaml_node_t *seq = map_get(&docs[k], top, list);
    if (!seq || seq->type != YAML_SEQUENCE_NODE) continue;
    for (yaml_node_item_t *it = seq->data.sequence.items.start; it < seq->data.sequence.items.top; it++) {
      yaml_node_t *e = node_at(&docs[k], *it);
      if (!e || e->type != YAML_MAPPING_NODE) continue;
      yaml_node_t *nm = map_get(&docs[k], e, "name");
      if (!nm || nm->type != YAML_SCALAR_NODE) continue;
      int w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", (const char *)nm->data.scalar.value);
      if (w < 0 || (size_t)w >= size - used) return;
      used += (size_t)w;
    }
  }
  if (!used) snprintf(buf, size, "(none)");
}

static bool load_doc(Doc *d, const char *text, size_t len, const char *origin, po_CtlStatus *st) {
  memset(d, 0, sizeof *d);
  d->origin = strdup(origin ? origin : "(kubeconfig)");
  d->dir = strdup("");
  if (!d->origin || !d->dir) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  const char *slash = origin ? strrchr(origin, '/') : NULL;
  if (slash) {
    free(d->dir);
    d->dir = strndup(origin, slash == origin ? 1 : (size_t)(slash - origin));
    if (!d->dir) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  }
  yaml_parser_t p;
  if (!yaml_parser_initialize(&p)) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
  if (!yaml_parser_load(&p, &d->doc)) {
    po_CtlStatus_Set(st, kPo_Ctl_Config, "%s:%zu:%zu: invalid YAML: %s%s%s", d->origin,
                      p.problem_mark.line + 1, p.problem_mark.column + 1,
                      p.problem ? p.problem : "parse error", p.context ? " " : "",
                      p.context ? p.context : "");
    yaml_parser_delete(&p);
    return false;
  }
  yaml_parser_delete(&p);
  d->loaded = true;
  yaml_node_t *top;
  return top_map(d, &top, st);
}

static void free_docs(Doc *docs, int n) {
  for (int i = 0; i < n; i++) {
    if (docs[i].loaded) yaml_document_delete(&docs[i].doc);
    free(docs[i].origin);
    free(docs[i].dir);
  }
  free(docs);
}

/* The first entry named `name` in the list `list` of any doc, its `field` mapping in *node and
 * its doc in *where (both NULL when none has it); false only on a malformed list. */
static bool find_in_docs(Doc *docs, int n, const char *list, const char *field, const char *name,
                         yaml_node_t **node, Doc **where, char *path, size_t pathsz, po_CtlStatus *st) {
  *node = NULL;
  *where = NULL;
  for (int k = 0; k < n && !*node; k++) {
    if (!find_named(&docs[k], list, field, name, node, path, pathsz, st)) return false;
    if (*node) *where = &docs[k];
  }
  return true;
}

/* The context to use (the given one, else the first current-context) and its entry: its doc in
 * *cd, its mapping in *cx, the mapping's path in cxpath. */
static bool find_context(Doc *docs, int n, const char **ctx, Doc **cd, yaml_node_t **cx, char *cxpath,
                         size_t cxpathsz, po_CtlStatus *st) {
  char avail[400];
  for (int k = 0; k < n && !*ctx; k++) {
    yaml_node_t *top = root(&docs[k]);
    if (!top || top->type != YAML_MAPPING_NODE) continue;
    const char *cc;
    if (!get_str(&docs[k], top, "current-context", "(top level)", &cc, st)) return false;
    if (cc && *cc) *ctx = cc;
  }
  if (!*ctx) {
    names(docs, n, "contexts", avail, sizeof avail);
    return po_CtlStatus_Set(st, kPo_Ctl_Config,
                             "%s: no current-context is set and no context was given; available "
                             "contexts: %s", docs[0].origin, avail);
  }
  if (!find_in_docs(docs, n, "contexts", "context", *ctx, cx, cd, cxpath, cxpathsz, st)) return false;
  if (!*cx) {
    names(docs, n, "contexts", avail, sizeof avail);
    return po_CtlStatus_Set(st, kPo_Ctl_Config, "%s: context \"%s\" not found; available contexts: %s",
                             docs[0].origin, *ctx, avail);
  }
  return true;
}

/* The entry `name` of list `list` (clusters, users) that context ctx (in cd) names, looked up
 * across docs: its `field` mapping in *node, its doc in *where; not found is an error naming
 * the entries there are. */
static bool find_of_context(Doc *docs, int n, const char *list, const char *field, const char *name, Doc *cd,
                            const char *ctx, yaml_node_t **node, Doc **where, char *path, size_t pathsz,
                            po_CtlStatus *st) {
  char avail[400];
  if (!find_in_docs(docs, n, list, field, name, node, where, path, pathsz, st)) return false;
  if (*node) return true;
  names(docs, n, list, avail, sizeof avail);
  return po_CtlStatus_Set(st, kPo_Ctl_Config, "%s: %s \"%s\" (of context \"%s\") not found; available %s: %s",
                           cd->origin, field, name, ctx, list, avail);
}

/* The context's cluster into c: its server (https:// or http://, trailing slashes dropped) and
 * how its certificate is checked. */
static bool read_cluster(Doc *docs, int n, Doc *cd, const char *cluster, const char *ctx, po_KubeConfig *c,
                         po_CtlStatus *st) {
  char path[256];
  yaml_node_t *cl;
  Doc *cld;
  if (!find_of_context(docs, n, "clusters", "cluster", cluster, cd, ctx, &cl, &cld, path, sizeof path, st)) return false;
  const char *server, *ca, *cad;
  if (!get_str(cld, cl, "server", path, &server, st) || !get_str(cld, cl, "certificate-authority", path, &ca, st) ||
      !get_str(cld, cl, "certificate-authority-data", path, &cad, st) ||
      !get_bool(cld, cl, "insecure-skip-tls-verify", path, &c->insecure, st))
    return false;
  if (!server || !*server)
    return fail_at(st, cld, cl, path, "expected a server URL (https://host:port), found %s", "nothing");
  char spath[384];
  snprintf(spath, sizeof spath, "%s.server", path);
  if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
    return fail_at(st, cld, map_get(cld, cl, "server"), spath,
                   "server must start with https:// or http://, found \"%.60s\"", server);
  if (!dup(&c->server, server, st) || !dup_path(&c->ca_file, cld, ca, st)) return false;
  if (cad) {
    char what[640];
    snprintf(what, sizeof what, "%s:%zu: %s.certificate-authority-data", cld->origin,
             map_get(cld, cl, "certificate-authority-data")->start_mark.line + 1, path);
    if (!po_Base64Decode_(cad, strlen(cad), &c->ca_data, what, st)) return false;
  }
  size_t l = strlen(c->server);
  while (l > 8 && c->server[l - 1] == '/') c->server[--l] = '\0';
  return true;
}

/* The user's credentials (us, at path in ud) into c: a token, a token file, or a client
 * certificate and its key, both or neither; exec plugins and auth providers are refused. */
static bool read_credentials(Doc *ud, yaml_node_t *us, const char *path, po_KubeConfig *c, po_CtlStatus *st) {
  const char *tok = NULL, *tf = NULL, *cc = NULL, *ccd = NULL, *ck = NULL, *ckd = NULL;
  if (!get_str(ud, us, "token", path, &tok, st) || !get_str(ud, us, "tokenFile", path, &tf, st) ||
      !get_str(ud, us, "client-certificate", path, &cc, st) ||
      !get_str(ud, us, "client-certificate-data", path, &ccd, st) ||
      !get_str(ud, us, "client-key", path, &ck, st) || !get_str(ud, us, "client-key-data", path, &ckd, st))
    return false;
  if (map_get(ud, us, "exec"))
    return fail_at(st, ud, map_get(ud, us, "exec"), path,
                   "exec credential plugins are not supported; use token, tokenFile or a client "
                   "certificate%s", "");
  if (map_get(ud, us, "auth-provider"))
    return fail_at(st, ud, map_get(ud, us, "auth-provider"), path,
                   "auth-provider is not supported; use token, tokenFile or a client certificate%s", "");
  if (!dup(&c->token, tok && *tok ? tok : NULL, st) || !dup_path(&c->token_file, ud, tf, st) ||
      !dup_path(&c->cert_file, ud, cc, st) || !dup_path(&c->key_file, ud, ck, st))
    return false;
  struct {
    const char *v, *key;
    po_Bytes_ *dst;
  } blobs[] = {{ccd, "client-certificate-data", &c->cert_data}, {ckd, "client-key-data", &c->key_data}};
  for (int b = 0; b < 2; b++) {
    if (!blobs[b].v) continue;
    char what[640];
    snprintf(what, sizeof what, "%s:%zu: %s.%s", ud->origin,
             map_get(ud, us, blobs[b].key)->start_mark.line + 1, path, blobs[b].key);
    if (!po_Base64Decode_(blobs[b].v, strlen(blobs[b].v), blobs[b].dst, what, st)) return false;
  }
  bool has_cert = c->cert_file || c->cert_data.data, has_key = c->key_file || c->key_data.data;
  if (has_cert != has_key)
    return fail_at(st, ud, us, path, "%s", has_cert ? "client-certificate is set but client-key is missing"
                                                    : "client-key is set but client-certificate is missing");
  return true;
}

/* The context's user, if it names one (a context may name none, for unauthenticated servers). */
static bool read_user(Doc *docs, int n, Doc *cd, const char *user, const char *ctx, po_KubeConfig *c,
                      po_CtlStatus *st) {
  if (!user || !*user) return true;
  char path[256];
  yaml_node_t *us;
  Doc *ud;
  return find_of_context(docs, n, "users", "user", user, cd, ctx, &us, &ud, path, sizeof path, st) &&
         read_credentials(ud, us, path, c, st);
}

/* The merged kubeconfig of docs for `context` (NULL: the current one): the context, then its
 * cluster, then its user, each looked up across docs in order. */
static bool resolve(Doc *docs, int n, const char *context, po_KubeConfig **out, po_CtlStatus *st) {
  char cxpath[256];
  Doc *cd = NULL;
  yaml_node_t *cx = NULL;
  const char *ctx = context;
  if (!find_context(docs, n, &ctx, &cd, &cx, cxpath, sizeof cxpath, st)) return false;
  const char *cluster, *user, *ns;
  if (!get_str(cd, cx, "cluster", cxpath, &cluster, st) || !get_str(cd, cx, "user", cxpath, &user, st) ||
      !get_str(cd, cx, "namespace", cxpath, &ns, st))
    return false;
  if (!cluster || !*cluster)
    return fail_at(st, cd, cx, cxpath, "context \"%s\" names no cluster", ctx);

  po_KubeConfig *c = po_KubeConfig_New_();
  if (!c) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  if (!dup(&c->context, ctx, st) || !dup(&c->ns, ns, st) || !read_cluster(docs, n, cd, cluster, ctx, c, st) ||
      !read_user(docs, n, cd, user, ctx, c, st)) {
    po_KubeConfig_Free(c);
    return false;
  }
  *out = c;
  return true;
}

bool po_KubeConfig_ParseYaml(const char *text, size_t len, const char *origin, const char *context,
                             po_KubeConfig **out, po_CtlStatus *st) {
  *out = NULL;
  Doc *d = calloc(1, sizeof *d);
  if (!d) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  bool ok = load_doc(d, text, len, origin, st) && resolve(d, 1, context, out, st);
  free_docs(d, 1);
  return ok;
}

bool po_KubeConfig_LoadFiles(const char *paths, const char *context, po_KubeConfig **out,
                             po_CtlStatus *st) {
  *out = NULL;
  int cap = 1;
  for (const char *p = paths; *p; p++) cap += *p == ':';
  Doc *docs = calloc((size_t)cap, sizeof *docs);
  if (!docs) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "out of memory");
  int n = 0;
  bool ok = true;
  const char *p = paths;
  po_CtlStatus last;
  po_CtlStatus_Clear(&last);
  while (ok) {
    const char *e = strchr(p, ':');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l > 0 && l < PATH_MAX) {
      char file[PATH_MAX];
      memcpy(file, p, l);
      file[l] = '\0';
      size_t len;
      char *text = po_ReadFile_(file, &len, &last);
      if (text) {
        ok = load_doc(&docs[n], text, len, file, st);
        n++;
        free(text);
      }
    }
    if (!e) break;
    p = e + 1;
  }
  if (ok && n == 0) {
    if (strchr(paths, ':') || !last.code)
      ok = po_CtlStatus_Set(st, kPo_Ctl_Config, "no readable kubeconfig file in \"%s\"", paths);
    else if (st)
      *st = last, ok = false;
    else
      ok = false;
  }
  if (ok) ok = resolve(docs, n, context, out, st);
  free_docs(docs, n);
  return ok;
}
