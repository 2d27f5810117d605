/* AdmissionReview bodies for the webhook's memory tests (test_webhook_cost, test_webhook_load):
 * the largest the limits admit and the shapes that cost json-c the most per byte. */
#ifndef PO_TESTS_WEBHOOK_REVIEWS_H
#define PO_TESTS_WEBHOOK_REVIEWS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
  kReview_Typical,       /* a PropertyOverride of 4 patches (tests/e2e/bench_webhook.c's), ~1.3 KB */
  kReview_Maximal,       /* a ServiceDefaults UPDATE at both limits: 100 entries of 100 patches
                          * each, in object and oldObject (spec changed): 2.6 MB, all judged */
  kReview_MaximalDenied, /* the same with every patch's path misspelt: 10,000 errors */
  kReview_Containers,    /* 99,000 empty JSON objects (just within the webhook's bound) */
  kReview_Scalars,       /* 399,000 one-digit numbers (just within the bound) */
  kReview_Strings,       /* a PropertyOverride whose one patch value is a 2.6 MB string */
  /* One patch whose value holds a list of as many "s" strings, 1.5 numbers or {"a":1} objects as
   * the bounds admit, in an EnvoyFilter, an EnvoyPatchPolicy and a PropertyOverride: the native
   * kinds convert a value again (controller/targets), so their decoding costs the most. */
  kReview_EfStrings,
  kReview_EfNumbers,
  kReview_EfObjects,
  kReview_EppStrings,
  kReview_EppNumbers,
  kReview_EppObjects,
  kReview_PoStrings,
  kReview_PoNumbers,
  kReview_PoObjects,
  kReview_Count
} po_TestReview;

extern const char *const po_kTestReviewNames[kReview_Count];

/* The body (malloc'd, NUL-terminated); *len its length. NULL when out of memory. */
char *po_TestReview_Body(po_TestReview which, size_t *len);

/* Built with AddressSanitizer: resident memory means nothing then (shadow memory, quarantine),
 * so the memory tests skip. */
bool po_TestSanitized(void);

#endif
