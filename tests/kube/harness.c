/* po-apiserver as a child process on a loopback port. */
#include "harness.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static bool spawn(po_TestServer *s, const char *listen, const char *const *extra, bool with_state) {
  char ready[300], tls[300], state[300], log[300];
  snprintf(ready, sizeof ready, "%s/url", s->dir);
  snprintf(tls, sizeof tls, "%s/tls", s->dir);
  snprintf(state, sizeof state, "%s/state.json", s->dir);
  snprintf(log, sizeof log, "%s/log", s->dir);
  unlink(ready);
  const char *argv[64];
  int n = 0;
  argv[n++] = s->bin;
  argv[n++] = "--listen";
  argv[n++] = listen;
  argv[n++] = "--ready-file";
  argv[n++] = ready;
  argv[n++] = "--tls-dir";
  argv[n++] = tls;
  argv[n++] = "--token";
  argv[n++] = s->token;
  if (with_state) {
    argv[n++] = "--state";
    argv[n++] = state;
  }
  for (int i = 0; extra && extra[i] && n < 62; i++) argv[n++] = extra[i];
  argv[n] = NULL;
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    FILE *f = freopen(log, "a", stderr);
    (void)f;
    execv(s->bin, (char *const *)argv);
    _exit(127);
  }
  s->pid = pid;
  for (int i = 0; i < 3000; i++) {
    FILE *f = fopen(ready, "r");
    if (f) {
      bool ok = fgets(s->url, sizeof s->url, f) != NULL;
      fclose(f);
      if (ok) {
        s->url[strcspn(s->url, "\r\n")] = '\0';
        const char *colon = strrchr(s->url, ':');
        snprintf(s->port, sizeof s->port, "%s", colon ? colon + 1 : "0");
        return true;
      }
    }
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) {
      fprintf(stderr, "po-apiserver exited early (see %s)\n", log);
      s->pid = 0;
      return false;
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "po-apiserver not ready after 30 s (see %s)\n", log);
  return false;
}

bool po_TestServer_Start(po_TestServer *s, const char *bin, const char *const *extra, bool with_state) {
  memset(s, 0, sizeof *s);
  s->bin = bin;
  snprintf(s->dir, sizeof s->dir, "/tmp/po-kube-it-XXXXXX");
  if (!mkdtemp(s->dir)) return false;
  snprintf(s->token, sizeof s->token, "it-token-%ld", (long)getpid());
  snprintf(s->kubeconfig, sizeof s->kubeconfig, "%s/tls/kubeconfig", s->dir);
  if (access(bin, X_OK) != 0) {
    fprintf(stderr, "%s: not executable: %s\n", bin, strerror(errno));
    return false;
  }
  return spawn(s, "127.0.0.1:0", extra, with_state);
}

void po_TestServer_Stop(po_TestServer *s) {
  if (s->pid <= 0) return;
  kill(s->pid, SIGTERM);
  int st;
  for (int i = 0; i < 1000; i++) {
    if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
      s->pid = 0;
      return;
    }
    struct timespec ts = {0, 10000000};
    nanosleep(&ts, NULL);
  }
  kill(s->pid, SIGKILL);
  waitpid(s->pid, &st, 0);
  s->pid = 0;
}

bool po_TestServer_Restart(po_TestServer *s, const char *const *extra) {
  po_TestServer_Stop(s);
  char listen[64];
  snprintf(listen, sizeof listen, "127.0.0.1:%s", s->port);
  /* The port may linger briefly in the kernel; retry a few times. */
  for (int i = 0; i < 20; i++) {
    char state[300];
    snprintf(state, sizeof state, "%s/state.json", s->dir);
    if (spawn(s, listen, extra, access(state, F_OK) == 0)) return true;
    struct timespec ts = {0, 200000000};
    nanosleep(&ts, NULL);
  }
  return false;
}

static size_t discard(char *p, size_t a, size_t b, void *u) { return a * b; }

bool po_TestServer_Faults(po_TestServer *s, const char *json) {
  CURL *h = curl_easy_init();
  if (!h) return false;
  char url[256], auth[128];
  snprintf(url, sizeof url, "%s/admin/faults", s->url);
  snprintf(auth, sizeof auth, "Authorization: Bearer %s", s->token);
  struct curl_slist *hl = curl_slist_append(NULL, auth);
  hl = curl_slist_append(hl, "Content-Type: application/json");
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, json);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
  CURLcode rc = curl_easy_perform(h);
  long code = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
  curl_slist_free_all(hl);
  curl_easy_cleanup(h);
  return rc == CURLE_OK && code == 200;
}

void po_TestServer_Cleanup(po_TestServer *s) {
  po_TestServer_Stop(s);
  if (!s->dir[0] || getenv("PO_KEEP_TMP")) return;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", s->dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", s->dir);
}
