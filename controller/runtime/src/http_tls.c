/* TLS credentials for the HTTP layer: a PEM chain and key, re-read when either file changes. */
#include "http_tls.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { kMaxRetired = 64, kMaxChain = 16 };

/* TLS 1.2 and 1.3 only; AEAD ciphers (AES-GCM, ChaCha20-Poly1305) with ECDHE key exchange, so
 * every session has forward secrecy; no SHA-1 signatures. The API server (Go's crypto/tls)
 * negotiates TLS 1.3, or one of these TLS 1.2 suites; TLS 1.0/1.1, CBC and SHA-1 MAC suites are gone. */
const char po_kHttpTlsPriorities[] =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+AES-128-GCM:+CHACHA20-POLY1305:"
    "-MAC-ALL:+AEAD:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:-SIGN-DSA-SHA1:%SERVER_PRECEDENCE";

typedef struct {
  gnutls_pcert_st *certs;
  unsigned count;
  gnutls_privkey_t key;
} Creds;

struct po_HttpTls {
  char *cert_file, *key_file;
  po_Logger *log;
  pthread_mutex_t mu;
  Creds cur;
  /* Replaced credentials stay alive: a handshake in another thread may still hold them. */
  Creds retired[kMaxRetired];
  int retired_count;
  struct timespec cert_mtime, key_mtime;
  time_t last_check;
};

static struct timespec mtime_of(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0) return (struct timespec){0, 0};
  return st.st_mtim;
}

static void creds_free(Creds *c) {
  for (unsigned i = 0; i < c->count; i++) gnutls_pcert_deinit(&c->certs[i]);
  free(c->certs);
  if (c->key) gnutls_privkey_deinit(c->key);
  memset(c, 0, sizeof *c);
}

static bool creds_load(const char *cert_file, const char *key_file, Creds *out, po_CtlStatus *st) {
  gnutls_datum_t cert = {0}, key = {0};
  Creds c = {0};
  bool ok = false;
  int rc;
  if (gnutls_load_file(cert_file, &cert) != GNUTLS_E_SUCCESS) {
    po_CtlStatus_Set(st, kPo_Ctl_System, "%s: cannot read the certificate", cert_file);
    goto done;
  }
  if (gnutls_load_file(key_file, &key) != GNUTLS_E_SUCCESS) {
    po_CtlStatus_Set(st, kPo_Ctl_System, "%s: cannot read the key", key_file);
    goto done;
  }
  c.certs = calloc(kMaxChain, sizeof *c.certs);
  if (!c.certs) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "%s: out of memory", cert_file);
    goto done;
  }
  c.count = kMaxChain;
  rc = gnutls_pcert_list_import_x509_raw(c.certs, &c.count, &cert, GNUTLS_X509_FMT_PEM, 0);
  if (rc < 0 || c.count == 0) {
    c.count = 0;
    po_CtlStatus_Set(st, kPo_Ctl_System, "%s: not a PEM certificate chain: %s", cert_file,
                     gnutls_strerror(rc));
    goto done;
  }
  if (gnutls_privkey_init(&c.key) < 0 ||
      (rc = gnutls_privkey_import_x509_raw(c.key, &key, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
    po_CtlStatus_Set(st, kPo_Ctl_System, "%s: not a PEM private key: %s", key_file,
                     gnutls_strerror(rc));
    goto done;
  }
  *out = c;
  ok = true;
done:
  if (!ok) creds_free(&c);
  gnutls_free(cert.data);
  gnutls_free(key.data);
  return ok;
}

po_HttpTls *po_HttpTls_New(const char *cert_file, const char *key_file, po_Logger *log,
                           po_CtlStatus *st) {
  po_HttpTls *t = calloc(1, sizeof *t);
  if (!t) return po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "TLS: out of memory"), NULL;
  pthread_mutex_init(&t->mu, NULL);
  t->log = log;
  t->cert_file = strdup(cert_file);
  t->key_file = strdup(key_file);
  if (!t->cert_file || !t->key_file) {
    po_CtlStatus_Set(st, kPo_Ctl_NoMemory, "TLS: out of memory");
    po_HttpTls_Free(t);
    return NULL;
  }
  if (!creds_load(t->cert_file, t->key_file, &t->cur, st)) {
    po_HttpTls_Free(t);
    return NULL;
  }
  t->cert_mtime = mtime_of(t->cert_file);
  t->key_mtime = mtime_of(t->key_file);
  t->last_check = time(NULL);
  return t;
}

void po_HttpTls_Free(po_HttpTls *t) {
  if (!t) return;
  creds_free(&t->cur);
  for (int i = 0; i < t->retired_count; i++) creds_free(&t->retired[i]);
  free(t->cert_file);
  free(t->key_file);
  pthread_mutex_destroy(&t->mu);
  free(t);
}

static bool same_time(struct timespec a, struct timespec b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* Called with t->mu held. */
static void maybe_reload(po_HttpTls *t) {
  time_t now = time(NULL);
  if (now == t->last_check) return;
  t->last_check = now;
  struct timespec cm = mtime_of(t->cert_file), km = mtime_of(t->key_file);
  if (same_time(cm, t->cert_mtime) && same_time(km, t->key_mtime)) return;
  Creds c;
  po_CtlStatus st;
  po_CtlStatus_Clear(&st);
  t->cert_mtime = cm;
  t->key_mtime = km;
  if (!creds_load(t->cert_file, t->key_file, &c, &st)) {
    po_Log_Error(t->log, "certificate reload failed; keeping the previous one",
                 po_Str("error", st.message));
    return;
  }
  if (t->retired_count < kMaxRetired) {
    t->retired[t->retired_count++] = t->cur;
  } else {
    /* Past that many rotations in one process life, the oldest pair is long out of any handshake. */
    creds_free(&t->retired[0]);
    memmove(t->retired, t->retired + 1, sizeof t->retired[0] * (kMaxRetired - 1));
    t->retired[kMaxRetired - 1] = t->cur;
  }
  t->cur = c;
}

void po_HttpTls_Attach(po_HttpTls *t, gnutls_session_t session) { gnutls_session_set_ptr(session, t); }

int po_HttpTls_CertCallback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                            const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
                            unsigned int *pcert_length, gnutls_privkey_t *privkey) {
  (void)req_ca_dn; (void)nreqs; (void)algos; (void)nalgos;
  po_HttpTls *t = gnutls_session_get_ptr(session);
  if (!t) return -1;
  pthread_mutex_lock(&t->mu);
  maybe_reload(t);
  *pcert = t->cur.certs;
  *pcert_length = t->cur.count;
  *privkey = t->cur.key;
  pthread_mutex_unlock(&t->mu);
  return *pcert_length ? 0 : -1;
}
