#!/usr/bin/python3
"""Every request the controller made, as the real kube-apiserver's audit log recorded it, checked
against the RBAC that deploy/ ships (deploy/base/rbac.yaml).

The e2e suites on the real server run the controller as a cluster admin (their fixtures need it),
so a request deploy/'s roles do not allow passes there and fails only in a real install, with
403s and nothing programmed. real-cluster.sh's lc_start turns the audit log on (LC_AUDIT=1); the
suites' finish runs this over it. A request is the controller's by its User-Agent
(propertyoverride/VERSION, controller/kube/src/client.c).

Matching is RBAC's for rules without wildcards (tests/deploy/t_deploy.sh asserts deploy/ has
none): a rule allows a request when its apiGroups hold the group, its resources hold
"resource[/subresource]" and its verbs hold the verb. Two relaxations, said in the output: a
Role's namespace and a rule's resourceNames are not compared, because the suites choose the
controller's namespace, Secret and webhook configuration names (deploy_deploy_real checks those
as the ServiceAccount itself, through the real authorizer). Non-resource requests must be ones
every authenticated user may make (system:discovery, system:public-info-viewer).

  rbac-audit.py [--none-ok] RBAC_YAML AUDIT_LOG...
exit 0: all allowed; 1: some are not (listed), or none was the controller's without --none-ok
(lc_audit_rbac passes it when no controller ran: lc_controller writes controller.log); 2: usage
"""
import json
import sys

import yaml

UA_PREFIX = "propertyoverride/"
# system:discovery and system:public-info-viewer, bound to system:authenticated by default.
PUBLIC_PATHS = ("/api", "/apis", "/healthz", "/livez", "/readyz", "/version", "/openapi")


def rules_of(path):
    rules = []
    with open(path) as f:
        for doc in yaml.safe_load_all(f):
            if doc and doc.get("kind") in ("ClusterRole", "Role"):
                for r in doc.get("rules") or []:
                    rules.append((doc["kind"], doc["metadata"]["name"], r))
    return rules


def allowed(rules, group, resource, verb):
    for _, _, r in rules:
        if group in r.get("apiGroups", []) and resource in r.get("resources", []) and verb in r.get("verbs", []):
            return True
    return False


def public(path):
    p = path.split("?", 1)[0].rstrip("/") or "/"
    return any(p == base or p.startswith(base + "/") for base in PUBLIC_PATHS)


def main(argv):
    none_ok = len(argv) > 1 and argv[1] == "--none-ok"
    if none_ok:
        argv = argv[:1] + argv[2:]
    if len(argv) < 3:
        print("usage: rbac-audit.py [--none-ok] RBAC_YAML AUDIT_LOG...", file=sys.stderr)
        return 2
    rules = rules_of(argv[1])
    if not rules:
        print(f"rbac-audit: no Role or ClusterRole rules in {argv[1]}", file=sys.stderr)
        return 2
    seen, denied, events, ids = {}, {}, 0, set()
    for log in argv[2:]:
        with open(log) as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue  # a line cut by the server's stop
                if not ev.get("userAgent", "").startswith(UA_PREFIX):
                    continue
                # a watch is logged when it starts and again when it ends: one request
                aid = ev.get("auditID")
                if aid:
                    if aid in ids:
                        continue
                    ids.add(aid)
                events += 1
                ref = ev.get("objectRef")
                verb = ev.get("verb", "")
                if not ref or "resource" not in ref:
                    key = ("nonresource", ev.get("requestURI", "").split("?", 1)[0], verb)
                    ok = public(ev.get("requestURI", ""))
                else:
                    res = ref["resource"] + ("/" + ref["subresource"] if ref.get("subresource") else "")
                    key = (ref.get("apiGroup", ""), res, verb)
                    ok = allowed(rules, key[0], res, verb)
                seen[key] = seen.get(key, 0) + 1
                if not ok:
                    where = ev.get("requestURI", "")
                    denied.setdefault(key, where)
    if events == 0:
        # A controller ran and made no request: the log is not what this thinks it is (or the
        # User-Agent changed).
        print(f"rbac-audit: no request with User-Agent {UA_PREFIX}* in {' '.join(argv[2:])}"
              + ("; no controller ran" if none_ok else ""))
        return 0 if none_ok else 1
    for (g, r, v), where in sorted(denied.items()):
        what = f"{v} {r}" + (f" ({g})" if g and g != "nonresource" else "")
        print(f"rbac-audit: the controller's {what} ({seen[(g, r, v)]} times, e.g. {where}) is not allowed by {argv[1]}"
              + ("; a non-resource path no default role allows" if g == "nonresource" else
                 f": add the verb '{v}' to the rule for '{r}' (and to helm/'s and docs/install.md's)"))
    kinds = ", ".join(f"{v} {r}" for (g, r, v) in sorted(seen, key=lambda k: (k[1], k[2])))
    print(f"rbac-audit: {events} requests by the controller, {len(seen)} kinds ({kinds}); "
          f"{len(denied)} not allowed (namespaces and resourceNames not compared)")
    return 1 if denied else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
