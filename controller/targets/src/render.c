/* The helpers the meshes' renders share (render.h). */
#include "po/targets/render.h"

#include <stdlib.h>
#include <string.h>

const char *po_Render_Meta(const po_Value *v, const char *key) {
  const po_Value *x = po_Value_Get(po_Value_Get(v, "metadata"), key);
  return po_Value_Kind(x) == kPo_ValueKind_String ? po_Value_String(x, NULL) : "";
}

static const char *str(const po_Value *v, const char *key) {
  const po_Value *x = po_Value_Get(v, key);
  return po_Value_Kind(x) == kPo_ValueKind_String ? po_Value_String(x, NULL) : "";
}

bool po_Render_IsKind(const po_Value *v, const char *api, const char *kind) {
  size_t n = strlen(api);
  const char *a = str(v, "apiVersion");
  bool api_ok = n && api[n - 1] == '/' ? !strncmp(a, api, n) : !strcmp(a, api);
  return api_ok && !strcmp(str(v, "kind"), kind);
}

static int by_name(const void *x, const void *y) {
  const po_RenderObject *a = x, *b = y;
  int c = strcmp(a->ns, b->ns);
  return c ? c : strcmp(a->name, b->name);
}

void po_Render_AppendSorted(po_RenderObject *objs, size_t n, struct json_object **out, size_t *no) {
  if (n) qsort(objs, n, sizeof *objs, by_name);
  for (size_t k = 0; k < n; k++) out[(*no)++] = objs[k].obj;
}
