#!/usr/bin/env bash
# Every document a project file cites is in the project (issue 25: files cited a design note and a
# style note that were never part of it, and docs/cli.md, which does not exist). Checked in every
# tracked file (fetched dependencies and build trees are not the project's):
#   - a document named with a capital (NOTES.md, Notes.md, CONTRIBUTING.md) exists somewhere
#     in the project; written in a folder of the project (docs/CONTRIBUTING.md, ../ARCHITECTURE.md)
#     it exists there, from the project's root or from the citing file's folder;
#   - a capitalised name followed by "section" or "§" (NOTES section 4, NOTES §4) is such a
#     document too;
#   - a docs/...md path (docs/NAME.md, docs/guides/NAME.md) exists;
#   - a Markdown link to a .md file, relative to the file that has it, exists: inline, with a
#     title or in angle brackets ([t](a.md "T"), [t](<a b.md>)), or a reference definition
#     ([t]: a.md). URLs (scheme://) are not the project's.
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
# FILE PATH: the cited path exists from the project's root or from FILE's folder
exists_from() { [ -e "$2" ] || [ -e "$(dirname "$1")/$2" ]; }
# file:line:reference, one grep over every text file (-I skips binary ones)
while IFS= read -r hit; do
  f=${hit%%:*} rest=${hit#*:}
  line=${rest%%:*} ref=${rest#*:}
  case "$ref" in *://*) continue ;; esac # a URL: another project's document
  ref=${ref#"${ref%%[A-Za-z.]*}"} # what the pattern took before the name
  checked=$((checked + 1))
  case "$ref" in
    *' section'* | *' §'*) n=${ref%% *}; n=${n%.md}.md; [ -n "${have[$n]:-}" ] || bad "$f:$line" "\"$ref\" ($n)" ;;
    */*) # a path in a folder of the project must be there; one elsewhere (a shell variable's
      # folder, a listing's) is checked as the bare name it ends in
      if exists_from "$f" "${ref%%/*}"; then exists_from "$f" "$ref" || bad "$f:$line" "$ref"
      else [ -n "${have[${ref##*/}]:-}" ] || bad "$f:$line" "$ref"; fi ;;
    *) [ -n "${have[$ref]:-}" ] || bad "$f:$line" "$ref" ;;
  esac
done < <(list | tr '\n' '\0' | xargs -0 grep -IHnoE \
  '([a-z]+://)?([A-Za-z0-9._-]+/)*[A-Z][A-Za-z0-9_-]{2,}\.md\b( sections?\b| §)?|\b[A-Z]{4,} (sections?\b|§)|(^|[^A-Za-z0-9_./-])docs/[A-Za-z0-9._/-]+\.md' 2>/dev/null)
# Markdown links to .md files, relative to the linking file: inline (a title and angle brackets
# allowed) and reference definitions
while IFS= read -r hit; do
  f=${hit%%:*} rest=${hit#*:}
  line=${rest%%:*} t=${rest#*:}
  case "$t" in
    '['*) t=${t#*]:} t=${t#"${t%%[! ]*}"} ;; # [label]: target
    *) t=${t#](} t=${t%)} ;;
  esac
  case "$t" in
    '<'*) t=${t#<} t=${t%%>*} ;;
    *) t=${t%% *} ;; # a title follows the target after a space
  esac
  t=${t%%#*}
  case "$t" in *://*) continue ;; esac
  checked=$((checked + 1))
  [ -e "$(dirname "$f")/$t" ] || bad "$f:$line" "$t (a link)"
done < <(list | grep '\.md$' | tr '\n' '\0' | xargs -0 grep -HnoE \
  '\]\(<[^>]+\.md(#[^>]*)?>\)|\]\([^) <>:#]+\.md(#[^) ]*)?( +"[^"]*")?\)|^ {0,3}\[[^]]+\]: *<?[^ >:#]+\.md(#[^ >]*)?' 2>/dev/null)
echo "$checked citations checked, $fail of documents not in the project"
[ "$checked" -gt 100 ] || { echo "FAIL: only $checked citations found: the scan is broken"; exit 1; }
[ "$fail" = 0 ]
