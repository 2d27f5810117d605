/* The client's layout, shared by client.c (REST) and watch.c. */
#ifndef PO_KUBE_CLIENT_INTERNAL_H
#define PO_KUBE_CLIENT_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "po/kube/client.h"

#define PO_SHARE_LOCKS 8

struct json_object;

typedef struct {
  char *data;
  size_t len, cap;
} po_Buf_;

struct po_KubeClient {
  po_KubeConfig *cfg;
  po_KubeClientOptions opt; /* defaults filled in */
  char *user_agent;
  CURLSH *share;
  pthread_mutex_t share_locks[PO_SHARE_LOCKS];
  pthread_mutex_t pool_lock; /* guards idle */
  CURL **idle;
  int n_idle, cap_idle;
  pthread_mutex_t rl_lock; /* guards bucket and rand */
  po_TokenBucket bucket;
  po_Rand rand;
  _Atomic uint64_t connections; /* new connections made by requests (not watches) */
  struct po_KubeHeaders_ *headers; /* the requests' header lists for the current token (pool_lock) */
  _Atomic uint64_t header_builds;  /* how often they were built: once per token */
  _Atomic uint64_t http_versions[2]; /* answers by HTTP version: 1.x, 2 (po_KubeClient_HttpVersions) */
  _Atomic uint64_t answer_bytes;     /* the bodies of the 2xx answers to requests (not watches) */
};

CURL *po_KubeClient_TakeHandle_(po_KubeClient *c);
/* How often the requests' header lists were built (tests: once per bearer token, not per request). */
uint64_t po_KubeClient_HeaderBuilds_(po_KubeClient *c);
/* The bytes of every 2xx answer's body so far (tests: a write answered by its metadata alone). */
uint64_t po_KubeClient_AnswerBytes_(po_KubeClient *c);
void po_KubeClient_ReturnHandle_(po_KubeClient *c, CURL *h);
void po_KubeClient_RateLimit_(po_KubeClient *c);
/* The same, but a fired cancel (may be NULL) ends the wait: false then. */
bool po_KubeClient_RateLimitCancel_(po_KubeClient *c, po_KubeCancel *cancel);
double po_KubeClient_Jitter_(po_KubeClient *c);
/* Counts the answer h got (a request's or a watch's) by its HTTP version; none when no answer came. */
void po_KubeClient_NoteVersion_(po_KubeClient *c, CURL *h);
bool po_KubeClient_Setup_(po_KubeClient *c, CURL *h, const char *method, const char *url,
                          struct curl_slist **headers, const char *content_type, po_CtlStatus *st);
bool po_KubeClient_Url_(po_KubeClient *c, const po_KubeRef *ref, const char *query, char *url,
                        size_t size, po_CtlStatus *st);
bool po_Query_Add_(char *q, size_t size, const char *key, const char *value);
bool po_Kube_ParseJson_(const char *body, size_t len, struct json_object **out, const char *what,
                        po_CtlStatus *st);

#endif
