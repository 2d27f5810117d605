#include "po/webhook/certgen.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void po_CertPair_Free(po_CertPair *p) {
  if (!p) return;
  free(p->cert_pem);
  free(p->key_pem);
  p->cert_pem = p->key_pem = NULL;
}

static char *dup_datum(const gnutls_datum_t *d) {
  char *s = malloc(d->size + 1);
  if (s) {
    memcpy(s, d->data, d->size);
    s[d->size] = '\0';
  }
  return s;
}

static bool export_pair(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, po_CertPair *out) {
  gnutls_datum_t c = {0}, k = {0};
  bool ok = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &c) == 0 &&
            gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &k) == 0;
  if (ok) {
    out->cert_pem = dup_datum(&c);
    out->key_pem = dup_datum(&k);
    ok = out->cert_pem && out->key_pem;
  }
  gnutls_free(c.data);
  gnutls_free(k.data);
  return ok;
}

/* The common part of both certificates: a fresh key, serial, validity, subject. */
static int start_cert(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const char *cn, int days) {
  int rc;
  if ((rc = gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0) return rc;
  unsigned char serial[16];
  if ((rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof serial)) < 0) return rc;
  serial[0] &= 0x7f; /* positive */
  time_t now = time(NULL);
  if ((rc = gnutls_x509_crt_set_version(crt, 3)) < 0 || (rc = gnutls_x509_crt_set_serial(crt, serial, sizeof serial)) < 0 ||
      (rc = gnutls_x509_crt_set_activation_time(crt, now - 300)) < 0 || /* clock skew */
      (rc = gnutls_x509_crt_set_expiration_time(crt, now + (time_t)days * 86400)) < 0 ||
      (rc = gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned)strlen(cn))) < 0 ||
      (rc = gnutls_x509_crt_set_key(crt, key)) < 0) {
    return rc;
  }
  unsigned char id[64];
  size_t idlen = sizeof id;
  if ((rc = gnutls_x509_crt_get_key_id(crt, 0, id, &idlen)) < 0) return rc;
  return gnutls_x509_crt_set_subject_key_id(crt, id, idlen);
}

bool po_Cert_GenerateCA(const char *cn, int days, po_CertPair *out, po_CtlStatus *st) {
  gnutls_x509_crt_t crt = NULL;
  gnutls_x509_privkey_t key = NULL;
  memset(out, 0, sizeof *out);
  int rc = gnutls_x509_crt_init(&crt);
  if (rc >= 0) rc = gnutls_x509_privkey_init(&key);
  if (rc >= 0) rc = start_cert(crt, key, cn, days);
  if (rc >= 0) rc = gnutls_x509_crt_set_basic_constraints(crt, 1, 0);
  if (rc >= 0) rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN | GNUTLS_KEY_DIGITAL_SIGNATURE);
  if (rc >= 0) rc = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0);
  bool ok = false;
  if (rc >= 0) ok = export_pair(crt, key, out);
  if (!ok) po_CtlStatus_Set(st, rc < 0 ? kPo_Ctl_System : kPo_Ctl_NoMemory, "cannot make the webhook CA: %s", rc < 0 ? gnutls_strerror(rc) : "out of memory");
  gnutls_x509_crt_deinit(crt);
  gnutls_x509_privkey_deinit(key);
  return ok;
}

static bool import(const char *pem, gnutls_x509_crt_t *crt, gnutls_x509_privkey_t *key) {
  gnutls_datum_t d = {(unsigned char *)pem, (unsigned)strlen(pem)};
  if (crt && (gnutls_x509_crt_init(crt) < 0 || gnutls_x509_crt_import(*crt, &d, GNUTLS_X509_FMT_PEM) < 0)) return false;
  if (key && (gnutls_x509_privkey_init(key) < 0 || gnutls_x509_privkey_import(*key, &d, GNUTLS_X509_FMT_PEM) < 0)) return false;
  return true;
}

bool po_Cert_GenerateServing(const po_CertPair *ca, const char *const *names, size_t n, int days, po_CertPair *out,
                             po_CtlStatus *st) {
  memset(out, 0, sizeof *out);
  gnutls_x509_crt_t ca_crt = NULL, crt = NULL;
  gnutls_x509_privkey_t ca_key = NULL, key = NULL;
  bool ok = false;
  int rc = -1;
  bool said = false; /* the CA's own failure, not to be taken for a GnuTLS one */
  if (!import(ca->cert_pem, &ca_crt, NULL) || !import(ca->key_pem, NULL, &ca_key)) {
    po_CtlStatus_Set(st, kPo_Ctl_Usage, "the webhook CA does not parse");
    said = true;
    goto done;
  }
  if ((rc = gnutls_x509_crt_init(&crt)) < 0 || (rc = gnutls_x509_privkey_init(&key)) < 0 ||
      (rc = start_cert(crt, key, n ? names[0] : "propertyoverride-webhook", days)) < 0 ||
      (rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
      (rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT)) < 0 ||
      (rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0) {
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    unsigned char ip[16];
    if (inet_pton(AF_INET, names[i], ip) == 1) rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4, GNUTLS_FSAN_APPEND);
    else if (inet_pton(AF_INET6, names[i], ip) == 1) rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 16, GNUTLS_FSAN_APPEND);
    else rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, names[i], (unsigned)strlen(names[i]), GNUTLS_FSAN_APPEND);
    if (rc < 0) goto done;
  }
  unsigned char id[64];
  size_t idlen = sizeof id;
  if ((rc = gnutls_x509_crt_get_subject_key_id(ca_crt, id, &idlen, NULL)) >= 0) gnutls_x509_crt_set_authority_key_id(crt, id, idlen);
  if ((rc = gnutls_x509_crt_sign2(crt, ca_crt, ca_key, GNUTLS_DIG_SHA256, 0)) < 0) goto done;
  ok = export_pair(crt, key, out);
done:
  if (!ok && !said) {
    po_CtlStatus_Set(st, rc < 0 ? kPo_Ctl_System : kPo_Ctl_NoMemory, "cannot make the webhook certificate: %s",
                     rc < 0 ? gnutls_strerror(rc) : "out of memory");
  }
  if (ca_crt) gnutls_x509_crt_deinit(ca_crt);
  if (crt) gnutls_x509_crt_deinit(crt);
  if (ca_key) gnutls_x509_privkey_deinit(ca_key);
  if (key) gnutls_x509_privkey_deinit(key);
  return ok;
}

bool po_Cert_DaysLeft(const char *pem, double *days) {
  gnutls_x509_crt_t crt = NULL;
  if (!pem || !import(pem, &crt, NULL)) {
    if (crt) gnutls_x509_crt_deinit(crt);
    return false;
  }
  time_t exp = gnutls_x509_crt_get_expiration_time(crt);
  gnutls_x509_crt_deinit(crt);
  if (exp == (time_t)-1) return false;
  *days = difftime(exp, time(NULL)) / 86400.0;
  return true;
}

bool po_Cert_IssuedBy(const char *cert_pem, const char *ca_pem) {
  gnutls_x509_crt_t crt = NULL, ca = NULL;
  bool ok = false;
  if (cert_pem && ca_pem && import(cert_pem, &crt, NULL) && import(ca_pem, &ca, NULL)) {
    unsigned status = 0;
    ok = gnutls_x509_crt_verify(crt, &ca, 1, 0, &status) >= 0 && status == 0;
  }
  if (crt) gnutls_x509_crt_deinit(crt);
  if (ca) gnutls_x509_crt_deinit(ca);
  return ok;
}
