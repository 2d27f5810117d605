/* Where the API server is and how to authenticate: kubeconfig files or in-cluster.
 *
 * A po_KubeConfig is immutable after loading except for the token, which is re-read from its
 * file when the file changes (bound service-account tokens rotate). All functions are
 * thread-safe on a loaded config. */
#ifndef PO_KUBE_CONFIG_H
#define PO_KUBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "po/kube/status.h"

typedef struct po_KubeConfig po_KubeConfig;

typedef struct {
  const char *kubeconfig;   /* --kubeconfig; NULL: $KUBECONFIG, in-cluster, ~/.kube/config */
  const char *context;      /* --context; NULL: the current-context */
  const char *incluster_dir;/* NULL: /var/run/secrets/kubernetes.io/serviceaccount */
} po_KubeConfigOptions;

/* The chain controller-runtime uses: the explicit path; else each file of $KUBECONFIG
 * (colon-separated, merged first-wins per name); else in-cluster when KUBERNETES_SERVICE_HOST
 * is set; else $HOME/.kube/config. */
bool po_KubeConfig_Load(const po_KubeConfigOptions *opt, po_KubeConfig **out, po_CtlStatus *st);

/* One kubeconfig document given as text; `origin` names it in messages and is the base for
 * relative file paths (its directory). context NULL: current-context. */
bool po_KubeConfig_ParseYaml(const char *text, size_t len, const char *origin, const char *context,
                             po_KubeConfig **out, po_CtlStatus *st);

/* A colon-separated list of kubeconfig files merged as kubectl does (first file wins for
 * current-context and for each named cluster, user and context). Missing files are skipped;
 * all missing is an error. */
bool po_KubeConfig_LoadFiles(const char *paths, const char *context, po_KubeConfig **out,
                             po_CtlStatus *st);

/* In-cluster: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, dir/token (re-read on
 * change), dir/ca.crt, dir/namespace. dir NULL: the standard service-account directory. */
bool po_KubeConfig_InCluster(const char *dir, po_KubeConfig **out, po_CtlStatus *st);

void po_KubeConfig_Free(po_KubeConfig *cfg);

/* Getters; strings live as long as the config; NULL when not set. */
const char *po_KubeConfig_Server(const po_KubeConfig *cfg);      /* without trailing '/' */
const char *po_KubeConfig_Context(const po_KubeConfig *cfg);     /* "" for in-cluster */
const char *po_KubeConfig_Namespace(const po_KubeConfig *cfg);   /* "default" when unset */
const char *po_KubeConfig_CaFile(const po_KubeConfig *cfg);
const char *po_KubeConfig_CaData(const po_KubeConfig *cfg, size_t *len); /* PEM, decoded */
const char *po_KubeConfig_CertFile(const po_KubeConfig *cfg);
const char *po_KubeConfig_CertData(const po_KubeConfig *cfg, size_t *len);
const char *po_KubeConfig_KeyFile(const po_KubeConfig *cfg);
const char *po_KubeConfig_KeyData(const po_KubeConfig *cfg, size_t *len);
const char *po_KubeConfig_TokenFile(const po_KubeConfig *cfg);
bool po_KubeConfig_InsecureSkipTlsVerify(const po_KubeConfig *cfg);
bool po_KubeConfig_IsInCluster(const po_KubeConfig *cfg);

/* The bearer token now ("" when none): the inline token, else the token file's content
 * (trimmed), re-read when the file's mtime, size or inode changed. Copies into buf. */
bool po_KubeConfig_Token(po_KubeConfig *cfg, char *buf, size_t size, po_CtlStatus *st);

#endif
