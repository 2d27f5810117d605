/* Friendly Duration strings (po_Duration_Parse, engine/src/friendly.c), exactly: the protobuf
 * JSON form "N.NNNs" as Go's protojson parses it (seconds and nanos from the digits), every other
 * form as Go's time.ParseDuration computes it (its float64 fraction, truncated). Issue 9's
 * adversarial cases: precision at protobuf's bound, protojson's grammar, Go's rounding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "compiled.h"

typedef struct {
  const char *in;
  int want; /* 0 not a duration, 1 parsed, 2 beyond int64 seconds */
  int64_t secs;
  int32_t nanos;
} Row;

static const Row kRows[] = {
    /* protojson's form: exact digits */
    {"315576000000.999999999s", 1, 315576000000, 999999999},
    {"99999999999.999999999s", 1, 99999999999, 999999999},
    {"315576000001s", 1, 315576000001, 0}, /* parsed; validation says out of range */
    {"-315576000000.999999999s", 1, -315576000000, -999999999},
    {"1.5s", 1, 1, 500000000},
    {"1.000000001s", 1, 1, 1},
    {"-0.5s", 1, 0, -500000000},
    {"+5s", 1, 5, 0},
    {".5s", 1, 0, 500000000},
    {"5.s", 1, 5, 0},
    {"0s", 1, 0, 0},
    {"0.000000001s", 1, 0, 1},
    {"9223372036854775807s", 1, INT64_MAX, 0},
    {"9223372036854775808s", 2, 0, 0},
    {"99999999999999999999999s", 2, 0, 0},
    {"s", 0, 0, 0},
    {"-s", 0, 0, 0},
    {"+s", 0, 0, 0},
    {"01s", 0, 0, 0},
    {"00.5s", 0, 0, 0},
    {"1.0000000000s", 0, 0, 0}, /* a tenth fraction digit, even a zero */
    {"1..5s", 0, 0, 0},
    {"--1s", 0, 0, 0},
    {"1e3s", 0, 0, 0},
    {"0x10s", 0, 0, 0},
    /* Go's time.ParseDuration */
    {"250ms", 1, 0, 250000000},
    {"1h30m", 1, 5400, 0},
    {"1.5h", 1, 5400, 0},
    {"1m30.5s", 1, 90, 500000000},
    {"2us", 1, 0, 2000},
    {"2\xc2\xb5s", 1, 0, 2000},
    {"2\xce\xbcs", 1, 0, 2000},
    {"1.5ns", 1, 0, 1},   /* Go truncates the fraction */
    {"-1.5ns", 1, 0, -1},
    {"1.9999999999us", 1, 0, 1999}, /* 1000 + uint64(9999999999 * (1000 / 1e10)) = 1000 + 999 */
    {"0", 1, 0, 0},
    {"-0", 1, 0, 0},
    {"+0", 1, 0, 0},
    {"3000000h", 1, 10800000000, 0}, /* beyond Go's 2^63 ns, within int64 seconds */
    {"5", 0, 0, 0},
    {"5x", 0, 0, 0},
    {"1h-5m", 0, 0, 0},
    {".ms", 0, 0, 0},
    {"", 0, 0, 0},
    {"-", 0, 0, 0},
    {"99999999999999999999h", 2, 0, 0},
};

static void test_duration_rows(void **state) {
  (void)state;
  int failed = 0;
  for (size_t i = 0; i < sizeof kRows / sizeof *kRows; i++) {
    const Row *r = &kRows[i];
    int64_t secs = -7;
    int32_t nanos = -7;
    int got = po_Duration_Parse(r->in, &secs, &nanos);
    if (got != r->want || (got == 1 && (secs != r->secs || nanos != r->nanos))) {
      failed++;
      fprintf(stderr, "\"%s\": %d %lld %d, want %d %lld %d\n", r->in, got, (long long)secs, nanos, r->want,
              (long long)r->secs, r->nanos);
    }
  }
  assert_int_equal(failed, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_duration_rows)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
