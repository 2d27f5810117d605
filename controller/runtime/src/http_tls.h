/* Private to the HTTP layer (http.c): TLS credentials from PEM files, re-read when they change. */
#ifndef PO_RUNTIME_HTTP_TLS_H
#define PO_RUNTIME_HTTP_TLS_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include "po/runtime/log.h"
#include "po/runtime/status.h"

typedef struct po_HttpTls po_HttpTls;

/* libmicrohttpd's MHD_OPTION_HTTPS_PRIORITIES for every server of the process. */
extern const char po_kHttpTlsPriorities[];

/* Loads the pair now (st: kPo_Ctl_System naming the file that failed). log is borrowed. */
po_HttpTls *po_HttpTls_New(const char *cert_file, const char *key_file, po_Logger *log,
                           po_CtlStatus *st);
void po_HttpTls_Free(po_HttpTls *t);
/* Binds a session (before its handshake) to t, for po_HttpTls_CertCallback. */
void po_HttpTls_Attach(po_HttpTls *t, gnutls_session_t session);
/* MHD_OPTION_HTTPS_CERT_CALLBACK: the current pair, reloaded first when the files changed. */
int po_HttpTls_CertCallback(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                            const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
                            unsigned int *pcert_length, gnutls_privkey_t *privkey);

#endif
