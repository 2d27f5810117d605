#!/usr/bin/env bash
# Every document a project file cites is in the project (issue 25: files cited DESIGN.md and
# STYLE.md, which were never part of it, and docs/cli.md, which does not exist). Checked in every
# tracked file (fetched dependencies and build trees are not the project's):
#   - a document named in capitals (DESIGN.md, CONTRIBUTING.md) exists somewhere in the project;
#   - a capitalised name followed by "section" (DESIGN section 4) is such a document too;
#   - a docs/NAME.md path exists;
#   - a Markdown link to a .md file, relative to the file that has it, exists.
#   t_citations.sh [SOURCE_DIR]
set -u
cd "${1:-$(dirname "$0")/../..}" || exit 2
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files() { git ls-files -co --exclude-standard; }
else
  files() { find . -path ./.git -prune -o -path ./.deps -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||'; }
fi
# this file names the citations it looks for as examples
list() { files | grep -vxF tests/layers/t_citations.sh; }
declare -A have
while IFS= read -r f; do [ -f "$f" ] && have[${f##*/}]=1; done < <(list)
fail=0 checked=0
bad() { echo "FAIL $1: cites $2, which is not in the project"; fail=$((fail + 1)); }
# file:line:reference, one grep over every text file (-I skips binary ones)
while IFS= read -r hit; do
  f=${hit%%:*} rest=${hit#*:}
  line=${rest%%:*} ref=${rest#*:}
  ref=${ref#"${ref%%[A-Za-z]*}"} # what the pattern took before the name
  checked=$((checked + 1))
  case "$ref" in
    docs/*) [ -f "$ref" ] || bad "$f:$line" "$ref" ;;
    *' section'*) n=${ref%% section*}.md; [ -n "${have[$n]:-}" ] || bad "$f:$line" "\"$ref\" ($n)" ;;
    *) [ -n "${have[$ref]:-}" ] || bad "$f:$line" "$ref" ;;
  esac
done < <(list | tr '\n' '\0' | xargs -0 grep -IHnoE '\b[A-Z][A-Z0-9_-]{2,}\.md\b|\b[A-Z]{4,} sections?\b|(^|[^A-Za-z0-9_./-])docs/[a-z0-9._-]+\.md' 2>/dev/null)
# Markdown links to .md files, relative to the linking file
while IFS= read -r hit; do
  f=${hit%%:*} rest=${hit#*:}
  line=${rest%%:*} t=${rest#*:}
  t=${t#](} t=${t%)} t=${t%%#*}
  checked=$((checked + 1))
  [ -e "$(dirname "$f")/$t" ] || bad "$f:$line" "$t (a link)"
done < <(list | grep '\.md$' | tr '\n' '\0' | xargs -0 grep -HnoE '\]\([^):#]+\.md(#[^)]*)?\)' 2>/dev/null)
echo "$checked citations checked, $fail of documents not in the project"
[ "$checked" -gt 100 ] || { echo "FAIL: only $checked citations found: the scan is broken"; exit 1; }
[ "$fail" = 0 ]
