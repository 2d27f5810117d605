#!/usr/bin/env bash
# adv-27: doc_paths.py on a small project whose documents name wrong paths in each form it let
# pass: a module layout path found in another module (reconcile's README naming src/kube_io.c,
# which only app has), a file named as a folder (a trailing /), a reference-style link to a file
# that is not there, and links whose #anchor is no heading of their target. Each must be a FAIL
# line naming the document and line; the right forms beside them must not be.
#   t_adv27_doc_paths.sh DOC_PATHS_PY
set -u
py=$1 pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" && git init -q .
mkdir -p controller/app/src controller/reconcile/src guide
: >controller/app/src/kube_io.c
: >controller/reconcile/src/reconcile.c
printf '# Design\n\n## The watch loop\n\ntext\n' >guide/design.md
cat >controller/reconcile/README.md <<'MD'
# reconcile

`src/reconcile.c` is ours; `src/kube_io.c` is app's.
MD
cat >README.md <<'MD'
# Project

See `controller/app/src/kube_io.c` and `controller/app/src/kube_io.c/`.
Read [the design][d] and [the loop](guide/design.md#the-watch-loop), not [this](guide/design.md#the-watch).
Also [here](#project) and [there](#no-such-heading).

[d]: guide/missing.md
MD
git add -A
/usr/bin/python3 "$py" "$work" >"$work/out" 2>&1
want_fail=("controller/reconcile/README.md:3: names src/kube_io.c" "README.md:3: names controller/app/src/kube_io.c/"
           "README.md:7: names guide/missing.md" "README.md:4: names guide/design.md#the-watch "
           "README.md:5: names README.md#no-such-heading")
want_ok=("names src/reconcile.c" "names controller/app/src/kube_io.c " "the-watch-loop" "#project")
for w in "${want_fail[@]}"; do
  if grep -qF "FAIL $w" "$work/out"; then pass=$((pass+1)); else echo "FAIL: doc_paths let pass: $w"; fail=$((fail+1)); fi
done
for w in "${want_ok[@]}"; do
  if grep -F "$w" "$work/out" | grep -q FAIL; then echo "FAIL: doc_paths refused a right one: $w"; fail=$((fail+1)); else pass=$((pass+1)); fi
done
[ $fail -eq 0 ] || cat "$work/out"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
