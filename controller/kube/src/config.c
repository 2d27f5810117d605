/* po_KubeConfig: allocation, getters, the token file re-read, and the load chain. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_internal.h"

po_KubeConfig *po_KubeConfig_New_(void) {
  po_KubeConfig *c = calloc(1, sizeof *c);
  if (c) pthread_mutex_init(&c->lock, NULL);
  return c;
}

void po_KubeConfig_Free(po_KubeConfig *c) {
  if (!c) return;
  free(c->server);
  free(c->context);
  free(c->ns);
  free(c->ca_file);
  free(c->cert_file);
  free(c->key_file);
  free(c->token_file);
  free(c->ca_data.data);
  free(c->cert_data.data);
  free(c->key_data.data);
  free(c->token);
  free(c->file_token);
  pthread_mutex_destroy(&c->lock);
  free(c);
}

char *po_ReadFile_(const char *path, size_t *len, po_CtlStatus *st) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    po_CtlStatus_Set(st, kPo_Ctl_Io, "%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      if (cap >= (1u << 20)) {
        po_CtlStatus_Set(st, kPo_Ctl_Io, "%s: larger than 1 MiB", path);
        free(buf);
        fclose(f);
        return NULL;
      }
      char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
    size_t r = fread(buf + n, 1, cap - n - 1, f);
    n += r;
    if (r == 0) break;
  }
  if (!buf) {
    fclose(f);
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "%s: out of memory", path);
    return NULL;
  }
  if (ferror(f)) {
    po_CtlStatus_Set(st, kPo_Ctl_Io, "%s: read error: %s", path, strerror(errno));
    free(buf);
    fclose(f);
    return NULL;
  }
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

static int b64val(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool po_Base64Decode_(const char *in, size_t len, po_Bytes_ *out, const char *what, po_CtlStatus *st) {
  char *buf = malloc(len / 4 * 3 + 4);
  if (!buf) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "%s: out of memory", what);
  size_t n = 0;
  unsigned acc = 0;
  int bits = 0, pad = 0;
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      pad++;
      continue;
    }
    int v = b64val(c);
    if (v < 0 || pad) {
      free(buf);
      return po_CtlStatus_Set(st, kPo_Ctl_Config,
                               "%s: not valid base64: unexpected '%c' at offset %zu", what,
                               c >= 0x20 && c < 0x7f ? c : '?', i);
    }
    acc = (acc << 6) | (unsigned)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      buf[n++] = (char)((acc >> bits) & 0xff);
    }
  }
  if (bits >= 6 || pad > 2) {
    free(buf);
    return po_CtlStatus_Set(st, kPo_Ctl_Config, "%s: not valid base64: truncated input", what);
  }
  buf[n] = '\0';
  out->data = buf;
  out->len = n;
  return true;
}

const char *po_KubeConfig_Server(const po_KubeConfig *c) { return c->server; }
const char *po_KubeConfig_Context(const po_KubeConfig *c) { return c->context ? c->context : ""; }
const char *po_KubeConfig_Namespace(const po_KubeConfig *c) { return c->ns && *c->ns ? c->ns : "default"; }
const char *po_KubeConfig_CaFile(const po_KubeConfig *c) { return c->ca_file; }
const char *po_KubeConfig_CertFile(const po_KubeConfig *c) { return c->cert_file; }
const char *po_KubeConfig_KeyFile(const po_KubeConfig *c) { return c->key_file; }
const char *po_KubeConfig_TokenFile(const po_KubeConfig *c) { return c->token_file; }
bool po_KubeConfig_InsecureSkipTlsVerify(const po_KubeConfig *c) { return c->insecure; }
bool po_KubeConfig_IsInCluster(const po_KubeConfig *c) { return c->in_cluster; }

static const char *bytes(const po_Bytes_ *b, size_t *len) {
  if (len) *len = b->len;
  return b->data;
}
const char *po_KubeConfig_CaData(const po_KubeConfig *c, size_t *len) { return bytes(&c->ca_data, len); }
const char *po_KubeConfig_CertData(const po_KubeConfig *c, size_t *len) { return bytes(&c->cert_data, len); }
const char *po_KubeConfig_KeyData(const po_KubeConfig *c, size_t *len) { return bytes(&c->key_data, len); }

/* Re-reads token_file when its identity changed. Called with c->lock held. */
static bool refresh_token(po_KubeConfig *c, po_CtlStatus *st) {
  struct stat sb;
  if (stat(c->token_file, &sb) != 0) {
    /* Keep serving the last token if the file vanished briefly during a rotation. */
    if (c->token_read) return true;
    return po_CtlStatus_Set(st, kPo_Ctl_Config, "%s: cannot read token file: %s",
                             c->token_file, strerror(errno));
  }
  int64_t mtime = (int64_t)sb.st_mtim.tv_sec * 1000000000 + sb.st_mtim.tv_nsec;
  if (c->token_read && mtime == c->token_mtime_ns && sb.st_size == c->token_size &&
      sb.st_ino == c->token_ino)
    return true;
  size_t n;
  char *t = po_ReadFile_(c->token_file, &n, st);
  if (!t) return c->token_read; /* a failed re-read keeps the previous token */
  while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ' || t[n - 1] == '\t')) t[--n] = '\0';
  free(c->file_token);
  c->file_token = t;
  c->token_read = true;
  c->token_mtime_ns = mtime;
  c->token_size = sb.st_size;
  c->token_ino = sb.st_ino;
  return true;
}

bool po_KubeConfig_Token(po_KubeConfig *c, char *buf, size_t size, po_CtlStatus *st) {
  if (!size) return po_CtlStatus_Set(st, kPo_Ctl_Usage, "token buffer of size 0");
  buf[0] = '\0';
  pthread_mutex_lock(&c->lock);
  bool ok = true;
  if (c->token_file) ok = refresh_token(c, st) || (c->token != NULL);
  const char *tok = c->file_token ? c->file_token : c->token;
  if (ok && tok) {
    size_t n = strlen(tok);
    if (n >= size) {
      ok = po_CtlStatus_Set(st, kPo_Ctl_Config, "bearer token longer than %zu bytes", size - 1);
    } else {
      memcpy(buf, tok, n + 1);
    }
  }
  pthread_mutex_unlock(&c->lock);
  return ok;
}

bool po_KubeConfig_Load(const po_KubeConfigOptions *opt, po_KubeConfig **out, po_CtlStatus *st) {
  po_KubeConfigOptions none = {0};
  if (!opt) opt = &none;
  if (opt->kubeconfig && *opt->kubeconfig) return po_KubeConfig_LoadFiles(opt->kubeconfig, opt->context, out, st);
  const char *env = getenv("KUBECONFIG");
  if (env && *env) return po_KubeConfig_LoadFiles(env, opt->context, out, st);
  const char *host = getenv("KUBERNETES_SERVICE_HOST");
  if (host && *host && !opt->context) return po_KubeConfig_InCluster(opt->incluster_dir, out, st);
  const char *home = getenv("HOME");
  if (!home || !*home)
    return po_CtlStatus_Set(st, kPo_Ctl_Config,
                             "no configuration: give --kubeconfig, set KUBECONFIG, run in a cluster, "
                             "or set HOME so that ~/.kube/config can be found");
  char path[4096];
  snprintf(path, sizeof path, "%s/.kube/config", home);
  return po_KubeConfig_LoadFiles(path, opt->context, out, st);
}
