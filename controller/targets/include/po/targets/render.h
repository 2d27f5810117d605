/* What `propertyoverride render` (controller/cli/cmd_render.c) gives each mesh's render
 * (po_MeshOps.render), and the helpers the meshes' renders share: the inputs are the objects of
 * the files given, read as the engine's values, with the compiled form of each. */
#ifndef PO_TARGETS_RENDER_H_
#define PO_TARGETS_RENDER_H_

#include <stdbool.h>
#include <stddef.h>

#include "po/engine.h"
#include "po/targets/override.h"

struct json_object;

typedef struct {
  const po_Value *const *objects; /* every input object, in the order read */
  /* per object: its compiled form, `accepted` only for a PropertyOverride that is (a render may
   * set a generation of 0 to 1: what the API server gives a new object) */
  po_CompiledOverride *compiled;
  size_t count;
  /* Says why object i (a PropertyOverride) cannot be rendered: its finding. */
  void (*refuse)(void *ctx, size_t i, const char *why);
  void *ctx;
} po_RenderInputs;

/* metadata.<key> of v when a string, else "". */
const char *po_Render_Meta(const po_Value *v, const char *key);
/* Whether v's kind is `kind` and its apiVersion is `api`, or starts with it when `api` ends with
 * '/' (a group: "gateway.networking.k8s.io/"). */
bool po_Render_IsKind(const po_Value *v, const char *api, const char *kind);

/* One rendered object with the namespace and name it is ordered by. */
typedef struct {
  const char *ns, *name;
  struct json_object *obj;
} po_RenderObject;
/* objs sorted by namespace, then name, appended to out (*no grows); the references move. */
void po_Render_AppendSorted(po_RenderObject *objs, size_t n, struct json_object **out, size_t *no);

#endif
