#!/usr/bin/env bash
# adv-25: doc_citations (t_citations.sh) must catch a citation of a document that is not in the
# project in every form a project file writes one. Each case plants one citation in a copy of the
# project's tracked files (no git: the checker's find branch) and expects t_citations.sh to fail.
#   t_adv25_citations.sh [SOURCE_DIR]
set -u
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$src" && git ls-files -z | tar --null -T - -cf -) | (mkdir -p "$work/tree" && cd "$work/tree" && tar -xf -)
pass=0 fail=0
md=.md # the planted names are spelled with it, so this file cites nothing itself
plant() { # NAME FILE TEXT: the checker must fail with TEXT in FILE
  local name=$1 file=$2 text=$3
  printf '%s\n' "$text" >"$work/tree/$file"
  if bash "$src/tests/layers/t_citations.sh" "$work/tree" >"$work/out" 2>&1; then
    echo "FAIL $name: '$text' in $file not reported"; tail -1 "$work/out"; fail=$((fail + 1))
  else
    pass=$((pass + 1))
  fi
  rm -f "$work/tree/$file"
}
# the form the checker was written for: caught today (the control)
plant capitals "docs/adv25$md" "See MISSING-DOC$md for the rules."
# a capitalised document under a folder where it is not (CONTRIBUTING.md is at the root only)
plant capitals_wrong_folder "docs/adv25$md" "See docs/CONTRIBUTING$md for the rules."
# a document in a subfolder of docs/
plant docs_subfolder "docs/adv25$md" "See docs/guides/upgrading$md."
# a Markdown link with a title, and one in angle brackets
plant link_title "docs/adv25$md" 'See [the guide](upgrading.md "Upgrading").'
plant link_angle "docs/adv25$md" 'See [the guide](<upgrading guide.md>).'
# a reference-style link definition
plant link_reference "docs/adv25$md" $'See [the guide].\n\n[the guide]: upgrading.md'
# the design document cited as issue 25 found it, in other spellings
plant design_section_sign engine/src/adv25.c '/* DESIGN'' §4: one concern per file */'
plant design_mixed_case engine/src/adv25.c "/* as Design$md section 4 says */"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
