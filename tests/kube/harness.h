/* Starts and stops po-apiserver for the integration tests and the benchmark. */
#ifndef PO_KUBE_TEST_HARNESS_H
#define PO_KUBE_TEST_HARNESS_H

#include <stdbool.h>
#include <sys/types.h>

typedef struct {
  const char *bin;
  char dir[256];        /* temporary directory: url, tls/, state.json, log */
  char url[128];
  char kubeconfig[300];
  char token[64];
  char port[16];
  pid_t pid;
} po_TestServer;

/* extra: NULL-terminated flags appended to the command line (may be NULL). with_state: pass
 * --state dir/state.json. Returns false (with a message on stderr) if not ready in 30 s. */
bool po_TestServer_Start(po_TestServer *s, const char *bin, const char *const *extra, bool with_state);
/* SIGTERM and wait. */
void po_TestServer_Stop(po_TestServer *s);
/* Start again on the same port, TLS files, token and state. */
bool po_TestServer_Restart(po_TestServer *s, const char *const *extra);
/* POST /admin/faults with a JSON body. */
bool po_TestServer_Faults(po_TestServer *s, const char *json);
/* Removes the temporary directory. */
void po_TestServer_Cleanup(po_TestServer *s);

#endif
