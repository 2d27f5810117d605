#!/usr/bin/env bash
# render, one golden file per example (Envoy Gateway's habit: x.in.yaml -> x.out.yaml): every
# examples/*/*.yaml rendered alone; its stdout byte for byte against
# testdata/render-golden/DIR/NAME.out.yaml and, when it wrote to stderr or exited non-zero,
# "stderr, then exit N" against NAME.err. A golden file missing, or one left for an example that
# is gone, fails. PO_UPDATE_GOLDEN=1 rewrites (and creates) them instead: review the diff.
# Examples of another mesh's targets (examples/istio) have the mesh in the golden's name
# (NAME.istio.out.yaml, envoy-gateway: NAME.eg.out.yaml); an example's `# render-args:` header line gives render's flags
# (e.g. --istio-version 1.31).
#   t_render_golden.sh BIN
set -u
bin=$1
. "$(dirname "$0")/lib.sh"
gold=tests/cli/testdata/render-golden
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
update=${PO_UPDATE_GOLDEN:-0}
want_files=()
for f in examples/*/*.yaml; do
  rel=${f#examples/}; base=$gold/${rel%.yaml}
  case "$rel" in istio/*) base=$base.istio ;; envoy-gateway/*) base=$base.eg ;; esac
  mkdir -p "$(dirname "$base")"
  # shellcheck disable=SC2046 # the header's words are flags
  "$bin" render -f "$f" $(sed -n 's/^# render-args: //p' "$f") >"$work/out" 2>"$work/err"
  rc=$?
  if [ -s "$work/err" ] || [ $rc != 0 ]; then printf 'exit %d\n' $rc >>"$work/err"; else : >"$work/err"; fi
  want_files+=("$base.out.yaml")
  if [ "$update" = 1 ]; then
    cp "$work/out" "$base.out.yaml"
    if [ -s "$work/err" ]; then cp "$work/err" "$base.err"; else rm -f "$base.err"; fi
  fi
  if [ ! -f "$base.out.yaml" ]; then
    echo "FAIL render $rel: no golden $base.out.yaml (PO_UPDATE_GOLDEN=1 creates it)"; fail=$((fail+1)); continue
  fi
  golden "render $rel" 0 0 "$work/out" "$base.out.yaml"
  if [ -s "$work/err" ] || [ -f "$base.err" ]; then
    want_files+=("$base.err")
    [ -f "$base.err" ] || : >"$work/none"
    golden "render $rel (stderr, exit)" 0 0 "$work/err" "$( [ -f "$base.err" ] && echo "$base.err" || echo "$work/none")"
  fi
done
# A golden file whose example is gone is stale.
while IFS= read -r g; do
  keep=0
  for w in "${want_files[@]}"; do [ "$w" = "$g" ] && keep=1 && break; done
  if [ $keep = 0 ]; then
    if [ "$update" = 1 ]; then rm -f "$g"; echo "removed $g"; else echo "FAIL stale golden $g (its example is gone)"; fail=$((fail+1)); fi
  fi
done < <(find "$gold" -type f | LC_ALL=C sort)
finish
