// node check.mjs FILE.json: every object of the JSON array (render's output read back by
// cli_yaml2json) is an EnvoyFilter that Istio's published schema (@kubernetes-models/istio)
// accepts. PO_ISTIO_NODE_MODULES is the node_modules folder scripts/setup.sh installed.
// The newest published models (3.0.1) predate Istio 1.31's MERGE_AND_REPLACE_LIST: a patch
// with it is checked as MERGE (the one difference) and counted, so the caller can say so.
// Exit 0 when every object holds, 1 with one line per problem.
import { readFileSync } from "node:fs";
import path from "node:path";

const modules = process.env.PO_ISTIO_NODE_MODULES;
if (!modules) { console.error("PO_ISTIO_NODE_MODULES is not set"); process.exit(2); }
const { EnvoyFilter } = await import(
  path.join(modules, "@kubernetes-models/istio/networking.istio.io/v1alpha3/EnvoyFilter.js"));

const objects = JSON.parse(readFileSync(process.argv[2], "utf8"));
const problems = [];
let replaceList = 0, checked = 0;
for (const o of objects) {
  const where = `${o.kind} ${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
  if (o.apiVersion !== "networking.istio.io/v1alpha3" || o.kind !== "EnvoyFilter") {
    problems.push(`${where}: not a networking.istio.io/v1alpha3 EnvoyFilter`);
    continue;
  }
  const copy = structuredClone(o);
  for (const cp of copy.spec?.configPatches ?? []) {
    if (cp.patch?.operation === "MERGE_AND_REPLACE_LIST") { cp.patch.operation = "MERGE"; replaceList++; }
  }
  try {
    new EnvoyFilter(copy).validate();
    checked++;
  } catch (e) {
    problems.push(`${where}: ${e.message}`);
  }
}
for (const p of problems) console.log(p);
console.log(`checked ${checked} EnvoyFilters, ${replaceList} MERGE_AND_REPLACE_LIST patches as MERGE`);
process.exit(problems.length ? 1 : 0);
