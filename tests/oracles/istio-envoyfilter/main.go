// istio-envoyfilter: the Istio oracle. For each seeded, generated PropertyOverride (and each
// file of the corpus of past disagreements), our `propertyoverride render` makes the
// EnvoyFilter, Istio's own code (istio.io/istio: crd conversion, ValidateEnvoyFilter,
// convertToEnvoyFilterWrapper, ApplyClusterMerge, ApplyListenerPatches,
// ApplyRouteConfigurationPatches) applies it to a sidecar's resources named and built as istiod
// builds them, `propertyoverride preview --mesh istio` applies the same PropertyOverride with our
// engine (Consul's meaning), and the two results must be proto-equal. Refusals are counted by
// reason, ours and Istio's; every disagreement is a failure, printed, and saved for the corpus.
//
//	istio-envoyfilter -cli build/propertyoverride [-cases N] [-seed S] [-corpus DIR] [-save DIR] [-report FILE] [-v]
//
// PO_ISTIOEF_SEED and PO_ISTIOEF_CASES override -seed and -cases. Exit status: 0 no disagreement,
// 1 disagreements, 2 the harness failed (a command did not run, a report did not read).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"
)

const istioVersion = "1.31"

type counts map[string]int

func (c counts) print(title string) {
	var ks []string
	total := 0
	for k, n := range c {
		ks = append(ks, k)
		total += n
	}
	sort.Slice(ks, func(i, j int) bool { return c[ks[i]] > c[ks[j]] || (c[ks[i]] == c[ks[j]] && ks[i] < ks[j]) })
	fmt.Printf("%s: %d\n", title, total)
	for _, k := range ks {
		fmt.Printf("  %6d  %s\n", c[k], k)
	}
}

type oracle struct {
	cli, work, dump, saveDir string
	rs                       []resource
	report                   *os.File
	verbose                  bool

	cases, accepted, same, envoyRefuses                  int
	oursRefused, oursWarn, istioRefused, istioWarn, diff counts
}

// mismatch records one disagreement: counted by class, written to the report, saved.
func (o *oracle) mismatch(label, class string, poYAML, efYAML []byte, details []string) {
	o.diff[class]++
	fmt.Printf("MISMATCH %s: %s\n", label, class)
	for _, d := range details {
		fmt.Printf("  %s\n", d)
	}
	if o.report != nil {
		fmt.Fprintf(o.report, "=== %s: %s\n", label, class)
		for _, d := range details {
			fmt.Fprintf(o.report, "  %s\n", d)
		}
		fmt.Fprintf(o.report, "--- PropertyOverride\n%s\n--- EnvoyFilter (render)\n%s\n", poYAML, efYAML)
	}
	if o.saveDir != "" {
		name := filepath.Join(o.saveDir, label+".yaml")
		text := fmt.Sprintf("%s, found by the Istio oracle (tests/oracles/istio-envoyfilter):\n%s", class, strings.Join(details, "\n"))
		if len(text) > 2000 {
			text = text[:2000] + "..."
		}
		head := "# " + strings.ReplaceAll(text, "\n", "\n# ") + "\n"
		_ = os.WriteFile(name, append([]byte(head), poYAML...), 0o644)
	}
}

// check runs one case: poYAML is the input stream (the Service when the target is one, then the
// PropertyOverride).
func (o *oracle) check(label string, poYAML []byte) error {
	o.cases++
	poFile := filepath.Join(o.work, "po.yaml")
	if err := os.WriteFile(poFile, poYAML, 0o644); err != nil {
		return err
	}
	r, err := runCLI(o.cli, "render", "-f", poFile, "--istio-version", istioVersion)
	if err != nil {
		return err
	}
	errs, warns := reasons(r.stderr)
	for _, w := range warns {
		o.oursWarn[w]++
	}
	switch r.exit {
	case 0:
	case 1:
		if len(errs) == 0 {
			return fmt.Errorf("%s: render exited 1 without a finding: %s", label, r.stderr)
		}
		o.oursRefused[errs[0]]++ // a PropertyOverride is refused by its first finding
		if o.verbose {
			fmt.Printf("%s: refused: %s", label, r.stderr)
		}
		return nil
	default:
		return fmt.Errorf("%s: render exited %d: %s", label, r.exit, r.stderr)
	}
	o.accepted++
	ef := r.stdout
	ist := istioApply(ef, o.rs)
	for _, w := range ist.warnings {
		if o.verbose {
			fmt.Printf("%s: Istio's warning: %s\n", label, w)
		}
		o.istioWarn[digits.ReplaceAllString(quoted.ReplaceAllString(strings.SplitN(w, ";", 2)[0], "_"), "N")]++
	}
	if ist.refused != "" {
		class := "Istio refuses the rendered EnvoyFilter"
		if strings.HasPrefix(ist.refused, "Kubernetes' YAML reader") {
			class = "Istio cannot read the rendered YAML"
		}
		o.istioRefused[strings.SplitN(ist.refused, ":", 2)[0]]++
		o.mismatch(label, class, poYAML, ef, []string{ist.refused})
		return nil
	}
	ours, broken, failed, err := previewAfter(o.cli, poFile, o.dump, o.rs)
	if err != nil {
		return fmt.Errorf("%s: %v", label, err)
	}
	if failed != nil {
		o.mismatch(label, "our engine fails a PropertyOverride render accepted", poYAML, ef, failed)
		return nil
	}
	var details []string
	for _, res := range o.rs {
		a, b := ours[res.key()], ist.after[res.key()]
		if bytes.Equal(a, b) {
			continue
		}
		for _, d := range diffPaths(a, b, 4) {
			details = append(details, fmt.Sprintf("%s %s %s", res.kind, res.name, d))
		}
	}
	if len(details) > 0 {
		o.mismatch(label, "different result", poYAML, ef, details)
		return nil
	}
	o.same++
	if len(broken) > 0 {
		o.envoyRefuses++
	}
	return nil
}

