/* --tls-dir: a CA and a serving certificate (ECDSA P-256, SANs 127.0.0.1, ::1, localhost)
 * generated with gnutls when DIR/ca.crt, DIR/tls.crt or DIR/tls.key is missing. */
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apiserver.h"

static bool write_file(const char *path, const void *data, size_t n, mode_t mode) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  ok = fflush(f) == 0 && ok;
  ok = fsync(fileno(f)) == 0 && ok;
  fclose(f);
  chmod(tmp, mode);
  return ok && rename(tmp, path) == 0;
}

static bool export_pem(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, const char *path, char *msg, size_t msgsz) {
  gnutls_datum_t out = {0};
  int rc = crt ? gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &out)
               : gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &out);
  if (rc < 0) {
    snprintf(msg, msgsz, "exporting %s: %s", path, gnutls_strerror(rc));
    return false;
  }
  bool ok = write_file(path, out.data, out.size, crt ? 0644 : 0600);
  gnutls_free(out.data);
  if (!ok) snprintf(msg, msgsz, "writing %s failed", path);
  return ok;
}

static int make_key(gnutls_x509_privkey_t *key) {
  int rc = gnutls_x509_privkey_init(key);
  if (rc < 0) return rc;
  return gnutls_x509_privkey_generate(*key, GNUTLS_PK_ECDSA, GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
}

static int base_cert(gnutls_x509_crt_t *crt, gnutls_x509_privkey_t key, const char *cn, unsigned serial) {
  int rc = gnutls_x509_crt_init(crt);
  if (rc < 0) return rc;
  gnutls_x509_crt_set_version(*crt, 3);
  unsigned char ser[8] = {0x01, (unsigned char)(serial >> 16), (unsigned char)(serial >> 8), (unsigned char)serial,
                          (unsigned char)time(NULL), 0x42, 0x13, 0x37};
  gnutls_x509_crt_set_serial(*crt, ser, sizeof ser);
  time_t now = time(NULL);
  gnutls_x509_crt_set_activation_time(*crt, now - 3600);
  gnutls_x509_crt_set_expiration_time(*crt, now + 10L * 365 * 24 * 3600);
  gnutls_x509_crt_set_dn_by_oid(*crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned)strlen(cn));
  return gnutls_x509_crt_set_key(*crt, key);
}

bool po_As_Tls_Ensure(const char *dir, char **extra_dns, int nextra, char *msg, size_t msgsz) {
  char ca_path[4096], crt_path[4096], key_path[4096];
  snprintf(ca_path, sizeof ca_path, "%s/ca.crt", dir);
  snprintf(crt_path, sizeof crt_path, "%s/tls.crt", dir);
  snprintf(key_path, sizeof key_path, "%s/tls.key", dir);
  if (access(ca_path, R_OK) == 0 && access(crt_path, R_OK) == 0 && access(key_path, R_OK) == 0) return true;
  mkdir(dir, 0755);
  gnutls_x509_privkey_t cakey = NULL, key = NULL;
  gnutls_x509_crt_t ca = NULL, crt = NULL;
  bool ok = false;
  int rc;
  if ((rc = make_key(&cakey)) < 0 || (rc = make_key(&key)) < 0) goto fail;
  if ((rc = base_cert(&ca, cakey, "po-apiserver-ca", 1)) < 0) goto fail;
  gnutls_x509_crt_set_basic_constraints(ca, 1, -1);
  gnutls_x509_crt_set_key_usage(ca, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN | GNUTLS_KEY_DIGITAL_SIGNATURE);
  if ((rc = gnutls_x509_crt_set_subject_key_id(ca, (const unsigned char *)"po-apiserver-ca-key", 19)) < 0) goto fail;
  if ((rc = gnutls_x509_crt_sign2(ca, ca, cakey, GNUTLS_DIG_SHA256, 0)) < 0) goto fail;
  if ((rc = base_cert(&crt, key, "127.0.0.1", 2)) < 0) goto fail;
  gnutls_x509_crt_set_basic_constraints(crt, 0, -1);
  gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT);
  gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0);
  const unsigned char ip4[4] = {127, 0, 0, 1};
  const unsigned char ip6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9, GNUTLS_FSAN_APPEND);
  for (int i = 0; i < nextra; i++)
    gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, extra_dns[i], (unsigned)strlen(extra_dns[i]), GNUTLS_FSAN_APPEND);
  gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip4, 4, GNUTLS_FSAN_APPEND);
  gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip6, 16, GNUTLS_FSAN_APPEND);
  gnutls_x509_crt_set_authority_key_id(crt, (const unsigned char *)"po-apiserver-ca-key", 19);
  if ((rc = gnutls_x509_crt_sign2(crt, ca, cakey, GNUTLS_DIG_SHA256, 0)) < 0) goto fail;
  ok = export_pem(ca, NULL, ca_path, msg, msgsz) && export_pem(crt, NULL, crt_path, msg, msgsz) &&
       export_pem(NULL, key, key_path, msg, msgsz);
  goto done;
fail:
  snprintf(msg, msgsz, "generating certificates in %s: %s", dir, gnutls_strerror(rc));
done:
  if (ca) gnutls_x509_crt_deinit(ca);
  if (crt) gnutls_x509_crt_deinit(crt);
  if (cakey) gnutls_x509_privkey_deinit(cakey);
  if (key) gnutls_x509_privkey_deinit(key);
  return ok;
}
