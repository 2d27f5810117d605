/* Cases set aside by name: where the oracle's go-control-plane version and our embedded snapshot
 * differ in a rule (set_aside.c lists each with its reason). */
#ifndef PO_TESTS_ENVOYRULES_SET_ASIDE_H_
#define PO_TESTS_ENVOYRULES_SET_ASIDE_H_

#include "diff.h"

/* Why the case is set aside, or NULL; `oracle_refuses`: Envoy's validators refuse what the
 * patch answers for. */
const char *po_Diff_SetAside(const po_DiffCase *c, bool oracle_refuses);

/* The fields whose rules set_aside.c says differ between the versions: how many, the i-th's full
 * name, and the index of `field` (a full name) among them or -1. */
size_t po_Diff_RuleDiffersCount(void);
const char *po_Diff_RuleDiffersField(size_t i);
long po_Diff_RuleDiffersIndex(const char *field);

/* set_aside.c names message.field (field NULL: any field of `message`) as only our snapshot's. */
bool po_Diff_OnlyOurs(const char *message, const char *field);

#endif
