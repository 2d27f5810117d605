/* Certificates for the webhook's self-managed mode (GnuTLS): a CA, a serving certificate it
 * signs, and their remaining validity. PEM in and out, in malloc'd NUL-terminated strings the
 * caller frees. */
#ifndef PO_WEBHOOK_CERTGEN_H_
#define PO_WEBHOOK_CERTGEN_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/base/status.h"

typedef struct {
  char *cert_pem;
  char *key_pem;
} po_CertPair;

void po_CertPair_Free(po_CertPair *p);

/* A self-signed ECDSA P-256 CA valid for `days`. */
bool po_Cert_GenerateCA(const char *common_name, int days, po_CertPair *out, po_CtlStatus *st);
/* A serving certificate (ECDSA P-256, serverAuth) for the names (DNS names, or IP addresses),
 * signed by the CA, valid for `days`. */
bool po_Cert_GenerateServing(const po_CertPair *ca, const char *const *names, size_t n, int days,
                             po_CertPair *out, po_CtlStatus *st);
/* Days until the first certificate of `pem` expires (negative when expired); false when it
 * does not parse. */
bool po_Cert_DaysLeft(const char *pem, double *days);
/* Whether `cert_pem` was issued by the CA certificate `ca_pem` (signature checked). */
bool po_Cert_IssuedBy(const char *cert_pem, const char *ca_pem);

#endif
