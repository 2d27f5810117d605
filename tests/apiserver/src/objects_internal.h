/* Shared between objects.c (writes), read.c (get/list) and patchop.c (patch verbs). */
#ifndef PO_APISERVER_OBJECTS_INTERNAL_H
#define PO_APISERVER_OBJECTS_INTERNAL_H

#include "apiserver.h"

enum { kPo_As_OpCreate, kPo_As_OpUpdate, kPo_As_OpDelete };

typedef struct po_As_WriteCtx po_As_WriteCtx;
struct po_As_WriteCtx {
  po_As_Request *q;
  const char *name;
  json_object *body; /* parsed request body (borrowed) */
  int op;
  bool noop;
  po_As_Reply warn; /* only warnings used */
  /* Lock held: compute the new object from cur (NULL if missing). false = r filled. *next NULL
   * with true means "remove the object" (delete without finalizers). */
  bool (*compute)(po_As_WriteCtx *w, json_object *cur, json_object **next, po_As_Reply *r);
};

void po_As_ResName(const po_As_Resource *res, char *out, size_t outsz);
void po_As_NotFound(po_As_Reply *r, const po_As_Resource *res, const char *name);
bool po_As_PrepareNew(po_As_Resource *res, json_object *obj, const char *ns, po_As_Reply *r);
bool po_As_FinishUpdate(po_As_WriteCtx *w, json_object *cur, json_object *body, json_object **next, po_As_Reply *r);
void po_As_CheckNoop(po_As_WriteCtx *w, json_object *cur, json_object *next);
bool po_As_ComputePatch(po_As_WriteCtx *w, json_object *cur, json_object **next, po_As_Reply *r);
void po_As_Read_Get(po_As_Request *q, po_As_Reply *r);
void po_As_Read_List(po_As_Request *q, po_As_Reply *r);

#endif
