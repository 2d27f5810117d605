# Shared by the tests/deploy scripts. Source it with the build directory as $1 (PO_DEPS_DIR, as
# for scripts/setup.sh, says where the pinned dependencies are):
#   PO_DEPLOY_BUILD   where the helm-compatible renderer is built (BUILD/tests/deploy)
#   H                 that renderer (tests/deploy/helmrender), built here if needed
#   top               the repository root
# and the helpers render/to_json/k8s_validate/fail below. Everything runs offline.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
PO_DEPLOY_BUILD="$build/tests/deploy"
mkdir -p "$PO_DEPLOY_BUILD"
H="$PO_DEPLOY_BUILD/helmrender"
"$top/tests/deploy/build-helmrender.sh" "$H"
# Where the setup step put the pinned dependencies: PO_DEPS_DIR as scripts/setup.sh reads it, else
# the build's own -DPO_DEPS_DIR (its CMake cache), else .deps.
deps_dir=${PO_DEPS_DIR:-$(sed -n 's/^PO_DEPS_DIR:[A-Z]*=//p' "$build/CMakeCache.txt" 2>/dev/null || true)}
deps_dir=${deps_dir:-$top/.deps}
export PO_DEPLOY_NODE_MODULES="${PO_DEPLOY_NODE_MODULES:-$deps_dir/deploy-node/node_modules}"
[ -d "$PO_DEPLOY_NODE_MODULES/kubernetes-models" ] ||
  { echo "missing $PO_DEPLOY_NODE_MODULES/kubernetes-models: run scripts/setup.sh (PO_DEPS_DIR=$deps_dir)" >&2; exit 1; }
chart="$top/helm/propertyoverride"
work=$(mktemp -d "$PO_DEPLOY_BUILD/work.XXXXXX")
trap 'rm -rf "$work"' EXIT

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
finish() { [ "$failures" = 0 ] && echo "all passed" || { echo "$failures failure(s)" >&2; exit 1; }; }

# render NAME [renderer flags...]: the chart as YAML in $work/NAME.yaml and JSON in $work/NAME.json
render() {
  local name=$1; shift
  "$H" --chart "$chart" "$@" >"$work/$name.yaml"
  "$H" yaml2json "$work/$name.yaml" >"$work/$name.json"
}
# k8s_validate FILE.json: every object against its Kubernetes (or cert-manager, prometheus-operator) schema
k8s_validate() { node "$top/tests/deploy/k8scheck.mjs" validate "$1"; }
# jqt FILE.json DESCRIPTION FILTER: FILTER (over the array of objects) must print true
jqt() {
  local got
  got=$(jq -r "$3" "$1" 2>&1) || true
  [ "$got" = true ] && ok "$2" || fail "$2 (jq $3 gave: $got)"
}
