/* Seeded generated cases, for the tests that draw them: splitmix64 (one 64-bit state; any seed,
 * 0 too, gives the same full-period sequence on every platform), a draw below n, and the seed a
 * run uses: the named environment variable's value when set (a replay), else the default given
 * (the clock, for a new sequence each run). Each test prints the seed it ran with. */
#ifndef PO_TESTS_SEEDED_H_
#define PO_TESTS_SEEDED_H_

#include <stdint.h>
#include <stdlib.h>

static inline uint64_t po_Seeded_Next(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline unsigned po_Seeded_Pick(uint64_t *state, unsigned n) { return (unsigned)(po_Seeded_Next(state) % n); }

static inline uint64_t po_Seeded_Env(const char *name, uint64_t dflt) {
  const char *v = getenv(name);
  return v && *v ? strtoull(v, NULL, 10) : dflt;
}

#endif
