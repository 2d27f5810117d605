/* egpatch_cases: our side of the Envoy Gateway oracle test (t_egpatch.sh runs it, then the
 * oracle, then tally.py). Replays every corpus file, then generates PropertyOverrides from a
 * seed; for each writes the oracle's line (cases) and what we did (meta).
 *
 *   egpatch_cases FIXTURES_DIR CORPUS_DIR CASES_OUT META_OUT
 *   PO_EGPATCH_SEED   the seed (default: the time); printed on stderr
 *   PO_EGPATCH_CASES  how many to generate (default 3000)
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* scandir */
#endif
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"
#include "ours.h"

static struct json_object *load(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  struct json_object *o = json_object_from_file(path);
  if (!o) fprintf(stderr, "egpatch_cases: cannot read %s: %s\n", path, json_util_get_last_err());
  return o;
}

static int by_name(const struct dirent **x, const struct dirent **y) { return strcmp((*x)->d_name, (*y)->d_name); }

static int json_files(const struct dirent *e) {
  size_t n = strlen(e->d_name);
  return n > 5 && strcmp(e->d_name + n - 5, ".json") == 0;
}

/* Every corpus file, in name order: {"class", "note", "patches"}. -1 when one is unreadable. */
static long replay(const po_EgWorld *w, const char *dir, FILE *cases, FILE *meta) {
  struct dirent **names = NULL;
  int n = scandir(dir, &names, json_files, by_name);
  if (n < 0) {
    fprintf(stderr, "egpatch_cases: cannot list %s\n", dir);
    return -1;
  }
  long done = 0;
  for (int i = 0; i < n; i++) {
    struct json_object *file = load(dir, names[i]->d_name), *patches = NULL;
    po_Arena *a = po_Arena_New();
    char id[600];
    snprintf(id, sizeof(id), "corpus/%s", names[i]->d_name);
    if (!file || !json_object_object_get_ex(file, "patches", &patches) || !a ||
        !po_EgCase_Run(w, id, patches, cases, meta, a)) {
      fprintf(stderr, "egpatch_cases: corpus file %s/%s: unreadable, no patches, or out of memory\n", dir, id + 7);
      done = -1;
    } else if (done >= 0) {
      done++;
    }
    po_Arena_Free(a);
    json_object_put(file);
    free(names[i]);
  }
  free(names);
  return done;
}

static bool generate(const po_EgWorld *w, uint64_t seed, long count, FILE *cases, FILE *meta) {
  po_EgRng r = {.state = seed};
  for (long i = 0; i < count; i++) {
    po_Arena *a = po_Arena_New();
    char id[64];
    snprintf(id, sizeof(id), "seed/%llu/%ld", (unsigned long long)seed, i);
    struct json_object *patches = a ? po_EgGen_Patches(&r, a) : NULL;
    bool ok = patches && po_EgCase_Run(w, id, patches, cases, meta, a);
    json_object_put(patches);
    po_Arena_Free(a);
    if (!ok) {
      fprintf(stderr, "egpatch_cases: out of memory at case %s\n", id);
      return false;
    }
  }
  return true;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: egpatch_cases FIXTURES_DIR CORPUS_DIR CASES_OUT META_OUT\n");
    return 2;
  }
  const char *s = getenv("PO_EGPATCH_SEED"), *n = getenv("PO_EGPATCH_CASES");
  uint64_t seed = s && *s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
  long count = n && *n ? strtol(n, NULL, 10) : 3000;
  po_EnvoyApi_LoadOnDemand();
  po_EgWorld w = {load(argv[1], "gateway.json"), load(argv[1], "httproute.json"), load(argv[1], "resources.json")};
  FILE *cases = fopen(argv[3], "w"), *meta = fopen(argv[4], "w");
  if (!w.gateway || !w.route || !w.resources || !cases || !meta) {
    fprintf(stderr, "egpatch_cases: cannot read the fixtures or write the outputs\n");
    return 2;
  }
  if (!po_EgOracle_Release()) {
    fprintf(stderr, "egpatch_cases: Envoy Gateway's release table has no 1.9, the release the oracle runs\n");
    return 2;
  }
  fprintf(stderr,
          "egpatch_cases: seed %llu (PO_EGPATCH_SEED=%llu replays it), %ld generated cases, judged as for Envoy "
          "Gateway %s (Envoy API snapshot %s)\n",
          (unsigned long long)seed, (unsigned long long)seed, count, po_EgOracle_Release()->release,
          po_EnvoyApi_Version(po_EgOracle_Api()));
  long replayed = replay(&w, argv[2], cases, meta);
  bool ok = replayed >= 0 && generate(&w, seed, count, cases, meta);
  fprintf(stderr, "egpatch_cases: %ld corpus cases replayed\n", replayed);
  if (fclose(cases) != 0 || fclose(meta) != 0) ok = false;
  json_object_put(w.gateway);
  json_object_put(w.route);
  json_object_put(w.resources);
  return ok ? 0 : 2;
}
