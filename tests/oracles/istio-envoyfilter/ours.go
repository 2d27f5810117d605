package main

// Our side, as a user runs it: `propertyoverride render` for the EnvoyFilter (the adapter in
// controller/targets and the CLI's YAML writer), and `propertyoverride preview --mesh istio`
// for what our engine does to the same resources with Consul's meaning (the compile, Istio's
// naming of directions and services, the patches applied in order).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"strings"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

type run struct {
	stdout, stderr []byte
	exit           int
}

func runCLI(cli string, args ...string) (run, error) {
	cmd := exec.Command(cli, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := run{stdout: out.Bytes(), stderr: errb.Bytes()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.exit = ee.ExitCode()
		return r, nil
	}
	return r, err
}

var (
	diagLine    = regexp.MustCompile(`^[^\n]*?:\d+:\d+: (error|warning): (.*)$`)
	diagPrefix  = regexp.MustCompile(`^(document \d+: )?(PropertyOverride [^ ]+: )?(Patches\[\d+\] [^ ]*: )?(invalid Patches\[\d+\]: )?`)
	quoted      = regexp.MustCompile(`'[^']*'|"[^"]*"`)
	leadPath    = regexp.MustCompile(`^/[^ ]*: `)
	digits      = regexp.MustCompile(`\d+`)
	istioReason = "not expressible in an Istio EnvoyFilter: "
)

// reasons reads render's or preview's report: each finding's message as a class (what the
// finding says, its quoted values and numbers left out), errors and warnings apart.
func reasons(stderr []byte) (errs, warns []string) {
	for _, line := range strings.Split(string(stderr), "\n") {
		m := diagLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		msg := diagPrefix.ReplaceAllString(m[2], "")
		if strings.HasPrefix(msg, istioReason) {
			msg = strings.TrimPrefix(msg, istioReason)
			if i := strings.IndexAny(msg, ":("); i > 0 {
				msg = msg[:i]
			}
			msg = "istio adapter: " + digits.ReplaceAllString(strings.TrimSpace(msg), "N")
		} else {
			// the class, not the instance: no path, no quoted names or numbers, no hint
			msg = digits.ReplaceAllString(quoted.ReplaceAllString(leadPath.ReplaceAllString(msg, ""), "_"), "N")
			msg = dropHint(msg)
			if len(msg) > 110 {
				msg = msg[:110] + "..."
			}
		}
		if m[1] == "error" {
			errs = append(errs, msg)
		} else {
			warns = append(warns, msg)
		}
	}
	return errs, warns
}

func newOf(kind string) proto.Message {
	switch kind {
	case "cluster":
		return &cluster.Cluster{}
	case "listener":
		return &listener.Listener{}
	case "route":
		return &route.RouteConfiguration{}
	}
	return nil
}

// ruleError is preview's error for a message a patch created that breaks one of Envoy's rules
// (a ClusterLoadAssignment without its cluster_name): the patches were applied, the result is
// there, and Envoy would refuse it, on either mesh (the Envoy-exact issue's class E).
func ruleError(e string) bool { return strings.Contains(e, "breaks Envoy's rule") }

// previewAfter runs preview and returns each resource as our engine leaves it (protojson, as
// canonical prints it) with the Envoy rules the result breaks, or the errors of patches that
// failed.
func previewAfter(cli, poFile, dumpFile string, rs []resource) (after map[string][]byte, broken, failed []string, err error) {
	r, err := runCLI(cli, "preview", "-f", poFile, "--config-dump", dumpFile, "--mesh", "istio", "--istio-version", istioVersion, "-o", "json")
	if err != nil {
		return nil, nil, nil, err
	}
	if r.exit != 0 && r.exit != 1 {
		return nil, nil, nil, fmt.Errorf("preview exited %d: %s", r.exit, r.stderr)
	}
	var rep struct {
		Errors    []json.RawMessage `json:"errors"`
		Resources []struct {
			Name    string          `json:"name"`
			Type    string          `json:"type"`
			Changed bool            `json:"changed"`
			After   json.RawMessage `json:"after"`
		} `json:"resources"`
	}
	if len(r.stdout) == 0 && r.exit == 1 { // the override itself was refused: no report
		errs, _ := reasons(r.stderr)
		return nil, nil, append(errs, "preview refused the PropertyOverride render accepted"), nil
	}
	if err := json.Unmarshal(r.stdout, &rep); err != nil {
		return nil, nil, nil, fmt.Errorf("preview's JSON report: %v (stderr: %s)", err, r.stderr)
	}
	for _, e := range rep.Errors {
		var text string
		if json.Unmarshal(e, &text) != nil {
			text = string(e)
		}
		if ruleError(text) {
			broken = append(broken, text)
		} else {
			failed = append(failed, text)
		}
	}
	if r.exit == 1 && len(rep.Errors) == 0 {
		failed = append(failed, "preview exited 1 without an error in its report: "+string(r.stderr))
	}
	if len(failed) > 0 {
		return nil, broken, failed, nil
	}
	after = map[string][]byte{}
	for _, x := range rs {
		b, err := canonical(x.msg)
		if err != nil {
			return nil, nil, nil, err
		}
		after[x.key()] = b
	}
	for _, x := range rep.Resources {
		if !x.Changed {
			continue
		}
		m := newOf(x.Type)
		if m == nil {
			return nil, nil, nil, fmt.Errorf("preview changed a %s (%s), which no patch here names", x.Type, x.Name)
		}
		if err := protojson.Unmarshal(x.After, m); err != nil {
			return nil, nil, nil, fmt.Errorf("preview's %s %s does not read as protojson: %v", x.Type, x.Name, err)
		}
		b, err := canonical(m)
		if err != nil {
			return nil, nil, nil, err
		}
		after[x.Type+"/"+x.Name] = b
	}
	return after, broken, nil, nil
}

// dropHint cuts a message at its first parenthesis holding words (a hint: "(did you mean _?)",
// "(a Duration is written ...)"), keeping type names such as "(int)".
func dropHint(msg string) string {
	for i := 0; i+1 < len(msg); i++ {
		if msg[i] != ' ' || msg[i+1] != '(' {
			continue
		}
		end := strings.IndexByte(msg[i+2:], ')')
		if end < 0 || strings.Contains(msg[i+2:i+2+end], " ") {
			return msg[:i]
		}
	}
	return msg
}
