/* propertyoverride completion bash|zsh: the scripts, kept beside the command they complete so
 * a new subcommand or option is added to both in one change. */
#include <string.h>

#include "cli.h"
#include "gitops.h"

static const char kUsage[] =
    "usage: propertyoverride completion bash|zsh\n"
    "\n"
    "Prints a shell completion script. Load it with\n"
    "  bash:  source <(propertyoverride completion bash)\n"
    "  zsh:   source <(propertyoverride completion zsh)\n"
    "It completes subcommands, their options, file names after -f, output formats, and the\n"
    "resource types explain takes. `kubectl propertyoverride` is completed by kubectl itself.\n";

/* The word lists both scripts use. */
#define PO_COMMANDS "validate render explain patch preview upgrade-check controller completion version help"
#define PO_API_OPTS "--mesh --envoy-api --istio-version"
#define PO_VALIDATE_OPTS \
  "-f --filename -o --output -v --verbose --allow-empty --consul-arguments --extension-name --convention " PO_API_OPTS " --help"
#define PO_RENDER_OPTS "-f --filename -v --verbose " PO_API_OPTS " --help"
#define PO_PATCH_OPTS "--message --input --patches --debug --rules --mesh --envoy-api --help"
#define PO_PREVIEW_OPTS \
  "-f --filename --config-dump --envoy-admin --mesh --envoy-api --datacenter --istio-version --timeout -o --output -v --verbose --help"
#define PO_UPGRADE_OPTS \
  "-f --filename --to --from --to-envoy-api --from-envoy-api --xds-name-scheme-v2 -o --output --fail-on-warning --allow-empty --help"
#define PO_UPGRADE_TARGETS "consul@1.22 istio@1.26 istio@1.28 istio@1.31 envoy-gateway@1.5 envoy-gateway@1.9"
#define PO_RESOURCES "cluster cluster-load-assignment route listener"

static const char kBash[] =
    "# bash completion for propertyoverride (propertyoverride completion bash)\n"
    "_propertyoverride() {\n"
    "  local cur prev cmd\n"
    "  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
    "  prev=\"\"\n"
    "  [ \"$COMP_CWORD\" -gt 0 ] && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
    "  COMPREPLY=()\n"
    "  if [ \"$COMP_CWORD\" -le 1 ]; then\n"
    "    COMPREPLY=($(compgen -W \"" PO_COMMANDS "\" -- \"$cur\"))\n"
    "    return 0\n"
    "  fi\n"
    "  cmd=\"${COMP_WORDS[1]}\"\n"
    "  case \"$prev\" in\n"
    "    -f|--filename|--consul-arguments|--config-dump)\n"
    "      COMPREPLY=($(compgen -f -- \"$cur\"))\n"
    "      return 0 ;;\n"
    "    -o|--output)\n"
    "      if [ \"${COMP_WORDS[1]}\" = preview ]; then COMPREPLY=($(compgen -W \"text json\" -- \"$cur\"));\n"
    "      else COMPREPLY=($(compgen -W \"text json github\" -- \"$cur\")); fi\n"
    "      return 0 ;;\n"
    "    --mesh)\n"
    "      if [ \"$cmd\" = preview ]; then COMPREPLY=($(compgen -W \"consul istio\" -- \"$cur\"));\n"
    "      else COMPREPLY=($(compgen -W \"@MESHES@\" -- \"$cur\")); fi\n"
    "      return 0 ;;\n"
    "    --envoy-api)\n"
    "      COMPREPLY=($(compgen -W \"@APIS@\" -- \"$cur\"))\n"
    "      return 0 ;;\n"
    "    --to|--from)\n"
    "      COMPREPLY=($(compgen -W \"" PO_UPGRADE_TARGETS "\" -- \"$cur\"))\n"
    "      return 0 ;;\n"
    "    --envoy-admin)\n"
    "      COMPREPLY=($(compgen -W \"http://127.0.0.1:19000 http://127.0.0.1:15000\" -- \"$cur\"))\n"
    "      return 0 ;;\n"
    "  esac\n"
    "  case \"$cmd\" in\n"
    "    validate) COMPREPLY=($(compgen -W \"" PO_VALIDATE_OPTS "\" -- \"$cur\")) ;;\n"
    "    render) COMPREPLY=($(compgen -W \"" PO_RENDER_OPTS "\" -- \"$cur\")) ;;\n"
    "    preview) COMPREPLY=($(compgen -W \"" PO_PREVIEW_OPTS "\" -- \"$cur\")) ;;\n"
    "    upgrade-check) COMPREPLY=($(compgen -W \"" PO_UPGRADE_OPTS "\" -- \"$cur\")) ;;\n"
    "    patch) COMPREPLY=($(compgen -W \"" PO_PATCH_OPTS "\" -- \"$cur\")) ;;\n"
    "    explain) COMPREPLY=($(compgen -W \"" PO_RESOURCES " --mesh --envoy-api --help\" -- \"$cur\")) ;;\n"
    "    completion) [ \"$COMP_CWORD\" -eq 2 ] && COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")) ;;\n"
    "    *) COMPREPLY=($(compgen -W \"--help\" -- \"$cur\")) ;;\n"
    "  esac\n"
    "  return 0\n"
    "}\n"
    "complete -o default -F _propertyoverride propertyoverride\n";

