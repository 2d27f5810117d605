/* Compares po_FormatGoFloatV with Go's fmt %v: reads "HEX<TAB>TEXT" lines (a float64's bits and
 * what Go printed for it, from the go-fmt oracle) and prints every disagreement.
 *   go_float_v FILE   exit 0 when all agree, 1 otherwise; the last line counts them */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiled.h"

int main(int argc, char **argv) {
  FILE *in = argc > 1 ? fopen(argv[1], "r") : NULL;
  if (!in) {
    fprintf(stderr, "usage: go_float_v FILE (HEX<TAB>TEXT lines)\n");
    return 2;
  }
  char line[256], ours[64];
  long cases = 0, bad = 0;
  while (fgets(line, sizeof line, in)) {
    line[strcspn(line, "\n")] = '\0';
    char *tab = strchr(line, '\t');
    if (!tab) continue;
    *tab = '\0';
    uint64_t bits = strtoull(line, NULL, 16);
    double d;
    memcpy(&d, &bits, sizeof d);
    po_FormatGoFloatV(d, ours, sizeof ours);
    cases++;
    if (strcmp(ours, tab + 1) != 0) {
      if (bad < 50) printf("DIFF %s: Go %s, ours %s\n", line, tab + 1, ours);
      bad++;
    }
  }
  fclose(in);
  printf("%ld cases, %ld disagreements\n", cases, bad);
  return cases > 0 && bad == 0 ? 0 : 1;
}
