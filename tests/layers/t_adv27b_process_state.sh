#!/bin/bash
# adv-27b: process_state_objects.py on a product file written to slip past the text scanner
# (process_state.py): each variable below is writable static storage in a spelling the scanner's
# regular expressions did not read (an array bound holding sizeof (T), a static struct defined in
# place, a static made by a macro, a global with no `static`, _Thread_local alone, a declaration
# over two lines). The object files must name every one, and nothing const.
#   t_adv27b_process_state.sh DIR_OF_process_state_objects.py
set -eu
here=$1
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/src/controller/x" "$t/build/controller/x/CMakeFiles/po_x.dir"
cat >"$t/src/controller/x/x.c" <<'C'
typedef struct { char message[64]; } T;
#define COUNTER(n) static int n
const char *bound(void) {
  static char why[sizeof ((T *)0)->message + 8];
  return why;
}
static struct { int a; } g_inplace;
COUNTER(g_macro);
int g_global;
_Thread_local int t_alone;
static long
    g_two_lines;
static const int k_const = 3;
static const char *const k_names[] = {"a", "b"};
void bump(void) { g_inplace.a++, g_macro++, g_global++, t_alone++, g_two_lines++; }
int touch(void) { return g_inplace.a + g_macro + g_global + t_alone + (int)g_two_lines + k_const + (int)*k_names[0]; }
C
cc -std=c11 -O2 -c "$t/src/controller/x/x.c" -o "$t/build/controller/x/CMakeFiles/po_x.dir/x.c.o"
: >"$t/empty.allow"
out=$(/usr/bin/python3 "$here/process_state_objects.py" "$t/build" "$t/src" "$t/empty.allow" || true)
fail=0
for v in why g_inplace g_macro g_global t_alone g_two_lines; do
  grep -q "controller/x/x.c: '$v' is process-wide" <<<"$out" || { echo "FAIL '$v' not refused:"; echo "$out"; fail=1; }
done
for v in k_const k_names; do
  if grep -q "'$v'" <<<"$out"; then echo "FAIL const '$v' refused"; fail=1; fi
done
# Listed, every one passes: the list is what decides.
printf 'controller/x/x.c %s: test\n' why g_inplace g_macro g_global t_alone g_two_lines >"$t/all.allow"
/usr/bin/python3 "$here/process_state_objects.py" "$t/build" "$t/src" "$t/all.allow" >/dev/null || { echo "FAIL all listed, still refused"; fail=1; }
# The text scanner reads at least the bound holding sizeof (it took it for a function).
txt=$(/usr/bin/python3 "$here/process_state.py" "$t/src" "$t/empty.allow" || true)
grep -q "'why' is process-wide" <<<"$txt" || { echo "FAIL process_state.py misses 'why':"; echo "$txt"; fail=1; }
[ $fail = 0 ] && echo "process state objects: 6 hidden variables refused, 2 constants passed"
exit $fail
