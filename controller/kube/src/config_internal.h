/* The layout of po_KubeConfig, shared by the kubeconfig and in-cluster loaders. */
#ifndef PO_KUBE_CONFIG_INTERNAL_H
#define PO_KUBE_CONFIG_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "po/kube/config.h"

typedef struct {
  char *data;
  size_t len;
} po_Bytes_;

struct po_KubeConfig {
  char *server, *context, *ns;
  char *ca_file, *cert_file, *key_file, *token_file;
  po_Bytes_ ca_data, cert_data, key_data;
  char *token;      /* inline token */
  char *file_token; /* the last read from token_file; wins over token (as in client-go) */
  bool insecure, in_cluster;
  pthread_mutex_t lock; /* guards token and the file identity below */
  bool token_read;
  int64_t token_mtime_ns;
  off_t token_size;
  ino_t token_ino;
};

po_KubeConfig *po_KubeConfig_New_(void);
/* Reads a whole small file (<= 1 MiB); NUL-terminated; NULL with st set on failure. */
char *po_ReadFile_(const char *path, size_t *len, po_CtlStatus *st);
/* Decodes standard base64 (whitespace ignored); false with st naming `what` on bad input. */
bool po_Base64Decode_(const char *in, size_t len, po_Bytes_ *out, const char *what, po_CtlStatus *st);

#endif
