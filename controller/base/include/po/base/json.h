/* Reading json-c trees that may hold anything (objects from the API server, AdmissionReviews,
 * users' files), where a missing key, a NULL parent or a wrong type is simply "absent". The one
 * set every controller module uses; the readers never allocate, and returned pointers live as
 * long as the tree. */
#ifndef PO_BASE_JSON_H
#define PO_BASE_JSON_H

#include <json-c/json.h>
#include <stdbool.h>

/* The member k of object o; NULL when o is NULL or not an object, or k is absent. */
json_object *po_Json_Get(const json_object *o, const char *k);
/* The string at key k, or NULL when absent or not a string. */
const char *po_Json_String(const json_object *o, const char *k);
/* The same, with `dflt` for absent. */
const char *po_Json_StringOr(const json_object *o, const char *k, const char *dflt);
/* metadata.k of a Kubernetes object as a string, "" when absent (names, namespaces, uids). */
const char *po_Json_Meta(const json_object *obj, const char *k);

/* Building trees when memory may run out: v (owned, may be NULL from a failed constructor) is
 * added as member k of o, or appended to the array l; false, with v released, when it is NULL
 * or json-c could not add it, so a chain of builders stops at the first failure and leaks nothing. */
bool po_Json_Put(json_object *o, const char *k, json_object *v);
bool po_Json_Append(json_object *l, json_object *v);

#endif
