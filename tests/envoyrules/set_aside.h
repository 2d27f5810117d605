/* Cases set aside by name: what Envoy's C++ checks beyond its Go validators (set_aside.c lists
 * each with its reason). */
#ifndef PO_TESTS_ENVOYRULES_SET_ASIDE_H_
#define PO_TESTS_ENVOYRULES_SET_ASIDE_H_

#include "diff.h"

/* Why the case is set aside, or NULL; `oracle_refuses`: Envoy's validators refuse what the
 * patch answers for. */
const char *po_Diff_SetAside(const po_DiffCase *c, bool oracle_refuses);

#endif