func envInt(name string, def uint64) uint64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "istio-envoyfilter: %s=%q: a whole number is expected\n", name, v)
			os.Exit(2)
		}
		return n
	}
	return def
}

// caseYAML writes a generated case as the YAML stream a user would give render: JSON documents
// (YAML's flow style, so every value is exactly what was drawn; the YAML a user writes is the
// engine's reader's concern, tested elsewhere).
func caseYAML(po, service map[string]any) ([]byte, error) {
	var b bytes.Buffer
	for _, doc := range []map[string]any{service, po} {
		if doc == nil {
			continue
		}
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		b.WriteString("---\n")
		if err := enc.Encode(doc); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

func main() {
	cli := flag.String("cli", "", "the propertyoverride binary (required)")
	cases := flag.Uint64("cases", 3000, "generated cases (PO_ISTIOEF_CASES overrides)")
	seed := flag.Uint64("seed", 0, "the generator's seed; 0: from the clock (PO_ISTIOEF_SEED overrides)")
	corpus := flag.String("corpus", "", "a directory of past disagreements (*.yaml) replayed first")
	save := flag.String("save", "", "a directory each new disagreement is written into, as a corpus file")
	reportPath := flag.String("report", "", "a file the disagreements are written to in full")
	verbose := flag.Bool("v", false, "print each refusal in full")
	flag.Parse()
	if *cli == "" {
		fmt.Fprintln(os.Stderr, "istio-envoyfilter: -cli is required")
		os.Exit(2)
	}
	*cases = envInt("PO_ISTIOEF_CASES", *cases)
	*seed = envInt("PO_ISTIOEF_SEED", *seed)
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	fail := func(err error) {
		fmt.Fprintf(os.Stderr, "istio-envoyfilter: %v (seed %d)\n", err, *seed)
		os.Exit(2)
	}
	work, err := os.MkdirTemp("", "istio-envoyfilter-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(work)
	o := &oracle{cli: *cli, work: work, saveDir: *save, rs: allResources(), verbose: *verbose,
		oursRefused: counts{}, oursWarn: counts{}, istioRefused: counts{}, istioWarn: counts{}, diff: counts{}}
	dump, err := configDump(o.rs)
	if err != nil {
		fail(err)
	}
	o.dump = filepath.Join(work, "dump.json")
	if err := os.WriteFile(o.dump, dump, 0o644); err != nil {
		fail(err)
	}
	if *reportPath != "" {
		if o.report, err = os.Create(*reportPath); err != nil {
			fail(err)
		}
		defer o.report.Close()
		fmt.Fprintf(o.report, "Istio oracle (tests/oracles/istio-envoyfilter), istio.io/istio %s, seed %d\n\n", istioModuleVersion(), *seed)
	}
	fmt.Printf("istio-envoyfilter: seed %d (PO_ISTIOEF_SEED=%d replays it), %d generated cases, istio.io/istio %s\n",
		*seed, *seed, *cases, istioModuleVersion())
	replayed := 0
	if *corpus != "" {
		files, _ := filepath.Glob(filepath.Join(*corpus, "*.yaml"))
		sort.Strings(files)
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				fail(err)
			}
			if err := o.check("corpus/"+filepath.Base(f), b); err != nil {
				fail(err)
			}
			replayed++
		}
	}
	start := time.Now()
	for i := 0; i < int(*cases); i++ {
		g := newGen(*seed, i)
		po, svc := g.propertyOverride(fmt.Sprintf("c%d", i))
		b, err := caseYAML(po, svc)
		if err != nil {
			fail(err)
		}
		if err := o.check(fmt.Sprintf("seed-%d-case-%d", *seed, i), b); err != nil {
			fail(err)
		}
	}
	fmt.Printf("\ncases: %d (%d from the corpus) in %.0f s\n", o.cases, replayed, time.Since(start).Seconds())
	o.oursRefused.print("refused by our render (first finding of each)")
	o.oursWarn.print("our render's warnings")
	fmt.Printf("accepted by our render: %d\n", o.accepted)
	o.istioRefused.print("refused by Istio")
	o.istioWarn.print("Istio's validation warnings")
	fmt.Printf("same result as our engine: %d (of which Envoy would refuse %d: a message a patch creates breaks its rules, preview says so, on either mesh)\n", o.same, o.envoyRefuses)
	o.diff.print("mismatches")
	total := 0
	for _, n := range o.diff {
		total += n
	}
	if total > 0 {
		fmt.Printf("FAIL: %d mismatches (seed %d)\n", total, *seed)
		os.Exit(1)
	}
	fmt.Printf("ok: %d accepted cases, each the same in Istio's code and our engine\n", o.accepted)
}

// istioModuleVersion is the istio.io/istio this program was built with (its go.mod pins it).
func istioModuleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "istio.io/istio" {
				return d.Version
			}
		}
	}
	return "(unknown)"
}