static const char kZsh[] =
    "#compdef propertyoverride\n"
    "# zsh completion for propertyoverride (propertyoverride completion zsh)\n"
    "_propertyoverride() {\n"
    "  local -a commands\n"
    "  commands=(\n"
    "    'validate:check manifests (or Consul arguments) as the webhook does'\n"
    "    'render:print the ServiceDefaults/ProxyDefaults the controller would write'\n"
    "    'explain:describe a point of the Envoy schema'\n"
    "    'patch:apply patches to one Envoy message'\n"
    "    'preview:show what overrides would change in a proxy config dump'\n"
    "    'upgrade-check:list what breaks in manifests when the mesh is upgraded'\n"
    "    'controller:run the controller and its webhook'\n"
    "    'completion:print a shell completion script'\n"
    "    'version:print the version'\n"
    "    'help:print the usage'\n"
    "  )\n"
    "  if (( CURRENT == 2 )); then\n"
    "    _describe -t commands 'propertyoverride command' commands\n"
    "    return\n"
    "  fi\n"
    "  case ${words[2]} in\n"
    "    validate)\n"
    "      _arguments '*'{-f,--filename}'[file, directory or -]:file:_files' \\\n"
    "        {-o,--output}'[output format]:format:(text json github)' \\\n"
    "        {-v,--verbose}'[full field lists]' '--allow-empty[exit 0 when nothing was validated]' \\\n"
    "        '--consul-arguments[a Consul arguments file]:file:_files' \\\n"
    "        '--extension-name[the extension name]:name:' '--convention[how values are typed]:convention:(wire typed)' \\\n"
    "        '*--mesh[a mesh release]:mesh:(@MESHES@)' '--envoy-api[an Envoy API snapshot]:version:(@APIS@)' \\\n"
    "        '--istio-version[the Istio release of Istio targets]:release:' '--help[usage]' ;;\n"
    "    render)\n"
    "      _arguments '*'{-f,--filename}'[file, directory or -]:file:_files' \\\n"
    "        '*--mesh[a mesh release]:mesh:(@MESHES@)' '--envoy-api[an Envoy API snapshot]:version:(@APIS@)' \\\n"
    "        '--istio-version[the Istio release of Istio targets]:release:' \\\n"
    "        {-v,--verbose}'[full field lists]' '--help[usage]' ;;\n"
    "    patch)\n"
    "      _arguments '--message[the message type]:name:' '--input[the message as JSON]:file:_files' \\\n"
    "        '--patches[a JSON array of patches]:file:_files' '--debug[every field in errors]' \\\n"
    "        '--rules[judge Envoy rules]' '--mesh[a mesh release]:mesh:(@MESHES@)' \\\n"
    "        '--envoy-api[an Envoy API snapshot]:version:(@APIS@)' '--help[usage]' ;;\n"
    "    preview)\n"
    "      _arguments '*'{-f,--filename}'[file, directory or -]:file:_files' \\\n"
    "        '--config-dump[Envoy /config_dump output]:file:_files' \\\n"
    "        '--envoy-admin[Envoy admin URL]:url:(http\\://127.0.0.1\\:19000 http\\://127.0.0.1\\:15000)' \\\n"
    "        '--mesh[naming rules, @RELEASE the snapshot judging]:mesh:(consul istio)' \\\n"
    "        '--envoy-api[the snapshot judging the overrides]:version:(@APIS@)' '--datacenter[Consul local datacenter]:dc:' \\\n"
    "        '--istio-version[the Istio release of Istio targets]:release:' \\\n"
    "        '--timeout[seconds for --envoy-admin]:seconds:' {-o,--output}'[output format]:format:(text json)' \\\n"
    "        {-v,--verbose}'[full field lists]' '--help[usage]' ;;\n"
    "    upgrade-check)\n"
    "      _arguments '*'{-f,--filename}'[file, directory or -]:file:_files' \\\n"
    "        '--to[the release moved to]:release:(" PO_UPGRADE_TARGETS ")' \\\n"
    "        '--from[the release run now]:release:(" PO_UPGRADE_TARGETS ")' \\\n"
    "        '--to-envoy-api[snapshot of the new side]:version:' '--from-envoy-api[snapshot of the old side]:version:' \\\n"
    "        '--xds-name-scheme-v2[Envoy Gateway XDSNameSchemeV2 on]' {-o,--output}'[output format]:format:(text json github)' \\\n"
    "        '--fail-on-warning[exit 1 on warnings]' '--allow-empty[exit 0 when nothing was checked]' '--help[usage]' ;;\n"
    "    explain)\n"
    "      _arguments '--mesh[a mesh release]:mesh:(@MESHES@)' '--envoy-api[an Envoy API snapshot]:version:(@APIS@)' \\\n"
    "        '1:resource:(" PO_RESOURCES ")' ;;\n"
    "    completion) (( CURRENT == 3 )) && compadd -- bash zsh ;;\n"
    "  esac\n"
    "}\n"
    "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
    "  _propertyoverride \"$@\"\n"
    "else\n"
    "  compdef _propertyoverride propertyoverride\n"
    "fi\n";

