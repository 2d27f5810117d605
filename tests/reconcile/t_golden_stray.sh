#!/usr/bin/env bash
# adv-27: test_reconcile_golden reads every entry of golden/<mesh>/: a copy of golden/ passes, and
# the same copy with one stray entry in a mesh's folder fails naming it (an .out.yaml whose
# .in.yaml is gone: a case renamed or deleted, its answer left behind; a file of another name).
#   t_golden_stray.sh TEST_BINARY GOLDEN_DIR
bin=$1 golden=$2 pass=0 fail=0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$golden" "$work/golden"
if "$bin" "$work/golden" >"$work/log" 2>&1; then pass=$((pass+1)); else echo "FAIL: a copy of golden/ fails:"; tail -20 "$work/log"; fail=$((fail+1)); fi
for mesh in consul istio envoygateway; do
  first=$(ls "$work/golden/$mesh" | grep '\.out\.yaml$' | head -1)
  for stray in "renamed-away.out.yaml" "notes.txt"; do
    cp "$work/golden/$mesh/$first" "$work/golden/$mesh/$stray"
    if "$bin" "$work/golden" >"$work/log" 2>&1; then
      echo "FAIL $mesh/$stray: test_reconcile_golden passed with it in the folder"; fail=$((fail+1))
    elif ! grep -q "$mesh/$stray" "$work/log"; then
      echo "FAIL $mesh/$stray: failed without naming it:"; grep -m3 -i "fail\|error" "$work/log"; fail=$((fail+1))
    else
      pass=$((pass+1))
    fi
    rm "$work/golden/$mesh/$stray"
  done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
