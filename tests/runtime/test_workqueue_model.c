/* Random operation sequences (fixed seeds) checked against the workqueue model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "workqueue_model.h"

static uint64_t next(uint64_t *s) { /* splitmix64: deterministic across platforms */
  uint64_t z = (*s += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static void random_sequences_match_the_model(void **state) {
  uint8_t ops[600];
  for (uint64_t seed = 1; seed <= 400; seed++) {
    uint64_t s = seed;
    for (size_t i = 0; i < sizeof ops; i++) ops[i] = (uint8_t)next(&s);
    /* Every 50th sequence ends with a shutdown in the middle. */
    if (seed % 50 == 0) {
      ops[300] = 8;
      ops[301] = 0xff;
    }
    assert_int_equal(po_WorkqueueModel_Run(ops, sizeof ops), 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(random_sequences_match_the_model)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
