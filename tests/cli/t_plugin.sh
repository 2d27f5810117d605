#!/usr/bin/env bash
# The kubectl plugin (the real kubectl finds kubectl-propertyoverride on PATH) and shell
# completion (bash sources the script and completes; zsh parses it when zsh is installed).
. tests/cli/lib.sh
dir=$(cd "$(dirname "$bin")" && pwd)

[ -L "$dir/kubectl-propertyoverride" ]
check "symlink beside the binary" 0 $?
"$dir/kubectl-propertyoverride" validate -f examples/valid >"$work/out" 2>&1
check "plugin name runs" 0 $? "$work/out" "${api_consul}
8 valid, 0 invalid, 0 skipped"
"$dir/kubectl-propertyoverride" --help >"$work/out" 2>&1
contains "plugin usage names kubectl" "$work/out" "usage: kubectl propertyoverride COMMAND [OPTIONS]"
if command -v kubectl >/dev/null; then
  # kubectl needs no cluster for a plugin; an empty KUBECONFIG keeps it from reading ~/.kube.
  PATH="$dir:$PATH" KUBECONFIG=/dev/null kubectl propertyoverride validate -f examples/valid >"$work/out" 2>&1
  check "kubectl propertyoverride validate" 0 $? "$work/out" "${api_consul}
8 valid, 0 invalid, 0 skipped"
  PATH="$dir:$PATH" KUBECONFIG=/dev/null kubectl propertyoverride validate -f examples/invalid/unknown-field.yaml >"$work/out" 2>&1
  check "kubectl propertyoverride exit code" 1 $?
  PATH="$dir:$PATH" KUBECONFIG=/dev/null kubectl plugin list >"$work/out" 2>&1
  contains "kubectl plugin list" "$work/out" "$dir/kubectl-propertyoverride"
else
  echo "skip: no kubectl"
fi

"$bin" completion bash >"$work/po.bash"
check "completion bash" 0 $?
complete_words() { # the words bash completes for "$@" (the last one is being typed)
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _propertyoverride; echo "${COMPREPLY[@]}"' _ "$work/po.bash" "$@"
}
complete_words propertyoverride va >"$work/out" 2>&1
check "complete va" 0 $? "$work/out" "validate"
complete_words propertyoverride re >"$work/out" 2>&1
check "complete re" 0 $? "$work/out" "render"
complete_words propertyoverride validate --out >"$work/out" 2>&1
check "complete --output" 0 $? "$work/out" "--output"
complete_words propertyoverride validate -o g >"$work/out" 2>&1
check "complete format" 0 $? "$work/out" "github"
complete_words propertyoverride pre >"$work/out" 2>&1
check "complete pre" 0 $? "$work/out" "preview"
complete_words propertyoverride preview --con >"$work/out" 2>&1
check "complete preview option" 0 $? "$work/out" "--config-dump"
complete_words propertyoverride preview --mesh "" >"$work/out" 2>&1
check "complete preview --mesh" 0 $? "$work/out" "consul istio"
# --mesh elsewhere: every mesh and MESH@RELEASE, from the mesh table's release tables
complete_words propertyoverride validate --mesh istio@1.3 >"$work/out" 2>&1
check "complete validate --mesh MESH@RELEASE" 0 $? "$work/out" "istio@1.30 istio@1.31"
complete_words propertyoverride explain --mesh env >"$work/out" 2>&1
check "complete explain --mesh" 0 $? "$work/out" "envoy-gateway envoy-gateway@1.5 envoy-gateway@1.6 envoy-gateway@1.7 envoy-gateway@1.8 envoy-gateway@1.9"
complete_words propertyoverride patch --envoy-api "" >"$work/out" 2>&1
check "complete --envoy-api" 0 $? "$work/out" "$apis_embedded"
complete_words propertyoverride preview -o "" >"$work/out" 2>&1
check "complete preview format (no github)" 0 $? "$work/out" "text json"
complete_words propertyoverride explain cl >"$work/out" 2>&1
check "complete resource" 0 $? "$work/out" "cluster cluster-load-assignment"
(cd "$data" && bash -c 'source "$1"; COMP_WORDS=(propertyoverride validate -f mi); COMP_CWORD=3; _propertyoverride; echo "${COMPREPLY[@]}"' _ "$work/po.bash") >"$work/out" 2>&1
check "complete file" 0 $? "$work/out" "mixed.yaml"
"$bin" completion zsh >"$work/po.zsh"
check "completion zsh" 0 $?
contains "zsh compdef" "$work/po.zsh" "#compdef propertyoverride"
if command -v zsh >/dev/null; then
  zsh -n "$work/po.zsh"
  check "zsh parses" 0 $?
fi
"$bin" completion fish >"$work/out" 2>&1
check "completion unknown shell" 2 $?

# The one-shot binary loads none of the controller's libraries; `controller` execs
# propertyoverride-controller from the binary's own folder (also through the plugin's symlink),
# and says so when it is missing.
LD_TRACE_LOADED_OBJECTS=1 "$bin" >"$work/libs" 2>&1
if grep -Eq 'libcurl|libgnutls|libmicrohttpd' "$work/libs"; then
  echo "FAIL one-shot binary links controller libraries:"; cat "$work/libs"; fail=$((fail+1))
else pass=$((pass+1)); fi
"$(dirname "$bin")/kubectl-propertyoverride" controller --help >"$work/out" 2>&1
check "controller through exec" 0 $?
contains "controller usage" "$work/out" "usage: propertyoverride controller"
mkdir "$work/alone" && cp "$bin" "$work/alone/propertyoverride"
"$work/alone/propertyoverride" controller --help >"$work/out" 2>&1
check "controller helper missing" 2 $? "$work/out" "propertyoverride controller: cannot run $work/alone/propertyoverride-controller: No such file or directory (it is installed beside propertyoverride; reinstall both)"
finish
