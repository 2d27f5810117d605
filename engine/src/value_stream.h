/* The parts of po_Value_StreamYaml/Json (engine.h) the two readers share: arenas whose blocks are
 * counted (po_StreamStats.peak_bytes) and the hand-over of objects to the caller (value.c). */
#ifndef PO_ENGINE_VALUE_STREAM_H_
#define PO_ENGINE_VALUE_STREAM_H_

#include "internal.h"

typedef struct {
  upb_alloc alloc;            /* first: upb calls back with a pointer to it */
  const po_ValueStream *s;
  size_t live, peak;          /* bytes of the blocks the reader's arenas hold */
  size_t objects;             /* handed over so far */
  bool failed;                /* memory ran out in one of its arenas (po_Engine_OutOfMemory) */
} po_StreamCtx;

void po_StreamCtx_Init(po_StreamCtx *c, const po_ValueStream *s);
/* An arena whose blocks are counted in c; freed with po_Arena_Free. NULL when out of memory. */
po_Arena *po_StreamCtx_Arena(po_StreamCtx *c);
/* Hands one object over, with a fresh counted arena for the callback's own allocations. */
bool po_StreamCtx_Object(po_StreamCtx *c, int doc, long item, const po_Value *v, po_Status *st);
/* A whole document: item by item when it is a map that is_list accepts and whose `items` is a
 * list, else as one object. */
bool po_StreamCtx_Document(po_StreamCtx *c, int doc, const po_Value *v, po_Status *st);
bool po_StreamCtx_Retract(po_StreamCtx *c, int doc, po_Status *st);

#endif
