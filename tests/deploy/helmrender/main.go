// helmrender: renders a Helm chart the way `helm template` does, for tests on machines without
// the helm binary. Same engine (Go text/template + sprig, minus env/expandenv as in Helm), Helm's
// own functions (include, tpl, required, toYaml, fromYaml, toJson, fromJson, lookup -> empty),
// the .Values/.Release/.Chart/.Capabilities/.Template objects, values.yaml coalesced with -f
// files (later wins, null deletes), and values.schema.json validation before rendering.
//
// Built offline in GOPATH mode from Debian's packaged Go sources (tests/deploy/build-helmrender.sh).
//
//	helmrender --chart DIR [-f values.yaml]... [--name R] [--namespace NS]
//	           [--api-versions G/V]... [--include-crds] [--notes] [--as-subchart]
//
// --as-subchart renders DIR as a dependency of an umbrella chart: the -f files are the
// umbrella's values, and the chart gets what Helm gives a subchart: its values.yaml coalesced
// with the umbrella's section named after the chart, plus `global` (the umbrella's, {} when it
// has none: Helm adds it to every subchart's values), validated against the chart's own schema.
//	helmrender yaml2json FILE...     every YAML document of the files as one JSON array
//
// Output: the rendered manifests as a YAML stream, each preceded by `# Source: <chart>/<file>`.
// Exit 1 with Helm's message when values fail the schema or a template fails.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	sprig "github.com/Masterminds/sprig"
	"github.com/xeipuuv/gojsonschema"
	yaml2 "gopkg.in/yaml.v2"
	yaml3 "gopkg.in/yaml.v3"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// Chart mirrors the Chart.yaml fields templates read (.Chart.Name etc.).
type Chart struct {
	APIVersion  string `json:"apiVersion"`
	Name        string `json:"name"`
	Version     string `json:"version"`
	AppVersion  string `json:"appVersion"`
	Description string `json:"description"`
	Type        string `json:"type"`
	KubeVersion string `json:"kubeVersion"`
}

type Release struct {
	Name      string
	Namespace string
	Service   string
	Revision  int
	IsInstall bool
	IsUpgrade bool
}

type KubeVersion struct{ Version, Major, Minor, GitVersion string }

func (k KubeVersion) String() string { return k.Version }

type VersionSet []string

func (v VersionSet) Has(s string) bool {
	for _, x := range v {
		if x == s {
			return true
		}
	}
	return false
}

type Capabilities struct {
	KubeVersion KubeVersion
	APIVersions VersionSet
}

func die(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "Error: "+format+"\n", a...)
	os.Exit(1)
}

// readYAML decodes YAML into JSON-shaped values (map[string]interface{}, float64 numbers), as
// Helm does by going through sigs.k8s.io/yaml.
func readYAML(data []byte) (map[string]interface{}, error) {
	var raw interface{}
	if err := yaml3.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return map[string]interface{}{}, nil
	}
	j, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var out map[string]interface{}
	if err := json.Unmarshal(j, &out); err != nil {
		return nil, fmt.Errorf("top level is not a mapping")
	}
	return out, nil
}

// coalesce merges src over dst the way Helm merges user values over the chart's: maps merge
// recursively, anything else replaces, an explicit null deletes the key.
func coalesce(dst, src map[string]interface{}) {
	for k, v := range src {
		if v == nil {
			delete(dst, k)
			continue
		}
		sm, sok := v.(map[string]interface{})
		dm, dok := dst[k].(map[string]interface{})
		if sok && dok {
			coalesce(dm, sm)
			continue
		}
		dst[k] = v
	}
}

func toYAML(v interface{}) string {
	j, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	var obj interface{}
	if err := yaml2.Unmarshal(j, &obj); err != nil {
		return ""
	}
	out, err := yaml2.Marshal(obj)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(string(out), "\n")
}

