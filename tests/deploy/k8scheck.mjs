// Checks rendered Kubernetes manifests (JSON arrays from `helmrender yaml2json`):
//
//   node k8scheck.mjs validate FILE.json             every object against its Kubernetes schema
//                                                    (kubernetes-models; cert-manager and
//                                                    prometheus-operator models for their kinds),
//                                                    and no object twice
//   node k8scheck.mjs compare DEPLOY.json CHART.json the same objects, ignoring Helm's labels
//
// NODE_PATH (or PO_DEPLOY_NODE_MODULES) points at .deps/deploy-node/node_modules (scripts/setup.sh).
// Exit 0 when everything holds, 1 with one line per problem otherwise.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

const modulesDir = process.env.PO_DEPLOY_NODE_MODULES;
const require = createRequire(modulesDir ? path.join(modulesDir, "x.js") : import.meta.url);

// apiVersion -> the package folder holding its models.
function modelModule(apiVersion) {
  if (apiVersion === "v1") return "kubernetes-models/v1";
  if (apiVersion.startsWith("cert-manager.io/")) return `@kubernetes-models/cert-manager/${apiVersion}`;
  if (apiVersion.startsWith("monitoring.coreos.com/")) return `@kubernetes-models/prometheus-operator/${apiVersion}`;
  return `kubernetes-models/${apiVersion}`;
}

function where(o) {
  const md = o.metadata || {};
  return `${o.kind} ${md.namespace ? md.namespace + "/" : ""}${md.name}`;
}

function validate(objects) {
  const problems = [];
  const seen = new Set();
  for (const o of objects) {
    if (seen.has(key(o))) problems.push(`${where(o)}: rendered twice`);
    seen.add(key(o));
    let Model;
    try {
      Model = require(modelModule(o.apiVersion))[o.kind];
    } catch (e) {
      Model = undefined;
    }
    if (typeof Model !== "function") {
      problems.push(`${where(o)}: no schema known for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (e) {
      const details = (e.errors || []).map((x) => `${x.instancePath || "/"} ${x.message}`).join("; ");
      problems.push(`${where(o)}: ${details || e.message}`);
    }
  }
  return problems;
}

// Helm's own labels and the release-instance label are the only allowed differences.
const helmLabels = new Set(["helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/managed-by", "app.kubernetes.io/version"]);

function stripHelm(v) {
  if (Array.isArray(v)) return v.map(stripHelm);
  if (v && typeof v === "object") {
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      const labelMap = x && typeof x === "object" && !Array.isArray(x) && Object.values(x).every((y) => typeof y === "string");
      if ((k === "labels" || k === "matchLabels" || k === "selector") && labelMap) {
        const kept = Object.fromEntries(Object.entries(x).filter(([lk]) => !helmLabels.has(lk)));
        out[k] = stripHelm(kept);
      } else {
        out[k] = stripHelm(x);
      }
    }
    return out;
  }
  return v;
}

function key(o) {
  return `${o.apiVersion} ${o.kind} ${(o.metadata || {}).namespace || ""}/${(o.metadata || {}).name}`;
}

function diff(a, b, at, out) {
  if (out.length > 20) return;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) out.push(`${at}: ${a.length} items in deploy/, ${b.length} in the chart`);
    for (let i = 0; i < Math.min(a.length, b.length); i++) diff(a[i], b[i], `${at}[${i}]`, out);
    return;
  }
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(k in b)) out.push(`${at}.${k}: only in deploy/ (${JSON.stringify(a[k])})`);
      else if (!(k in a)) out.push(`${at}.${k}: only in the chart (${JSON.stringify(b[k])})`);
      else diff(a[k], b[k], `${at}.${k}`, out);
    }
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(`${at}: deploy/ has ${JSON.stringify(a)}, the chart ${JSON.stringify(b)}`);
}

function compare(deploy, chart) {
  const problems = [];
  // The chart does not create its namespace (helm install --create-namespace does).
  const d = new Map(deploy.filter((o) => o.kind !== "Namespace").map((o) => [key(o), stripHelm(o)]));
  const c = new Map(chart.map((o) => [key(o), stripHelm(o)]));
  for (const k of d.keys()) if (!c.has(k)) problems.push(`${k}: in deploy/ but not rendered by the chart`);
  for (const k of c.keys()) if (!d.has(k)) problems.push(`${k}: rendered by the chart but not in deploy/`);
  for (const [k, o] of d) {
    if (!c.has(k)) continue;
    const out = [];
    diff(o, c.get(k), "", out);
    for (const line of out) problems.push(`${k}: ${line}`);
  }
  return problems;
}

const [cmd, ...files] = process.argv.slice(2);
const load = (f) => JSON.parse(readFileSync(f, "utf8"));
let problems;
if (cmd === "validate" && files.length === 1) problems = validate(load(files[0]));
else if (cmd === "compare" && files.length === 2) problems = compare(load(files[0]), load(files[1]));
else {
  console.error("usage: k8scheck.mjs validate FILE.json | compare DEPLOY.json CHART.json");
  process.exit(2);
}
for (const p of problems) console.log(p);
process.exit(problems.length ? 1 : 0);
