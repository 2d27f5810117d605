/* libFuzzer target: the kubeconfig parser must never crash, leak or read out of bounds, and a
 * failure always carries a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "po/kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const char *contexts[] = {NULL, "dev", "prod", ""};
  po_KubeConfig *c = NULL;
  po_CtlStatus st;
  const char *ctx = contexts[size ? data[0] % 4 : 0];
  if (po_KubeConfig_ParseYaml((const char *)data, size, "/fuzz/kubeconfig", ctx, &c, &st)) {
    if (!po_KubeConfig_Server(c)) abort();
    char tok[256];
    po_KubeConfig_Token(c, tok, sizeof tok, &st);
    po_KubeConfig_Free(c);
  } else if (st.message[0] == '\0' || c != NULL) {
    abort();
  }
  return 0;
}
