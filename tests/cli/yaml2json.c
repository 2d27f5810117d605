/* cli_yaml2json FILE: a YAML stream as one JSON array of its documents, through the engine's
 * own YAML reader (the one `validate -f` uses), so tests/cli can read `render`'s output back
 * and compare it with jq, without an interpreter. Exit 1 (the reason on stderr) when the text
 * is not YAML. */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "po/engine.h"

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n, f);
    if (n < cap) break;
    char *bigger = realloc(buf, cap * 2);
    if (!bigger) free(buf);
    buf = bigger;
    cap *= 2;
  }
  int bad = ferror(f);
  fclose(f);
  if (bad) return free(buf), NULL;
  *len = n;
  return buf;
}

int main(int argc, char **argv) {
  if (argc != 2) return fputs("usage: cli_yaml2json FILE\n", stderr), 2;
  size_t len = 0;
  char *text = slurp(argv[1], &len);
  if (!text) return perror(argv[1]), 2;
  po_Arena *a = po_Arena_New();
  po_Status st;
  po_Status_Clear(&st);
  po_Value **docs = NULL;
  size_t count = 0;
  int rc = 1;
  if (a && po_Value_ParseYaml(text, len, a, &docs, &count, &st)) {
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < count; i++) json_object_array_add(list, po_Value_ToJsonC(docs[i]));
    puts(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(list);
    rc = 0;
  } else {
    fprintf(stderr, "%s: %s\n", argv[1], a ? st.message : "out of memory");
  }
  po_Arena_Free(a);
  free(text);
  return rc;
}
