/* Build-time tool: turns a binary file into a C array, so the descriptor set is part of the
 * library and needs no file at run time.  embed INPUT OUTPUT.c SYMBOL */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: embed INPUT OUTPUT.c SYMBOL\n");
    return 2;
  }
  FILE *in = fopen(argv[1], "rb");
  if (!in) { perror(argv[1]); return 1; }
  FILE *out = fopen(argv[2], "w");
  if (!out) { perror(argv[2]); return 1; }
  fprintf(out, "/* Generated from %s by embed; do not edit. */\n#include <stddef.h>\n", argv[1]);
  fprintf(out, "const unsigned char %s[] = {\n", argv[3]);
  size_t n = 0;
  int c;
  while ((c = fgetc(in)) != EOF) {
    fprintf(out, "%d,%s", c, (++n % 24) ? "" : "\n");
  }
  fprintf(out, "0};\nconst size_t %s_size = %zu;\n", argv[3], n);
  if (ferror(in) || fclose(out) != 0) { perror("embed"); return 1; }
  fclose(in);
  return 0;
}