func fromYAML(s string) map[string]interface{} {
	m, err := readYAML([]byte(s))
	if err != nil {
		return map[string]interface{}{"Error": err.Error()}
	}
	return m
}

func toJSON(v interface{}) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func fromJSON(s string) map[string]interface{} {
	m := map[string]interface{}{}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		m["Error"] = err.Error()
	}
	return m
}

func required(msg string, v interface{}) (interface{}, error) {
	if v == nil {
		return v, errors.New(msg)
	}
	if s, ok := v.(string); ok && s == "" {
		return v, errors.New(msg)
	}
	return v, nil
}

// validateSchema checks values against values.schema.json and formats failures as Helm does.
func validateSchema(chartName string, schema []byte, values map[string]interface{}) error {
	res, err := gojsonschema.Validate(gojsonschema.NewBytesLoader(schema), gojsonschema.NewGoLoader(values))
	if err != nil {
		return fmt.Errorf("values.schema.json: %v", err)
	}
	if res.Valid() {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n", chartName)
	for _, e := range res.Errors() {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	return errors.New(strings.TrimSuffix(b.String(), "\n"))
}

// yaml2json prints the documents of multi-document YAML files as one JSON array (empty
// documents skipped), so the Node.js checks need no YAML parser of their own.
func yaml2json(files []string) {
	docs := []interface{}{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			die("%v", err)
		}
		dec := yaml3.NewDecoder(bytes.NewReader(data))
		for n := 1; ; n++ {
			var doc interface{}
			if err := dec.Decode(&doc); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				die("%s: document %d: %v", f, n, err)
			}
			if doc != nil {
				docs = append(docs, doc)
			}
		}
	}
	out, err := json.MarshalIndent(docs, "", " ")
	if err != nil {
		die("%v", err)
	}
	os.Stdout.Write(append(out, '\n'))
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "yaml2json" {
		yaml2json(os.Args[2:])
		return
	}
	var chartDir, relName, relNS string
	var valueFiles, apiVersions listFlag
	includeCRDs, notes, asSubchart := false, false, false
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 >= len(args) {
				die("%s needs a value", a)
			}
			i++
			return args[i]
		}
		switch a {
		case "--chart":
			chartDir = next()
		case "-f", "--values":
			valueFiles.Set(next())
		case "--name":
			relName = next()
		case "--namespace", "-n":
			relNS = next()
		case "--api-versions":
			apiVersions.Set(next())
		case "--include-crds":
			includeCRDs = true
		case "--notes":
			notes = true
		case "--as-subchart":
			asSubchart = true
		default:
			die("unknown argument %q (see the comment at the top of helmrender/main.go)", a)
		}
	}
	if chartDir == "" {
		die("--chart DIR is required")
	}
	if relName == "" {
		relName = "propertyoverride"
	}
	if relNS == "" {
		relNS = "default"
	}

	chartYAML, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		die("%v", err)
	}
	cm, err := readYAML(chartYAML)
	if err != nil {
		die("Chart.yaml: %v", err)
	}
	var chart Chart
	cj, _ := json.Marshal(cm)
	_ = json.Unmarshal(cj, &chart)

	values := map[string]interface{}{}
	if data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml")); err == nil {
		if values, err = readYAML(data); err != nil {
			die("values.yaml: %v", err)
		}
	}
	// Each file over the chart's values in turn (a null deletes a default); as a subchart, over
	// the umbrella's values, whose section for the chart then goes over the chart's.
	given := map[string]interface{}{}
	if !asSubchart {
		given = values
	}
	for _, f := range valueFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			die("%v", err)
		}
		over, err := readYAML(data)
		if err != nil {
			die("%s: %v", f, err)
		}
		coalesce(given, over)
	}
	if asSubchart {
		section, _ := given[chart.Name].(map[string]interface{})
		global, _ := given["global"].(map[string]interface{})
		given = map[string]interface{}{}
		if section != nil {
			given = section
		}
		if global == nil {
			global = map[string]interface{}{}
		}
		given["global"] = global
		coalesce(values, given)
	}
	if schema, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json")); err == nil {
		if err := validateSchema(chart.Name, schema, values); err != nil {
			die("%v", err)
		}
	}

	base := []string{"v1", "apps/v1", "policy/v1", "rbac.authorization.k8s.io/v1",
		"admissionregistration.k8s.io/v1", "apiextensions.k8s.io/v1", "coordination.k8s.io/v1"}
	caps := Capabilities{
		KubeVersion: KubeVersion{Version: "v1.32.0", Major: "1", Minor: "32", GitVersion: "v1.32.0"},
		APIVersions: append(VersionSet(base), apiVersions...),
	}

	root := template.New("gotpl")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env")
	delete(funcs, "expandenv")
	includedNames := map[string]int{}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		if includedNames[name] > 1000 {
			return "", fmt.Errorf("rendering template has a nested reference name: %s", name)
		}
		includedNames[name]++
		defer func() { includedNames[name]-- }()
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, data); err != nil {
			return "", err
		}
		return buf.String(), nil
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		t, err := root.Clone()
		if err != nil {
			return "", err
		}
		t, err = t.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		if err := t.Execute(&buf, data); err != nil {
			return "", err
		}
		return strings.ReplaceAll(buf.String(), "<no value>", ""), nil
	}
	funcs["required"] = required
	funcs["toYaml"] = toYAML
	funcs["fromYaml"] = fromYAML
	funcs["toJson"] = toJSON
	funcs["fromJson"] = fromJSON
	funcs["lookup"] = func(string, string, string, string) (map[string]interface{}, error) {
		return map[string]interface{}{}, nil
	}
	root.Funcs(funcs).Option("missingkey=zero")

	tdir := filepath.Join(chartDir, "templates")
	entries, err := os.ReadDir(tdir)
	if err != nil {
		die("%v", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(tdir, e.Name()))
		if err != nil {
			die("%v", err)
		}
		name := path.Join(chart.Name, "templates", e.Name())
		if _, err := root.New(name).Parse(string(data)); err != nil {
			die("parse error in %s: %v", name, err)
		}
		names = append(names, name)
	}
	sort.Strings(names)

	var out strings.Builder
	if includeCRDs && !notes {
		crds, _ := filepath.Glob(filepath.Join(chartDir, "crds", "*.yaml"))
		sort.Strings(crds)
		for _, f := range crds {
			data, err := os.ReadFile(f)
			if err != nil {
				die("%v", err)
			}
			fmt.Fprintf(&out, "---\n# Source: %s/crds/%s\n%s\n", chart.Name, filepath.Base(f), strings.TrimRight(string(data), "\n"))
		}
	}
	for _, name := range names {
		b := path.Base(name)
		isNotes := b == "NOTES.txt"
		if strings.HasPrefix(b, "_") || isNotes != notes {
			continue
		}
		if !isNotes && !strings.HasSuffix(b, ".yaml") && !strings.HasSuffix(b, ".yml") && !strings.HasSuffix(b, ".tpl") {
			continue
		}
		top := map[string]interface{}{
			"Values":       values,
			"Release":      Release{Name: relName, Namespace: relNS, Service: "Helm", Revision: 1, IsInstall: true},
			"Chart":        chart,
			"Capabilities": caps,
			"Template":     map[string]interface{}{"Name": name, "BasePath": path.Join(chart.Name, "templates")},
		}
		var buf bytes.Buffer
		if err := root.ExecuteTemplate(&buf, name, top); err != nil {
			die("%v", err)
		}
		s := strings.ReplaceAll(buf.String(), "<no value>", "")
		if strings.TrimSpace(s) == "" {
			continue
		}
		if notes {
			out.WriteString(s)
			continue
		}
		fmt.Fprintf(&out, "---\n# Source: %s\n%s\n", name, strings.TrimRight(s, "\n"))
	}
	os.Stdout.WriteString(out.String())
}
