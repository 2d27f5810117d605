/* Private to reconcile: a hash table of records keyed by a string, chained through a node each
 * record embeds (so a record never moves and an insert never allocates). The target index keeps
 * its PropertyOverrides and its targets in two of them: a lookup, an insert and a removal cost
 * the same at 100,000 PropertyOverrides as at 100, where the sorted arrays before moved half the
 * array on every insert and removal (a quadratic total over a burst of creates). The slot is the
 * process-keyed SipHash of the key (json_hash.h): tenants' names cannot be aimed at one chain.
 * Not thread-safe: the index's lock guards it. */
#ifndef PO_RECONCILE_STRTABLE_H_
#define PO_RECONCILE_STRTABLE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct po_StrNode {
  struct po_StrNode *next;
  uint64_t hash;
  const char *key; /* the record's own string, stable while it is in a table */
} po_StrNode;

typedef struct {
  po_StrNode **slots;
  size_t nslots, count;
} po_StrTable;

void po_StrTable_Free(po_StrTable *t); /* the slots only: the records are the caller's */
uint64_t po_StrTable_Hash(const char *key);
po_StrNode *po_StrTable_Find(const po_StrTable *t, const char *key, uint64_t hash);
/* Links n (n->key and n->hash set, key not present). False only when the very first slots
 * cannot be allocated; a table that cannot grow keeps its slots and chains longer. */
bool po_StrTable_Insert(po_StrTable *t, po_StrNode *n);
/* Whether an insert would succeed: a table that has slots. */
bool po_StrTable_Ready(po_StrTable *t);
void po_StrTable_Unlink(po_StrTable *t, po_StrNode *n);
/* Every node, in no particular order; fn must not insert or unlink. */
void po_StrTable_ForEach(const po_StrTable *t, void (*fn)(void *ctx, po_StrNode *n), void *ctx);

#endif
