"""The Envoy Gateway oracle test's verdict (t_egpatch.sh runs it): our refusals counted by
reason, and each case we rendered judged by Envoy Gateway's own code (the eg-patch oracle's
verdict lines). A mismatch is Envoy Gateway failing where we rendered (the policy Invalid, or
an entry finding no resource) or a result not proto-equal to ours; each is classed by issue 23's
classes from what the patch is (tags.c) and what Envoy Gateway said, and every mismatch fails.

    tally.py META VERDICTS REPORT
"""
import json
import re
import sys
from collections import Counter, defaultdict

CLASSES = {
    "A": "a wrapper given an object (issue 23 A)",
    "B": "renaming the resource: later entries find no resource (issue 23 B)",
    "C1": "a oneof member set over the generated resource's other member, or an earlier patch's (issue 23 C1, refused: eg_generated.c)",
    "C2": "one object value setting two members of one oneof (issue 23 C2)",
    "D": "an Any in Consul's type_url form (issue 23 D)",
    "E": "the result breaks Envoy's rules (Validate()): issue 22",
    "I": "the result passes Envoy's rules, an entry before it did not: Envoy Gateway validates after each entry (issue 23)",
    "V": "a field Envoy Gateway's Envoy API lacks (our cases walk and judge with the snapshot of its release, issue 24)",
    "X": "another kind: not one of issue 23's classes",
}


def reason(refusal):
    """A refusal's reason, without the patch's own path, values and field lists."""
    kind, _, text = refusal.partition(": ")
    text = text.split("\n")[0]
    text = re.sub(r"^invalid Patches\[\d+\]: ", "", text)
    m = re.search(r"not expressible in an Envoy Gateway EnvoyPatchPolicy: ([^(:;]*)", text)
    if m:
        text = "EG: " + m.group(1)
    m = re.match(r"unsupported target field type '(repeated )?([^']*)'", text)
    if m:  # the kind of type, not the type
        what = "map" if m.group(2) == "map" else m.group(2) if m.group(2).startswith("google.") else "message"
        return "%s: unsupported target field type '%s%s'" % (kind, m.group(1) or "", what)
    text = re.sub(r'"[^"]*"', '"…"', text)
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r"/[A-Za-z0-9_/.-]+", "/…", text)
    text = re.sub(r"\d+", "N", text)
    text = re.sub(r"(field|for) [a-z0-9_.]+", r"\1 …", text)
    return kind + ": " + text.strip()[:110]


def eg_reason(err):
    """Envoy Gateway's error without the resource it quotes, the positions and the values."""
    err = re.sub(r"xds resource \{.*?\}, err:", "xds resource {…}, err:", err, flags=re.S).split("\n")[0]
    err = re.sub(r"\(line \d+:\d+\)", "", err)
    err = re.sub(r'"[^"]*"', '"…"', err)
    err = re.sub(r"Unable to find xds resources: .*", "Unable to find xds resources", err)
    err = re.sub(r"op=\w+ path=\S+", "op path", err)
    return re.sub(r"\d+", "N", err)[:160]


def klass(rec, verdict):
    """Issue 23's class of a mismatch: the patch's tags (what it is, from Envoy's schema) checked
    against what Envoy Gateway said; a case with several causes takes the first that fits."""
    tags = rec.get("tags", [])
    # the resource Envoy Gateway quotes in its error is not what it says
    err = re.sub(r"xds resource \{.*?\}, err:", "xds resource {…}, err:", verdict.get("eg_error", ""), flags=re.S)
    oneof = "oneof" in err and "already set" in err
    if "A" in tags and "invalid value for" in err:
        return "A"
    if "D" in tags and ('missing "@type"' in err or "type_url" in err or "unknown field" in err):
        return "D"
    if "C2" in tags and oneof:
        return "C2"
    if "C1" in tags and oneof:
        return "C1"
    if "B" in tags and "ResourceNotFound" in err:
        return "B"
    if "validation failed for xds resource" in err:
        # Envoy Gateway validates the resource after each entry (processJSONPatches): when our
        # result of every patch passes Envoy's rules (po_Override_ApplyChecked found nothing),
        # what failed was an intermediate one, a message built a part an entry at a time
        return "E" if rec.get("ours_rules") else "I"
    if "unknown field" in err or verdict.get("ours_error"):
        return "V"
    return "X"


