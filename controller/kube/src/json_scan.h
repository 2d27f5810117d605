/* Scans of JSON text the parser has already accepted, without building a tree: only the levels
 * asked for are walked, every other value is skipped by bracket depth and string quotes (one pass
 * over the bytes, no allocation). Anything unexpected gives up (false / NULL), and the caller
 * then does the slow thing (serialises the tree, keeps the bytes as they are). */
#ifndef PO_KUBE_JSON_SCAN_H
#define PO_KUBE_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* s at a value: past it, NULL when it does not end before `end`. */
const char *po_JsonScan_SkipValue_(const char *s, const char *end);

/* The value of the last member `key` of the object that is the whole of s[0..n) (the last: json-c
 * keeps the last of duplicate keys). false when there is none, the text is not an object, or a key
 * holds an escape (it might spell `key`). */
bool po_JsonScan_Member_(const char *s, size_t n, const char *key, const char **value, size_t *value_len);
/* The first member `key`, the walk ending there: for text the API server wrote (an answer), which
 * holds each key once, where not walking on saves a pass over what follows (a target's spec after
 * its metadata). */
bool po_JsonScan_MemberFirst_(const char *s, size_t n, const char *key, const char **value, size_t *value_len);

/* A scanned value (value, n as po_JsonScan_Member_ gives them) that is a string without escapes
 * and shorter than size, copied into buf NUL-terminated; false otherwise (buf then ""). */
bool po_JsonScan_PlainString_(const char *value, size_t n, char *buf, size_t size);

/* Where metadata.managedFields is in an object's text: [*at, *at + *len) is the member with the
 * comma that joins it to a neighbour, so the text without those bytes is the object without it.
 * false when there is none (or an escaped key in the way: the caller then keeps the text whole). */
bool po_JsonScan_ManagedFields_(const char *s, size_t n, size_t *at, size_t *len);
/* The same in the first metadata's first managedFields, the walk ending there: for bytes about to
 * be parsed and cached without it (a list item), where it saves a pass over spec and status (the
 * API server writes metadata first). A duplicate key is the server's error: the bytes cut are
 * not kept either way. */
bool po_JsonScan_ManagedFieldsFirst_(const char *s, size_t n, size_t *at, size_t *len);

/* The elements of an array one at a time, for text not yet accepted (a list page's items, each
 * then parsed on its own): *at starts at the array's '[' with index 0, and each call passes the
 * number of elements given so far. 1: [*value, *value + *len) is the next element and *at is
 * past it; 0: the array ended (*at past its ']'); -1: not an array as expected (a separator, a
 * bracket or an unterminated value out of place). A span is only told apart by depth and quotes:
 * the element's own parse says whether it is JSON. */
int po_JsonScan_NextElement_(const char **at, const char *end, size_t index, const char **value, size_t *len);

/* A watch event's head, read from its bytes: {"type":..., "object":{..."metadata":{...}...}}. */
typedef struct {
  char type[16];
  const char *object; /* the object's bytes */
  size_t object_len;
  const char *end;    /* past the event's closing brace */
  char ns[254], name[254], uid[128], rv[64];
  int64_t generation; /* 0: absent */
  bool deleting;      /* metadata.deletionTimestamp set */
  /* po_JsonScan_ManagedFields_ of the object, found in the same walk: [managed_at, managed_at +
   * managed_len) of object when managed_cut */
  bool managed_cut;
  size_t managed_at, managed_len;
} po_JsonScanEvent_;

/* The event that starts at s (its first non-space byte) and ends before `end`: its type, where
 * its object is, and the object's namespace, name, uid, resourceVersion, generation and
 * deletion, walking only the event's top level and the object's metadata (the first metadata:
 * the API server writes it before spec and status). false when the bytes are not such an event
 * (incomplete, a string with an escape where these are read, no name or resourceVersion, a
 * generation not a plain count): the caller then parses. The bytes are told apart by brackets
 * and quotes only: a caller that keeps them must know them to be JSON by other means. */
bool po_JsonScan_Event_(const char *s, const char *end, po_JsonScanEvent_ *e);

#endif