/* The script with @MESHES@ (every mesh and MESH@RELEASE of the mesh table) and @APIS@ (every
 * embedded snapshot) filled in from the tables themselves, so the words never drift from them. */
static int put_script(const char *script, FILE *out) {
  for (const char *p = script; *p;) {
    const char *at = strchr(p, '@');
    bool meshes = at && !strncmp(at, "@MESHES@", 8), apis = at && !strncmp(at, "@APIS@", 6);
    size_t n = at ? (size_t)(at - p) + (meshes || apis ? 0 : 1) : strlen(p);
    fwrite(p, 1, n, out);
    p += n;
    if (meshes) {
      for (size_t m = 0; m < po_Mesh_Count(); m++) {
        const po_MeshOps *ops = po_Mesh_At(m);
        fprintf(out, "%s%s", m ? " " : "", po_Mesh_Name(ops->mesh));
        for (size_t r = 0; ops->releases && r < ops->releases->count; r++) {
          fprintf(out, " %s@%s", po_Mesh_Name(ops->mesh), ops->releases->rows[r].release);
        }
      }
      p += 8;
    } else if (apis) {
      for (size_t i = 0; i < po_EnvoyApi_Count(); i++) fprintf(out, "%s%s", i ? " " : "", po_EnvoyApi_Version(po_EnvoyApi_At(i)));
      p += 6;
    }
  }
  return po_Cli_Flush(out, "completion", "the script") ? kPo_Exit_Ok : kPo_Exit_Usage;
}

int po_Cmd_Completion(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "bash")) return put_script(kBash, stdout);
  if (argc == 2 && !strcmp(argv[1], "zsh")) return put_script(kZsh, stdout);
  if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) return fputs(kUsage, stdout), kPo_Exit_Ok;
  fprintf(stderr, "propertyoverride completion: bash or zsh expected\n\n%s", kUsage);
  return kPo_Exit_Usage;
}
