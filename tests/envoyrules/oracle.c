/* Asking the oracle (tests/oracles/envoy-validate): one process for every case of a run, its
 * input and output through temporary files (no pipe deadlock, no shell), each answer a JSON line. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diff.h"

static FILE *temp_file(char *name, size_t size, const char *what) {
  const char *dir = getenv("TMPDIR");
  snprintf(name, size, "%s/envoy-rules-%s-XXXXXX", dir && *dir ? dir : "/tmp", what);
  int fd = mkstemp(name);
  return fd < 0 ? NULL : fdopen(fd, "w+");
}

static bool run(const char *oracle, FILE *in, FILE *out) {
  fflush(in);
  rewind(in);
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    dup2(fileno(in), 0);
    dup2(fileno(out), 1);
    execl(oracle, oracle, (char *)NULL);
    fprintf(stderr, "envoy-rules: cannot run %s: %s\n", oracle, strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "envoy-rules: the oracle %s failed (status %d)\n", oracle, status);
    return false;
  }
  rewind(out);
  return true;
}

static bool judgement(const char *line, po_Arena *a, po_DiffJudgement *j) {
  *j = (po_DiffJudgement){0};
  json_object *o = json_tokener_parse(line);
  if (!o) return false;
  json_object *err = NULL, *vs = NULL;
  if (json_object_object_get_ex(o, "error", &err)) {
    const char *s = json_object_get_string(err);
    j->error = po_Arena_Strndup(a, s, strlen(s));
  }
  if (json_object_object_get_ex(o, "violations", &vs) && json_object_is_type(vs, json_type_array)) {
    j->n = json_object_array_length(vs);
    j->v = po_Arena_Malloc(a, (j->n + 1) * sizeof *j->v);
    for (size_t i = 0; j->v && i < j->n; i++) {
      json_object *v = json_object_array_get_idx(vs, i), *p = NULL, *r = NULL;
      json_object_object_get_ex(v, "path", &p);
      json_object_object_get_ex(v, "reason", &r);
      const char *ps = p ? json_object_get_string(p) : "", *rs = r ? json_object_get_string(r) : "";
      j->v[i] = (po_DiffViolation){po_Arena_Strndup(a, ps, strlen(ps)), po_Arena_Strndup(a, rs, strlen(rs))};
    }
  }
  json_object_put(o);
  return j->n == 0 || j->v;
}

bool po_DiffOracle_RunRaw(const char *oracle, const char *const *lines, size_t n, po_Arena *a, const char **out) {
  char in_name[4096], out_name[4096];
  FILE *in = temp_file(in_name, sizeof in_name, "in"), *res = in ? temp_file(out_name, sizeof out_name, "out") : NULL;
  bool ok = in && res;
  for (size_t i = 0; ok && i < n; i++) ok = fputs(lines[i], in) >= 0 && fputc('\n', in) != EOF;
  ok = ok && run(oracle, in, res);
  char *line = NULL;
  size_t cap = 0, got = 0;
  ssize_t len;
  while (ok && got < n && (len = getline(&line, &cap, res)) >= 0) {
    ok = (out[got++] = po_Arena_Strndup(a, line, (size_t)len)) != NULL;
  }
  if (ok && got != n) {
    fprintf(stderr, "envoy-rules: the oracle answered %zu cases of %zu\n", got, n);
    ok = false;
  }
  free(line);
  if (in) fclose(in), unlink(in_name);
  if (res) fclose(res), unlink(out_name);
  return ok;
}

bool po_DiffOracle_Run(const char *oracle, const char *const *lines, size_t n, po_Arena *a, po_DiffJudgement *out) {
  const char **raw = calloc(n + 1, sizeof *raw);
  bool ok = raw && po_DiffOracle_RunRaw(oracle, lines, n, a, raw);
  for (size_t i = 0; ok && i < n; i++) {
    ok = judgement(raw[i], a, &out[i]);
    if (!ok) fprintf(stderr, "envoy-rules: the oracle's answer %zu is not one: %s\n", i + 1, raw[i]);
  }
  free(raw);
  return ok;
}

bool po_Diff_Affects(const char *patch_path, const char *violation_path) {
  /* Consul drops every leading '/' of a path */
  while (*patch_path == '/') patch_path++;
  const char *v = violation_path;
  if (*v != '/') return false;
  v++;
  size_t pl = strlen(patch_path), vl = strlen(v);
  if (vl == pl) return !strcmp(v, patch_path);
  if (vl < pl) return !strncmp(v, patch_path, vl) && patch_path[vl] == '/'; /* a field on the path */
  return !strncmp(v, patch_path, pl) && v[pl] == '/';                        /* inside the value */
}