def main(meta_path, verdict_path, report_path):
    meta = [json.loads(line) for line in open(meta_path)]
    verdicts = {}
    for line in open(verdict_path):
        v = json.loads(line)
        verdicts[v["id"]] = v
    refusals, eg_errors, mismatches, input_errors = Counter(), Counter(), defaultdict(list), []
    accepted = same = 0
    for rec in meta:
        if "refused" in rec:
            for r in sorted({reason(x) for x in rec["refused"]}):
                refusals[r] += 1
            continue
        accepted += 1
        v = verdicts.get(rec["id"])
        if v is None or v.get("input_error") or rec.get("fixture_error"):
            input_errors.append((rec["id"], (v or {}).get("input_error") or rec.get("fixture_error") or "no verdict"))
        elif v["equal"] and not rec.get("ours_error"):
            same += 1
        else:
            k = klass(rec, v)
            mismatches[k].append((rec, v))
            if v.get("eg_error"):
                eg_errors[eg_reason(v["eg_error"])] += 1
    total_mm = sum(len(x) for x in mismatches.values())
    out = []
    out.append("cases %d: refused by us %d, rendered %d: same result as Envoy Gateway %d, mismatches %d, input errors %d"
               % (len(meta), len(meta) - accepted, accepted, same, total_mm, len(input_errors)))
    out.append("refusals by reason (a case counts once per reason):")
    for r, n in refusals.most_common():
        out.append("  %5d  %s" % (n, r))
    out.append("Envoy Gateway's errors on what we rendered, by reason (each a mismatch):")
    for r, n in eg_errors.most_common():
        out.append("  %5d  %s" % (n, r))
    out.append("mismatches by class:")
    for k in CLASSES:
        if mismatches.get(k):
            out.append("  %-2s %5d  %s" % (k, len(mismatches[k]), CLASSES[k]))
    detail = []
    for k in CLASSES:
        for rec, v in mismatches.get(k, []):
            detail.append("[%s] %s" % (k, rec["id"]))
            detail.append("  patches:     " + json.dumps(rec["patches"]))
            detail.append("  jsonPatches: " + json.dumps(rec.get("jsonPatches")))
            if v.get("eg_error"):
                err = re.sub(r"xds resource \{.*?\}, err:", "xds resource {…}, err:", v["eg_error"], flags=re.S)
                detail.append("  Envoy Gateway: " + err.replace("\n", " | ")[:600])
            if v.get("ours_error"):
                detail.append("  ours in Envoy Gateway's Envoy API: " + v["ours_error"][:300])
            if rec.get("ours_error"):
                detail.append("  ours failed: " + rec["ours_error"][:300])
            if rec.get("ours_rules"):
                detail.append("  ours breaks Envoy's rules: " + "; ".join(rec["ours_rules"])[:300])
            for d in v.get("diffs", [])[:2]:
                eg, ours = d["eg"], d["ours"]
                keys = sorted(k for k in set(eg) | set(ours) if eg.get(k) != ours.get(k))
                detail.append("  %s differs in %s: EG %s; ours %s" % (
                    d["type"].rsplit(".", 1)[-1], ", ".join(keys),
                    json.dumps({k: eg.get(k) for k in keys})[:300], json.dumps({k: ours.get(k) for k in keys})[:300]))
    for i, e in input_errors:
        detail.append("[input error] %s: %s" % (i, e))
    with open(report_path, "w") as f:
        f.write("\n".join(out + [""] + detail) + "\n")
    print("\n".join(out))
    if input_errors:
        print("FAIL: %d cases the oracle could not read (first: %s: %s)" % (len(input_errors), *input_errors[0]))
    if total_mm:
        print("FAIL: %d mismatches with Envoy Gateway's own code; each is listed in %s" % (total_mm, report_path))
    return 1 if total_mm or input_errors or accepted == 0 else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
