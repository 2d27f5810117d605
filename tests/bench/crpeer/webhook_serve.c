/* Our webhook server on its own, for the peer benchmark (tests/bench/bench_crpeer.sh): the
 * controller's po_WebhookServer (libmicrohttpd + GnuTLS, the engine's full admission decision)
 * without a controller or an API server, so that it runs as a separate process exactly as the
 * controller-runtime peer does.
 *   webhook_serve CERT KEY READY_FILE [threads]   writes 127.0.0.1:PORT to READY_FILE, serves
 *                                                 until SIGTERM or SIGINT */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "po/webhook/server.h"

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: webhook_serve CERT KEY READY_FILE [threads]\n");
    return 2;
  }
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, NULL); /* before any thread starts: they inherit the mask */
  po_CtlStatus st;
  po_WebhookServer *s = po_WebhookServer_Start(
      &(po_WebhookOptions){.address = "127.0.0.1:0", .cert_file = argv[1], .key_file = argv[2],
                           .threads = argc > 4 ? (unsigned)atoi(argv[4]) : 0},
      &st);
  if (!s) {
    fprintf(stderr, "webhook_serve: %s\n", st.message);
    return 1;
  }
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", argv[3]);
  FILE *f = fopen(tmp, "w");
  if (!f || fprintf(f, "127.0.0.1:%u\n", po_WebhookServer_Port(s)) < 0 || fclose(f) != 0 || rename(tmp, argv[3]) != 0) {
    fprintf(stderr, "webhook_serve: cannot write %s\n", argv[3]);
    po_WebhookServer_Stop(s);
    return 1;
  }
  int sig = 0;
  sigwait(&set, &sig);
  po_WebhookServer_Stop(s);
  return 0;
}
