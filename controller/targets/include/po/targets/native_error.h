/* Private to targets: a decode error of a hand-written native value (istio_native.c,
 * eg_native.c) located by the field it is about instead of a line of a text the user never saw. */
#ifndef PO_TARGETS_NATIVE_ERROR_H_
#define PO_TARGETS_NATIVE_ERROR_H_

#include "po/engine.h"
#include "po/targets/mesh_ops.h"

/* `message` is po_Message_ParseJson's error for po_Value_ToPrettyJson(v): upb's "Error parsing
 * JSON @L:C: what" counts lines and columns of that indented text. Returns, in `a`, the RFC 6901
 * pointer (relative to v, "" for v itself) of the member or item on line L, and sets *what to
 * the text after "@L:C: " (the decoder's own words, e.g. "No such field: x", "Expected
 * string"). NULL (and *what NULL) when the message has no position or out of memory: then the
 * message is to be shown as it is. */
const char *po_Native_ErrorPointer(const po_Value *v, const char *message, po_Arena *a, const char **what);

/* For `what` of po_Native_ErrorPointer when it is the decoder's "No such field: F" at `pointer`
 * (F's own member in `doc`, a document of message `msg`): " (" the hint of
 * po_Hint_FieldOfOtherApis ")" — which other snapshots have F on the message it was looked for in
 * (inside an Any, its `@type`'s), and which of j's releases accept it — to append to the error,
 * as a PropertyOverride's unknown field gets it; "" when no other snapshot has it or `what` is
 * another error; NULL when out of memory. */
const char *po_Native_UnknownFieldHint(const po_NativeJudge *j, const char *msg, const po_Value *doc,
                                       const char *pointer, const char *what, po_Arena *a);

#endif
