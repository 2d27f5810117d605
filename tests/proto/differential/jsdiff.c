/* Differential check of the patched JSON decoder (tests/proto/differential/run.sh): records on
 * stdin (4-byte little-endian length, then the text) decoded as argv[1] by po_Json_Decode; one line
 * each: OK <hex of the deterministic binary encoding> or ERR <the exact error>. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "po/schema.h"
#include "upb/arena.h"
#include "upb/encode.h"
#include "upb/reflection.h"
#include "upb/def.h"
int main(int argc, char **argv) {
  po_Status st; po_Status_Clear(&st);
  const po_Schema *s = po_Schema_Get(&st);
  if (!s) { fprintf(stderr, "schema: %s\n", st.message); return 2; }
  const upb_MessageDef *m = po_Schema_FindMessage(s, argv[1]);
  if (!m) { fprintf(stderr, "no type\n"); return 2; }
  /* records on stdin: 4-byte little-endian length, then bytes */
  unsigned char hdr[4];
  while (fread(hdr, 1, 4, stdin) == 4) {
    size_t n = hdr[0] | hdr[1] << 8 | hdr[2] << 16 | (size_t)hdr[3] << 24;
    char *buf = malloc(n ? n : 1);
    if (fread(buf, 1, n, stdin) != n) return 3;
    upb_Arena *a = upb_Arena_New();
    po_Status_Clear(&st);
    upb_Message *msg = po_Json_Decode(s, m, buf, n, a, &st);
    if (!msg) printf("ERR %s\n", st.message);
    else {
      size_t len = 0; char *out = NULL;
      upb_EncodeStatus es = upb_Encode(msg, upb_MessageDef_MiniTable(m), kUpb_EncodeOption_Deterministic, a, &out, &len);
      if (es) printf("ENCERR %d\n", (int)es);
      else { printf("OK "); for (size_t i = 0; i < len; i++) printf("%02x", (unsigned char)out[i]); printf("\n"); }
    }
    upb_Arena_Free(a); free(buf);
  }
  return 0;
}
