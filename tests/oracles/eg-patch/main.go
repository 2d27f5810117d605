// eg-patch: Envoy Gateway v1.9.1's own EnvoyPatchPolicy application (processJSONPatches:
// protojson with proto names, its JSON Patch with EnsurePathExistsOnAdd, protojson unmarshal,
// Validate), run on cases the tests generate, each compared proto-equal with the result our
// engine gave for the same PropertyOverride.
//
// Reads JSON lines from stdin, one case each:
//
//	{"id": "...", "resources": [{"type": URL, "json": {...}}],
//	 "patches": [{"type": URL, "name": "...", "operation": {"op", "path", "value"}}],
//	 "ours": [{"type": URL, "json": {...}}]}       (our result, the resources in the same order;
//	                                               optional: without it, Envoy Gateway's result is printed)
//
// and writes one line per case:
//
//	{"id", "eg_error": "..." (Envoy Gateway's error: the policy would be Invalid, or an entry's
//	 resource was not found), "condition",
//	 "ours_error": "..." (our result does not decode in Envoy Gateway's Envoy API),
//	 "equal": bool (no eg_error, and every resource proto-equal to ours when given),
//	 "diffs": [{"index", "type", "eg", "ours"}] (the resources that differ, as protojson),
//	 "resources": [{"type", "json"}] (without "ours": every resource after the patches)}
//
// A case whose input cannot be read is a line with "input_error" (the test fails on it).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/envoyproxy/gateway/pooracle"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
)

type resourceJSON struct {
	Type string          `json:"type"`
	JSON json.RawMessage `json:"json"`
}

type patchJSON struct {
	Type      string `json:"type"`
	Name      string `json:"name"`
	Operation struct {
		Op    string          `json:"op"`
		Path  *string         `json:"path"`
		From  *string         `json:"from"`
		Value json.RawMessage `json:"value"`
	} `json:"operation"`
}

type caseJSON struct {
	ID        string         `json:"id"`
	Resources []resourceJSON `json:"resources"`
	Patches   []patchJSON    `json:"patches"`
	Ours      []resourceJSON `json:"ours"`
}

type diffJSON struct {
	Index int             `json:"index"`
	Type  string          `json:"type"`
	EG    json.RawMessage `json:"eg"`
	Ours  json.RawMessage `json:"ours"`
}

type verdictJSON struct {
	ID         string         `json:"id"`
	InputError string         `json:"input_error,omitempty"`
	EGError    string         `json:"eg_error,omitempty"`
	OursError  string         `json:"ours_error,omitempty"` // our result does not decode in Envoy Gateway's Envoy API
	Condition  string         `json:"condition,omitempty"`
	Equal      bool           `json:"equal"`
	Diffs      []diffJSON     `json:"diffs,omitempty"`
	Resources  []resourceJSON `json:"resources,omitempty"`
}

var marshal = protojson.MarshalOptions{UseProtoNames: true}

func decode(r resourceJSON) (proto.Message, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByURL(r.Type)
	if err != nil {
		return nil, fmt.Errorf("type %s: %w", r.Type, err)
	}
	m := mt.New().Interface()
	if err := protojson.Unmarshal(r.JSON, m); err != nil {
		return nil, fmt.Errorf("%s: %w", r.Type, err)
	}
	return m, nil
}

func decodeAll(rs []resourceJSON) ([]pooracle.Resource, error) {
	out := make([]pooracle.Resource, 0, len(rs))
	for _, r := range rs {
		m, err := decode(r)
		if err != nil {
			return nil, err
		}
		out = append(out, pooracle.Resource{Type: r.Type, Message: m})
	}
	return out, nil
}

func entries(ps []patchJSON) []pooracle.Entry {
	out := make([]pooracle.Entry, 0, len(ps))
	for _, p := range ps {
		e := pooracle.Entry{Type: p.Type, Name: p.Name, Op: p.Operation.Op, Path: p.Operation.Path, From: p.Operation.From}
		if len(p.Operation.Value) > 0 {
			e.Value = p.Operation.Value
		}
		out = append(out, e)
	}
	return out
}

func judge(c caseJSON) verdictJSON {
	v := verdictJSON{ID: c.ID}
	resources, err := decodeAll(c.Resources)
	if err == nil && c.Ours != nil && len(c.Ours) != len(c.Resources) {
		err = fmt.Errorf("%d resources but %d of ours", len(c.Resources), len(c.Ours))
	}
	var res pooracle.Result
	if err == nil {
		res, err = pooracle.Apply(resources, entries(c.Patches))
	}
	if err == nil && len(res.Resources) != len(c.Resources) {
		err = fmt.Errorf("Envoy Gateway returned %d resources of %d", len(res.Resources), len(c.Resources))
	}
	if err != nil {
		v.InputError = err.Error()
		return v
	}
	v.Condition = res.Condition
	if res.Err != nil {
		v.EGError = res.Err.Error()
	}
	// An entry whose resource is not found is no error of processJSONPatches, only the policy's
	// condition (Programmed=False, ResourceNotFound): a failure all the same.
	if strings.HasPrefix(res.Condition, "ResourceNotFound") {
		v.EGError = strings.TrimPrefix(v.EGError+"\n"+res.Condition, "\n")
	}
	if c.Ours == nil {
		for _, r := range res.Resources {
			j, _ := marshal.Marshal(r.Message)
			v.Resources = append(v.Resources, resourceJSON{Type: r.Type, JSON: j})
		}
		v.Equal = res.Err == nil
		return v
	}
	for i, r := range c.Ours {
		// Our result in Envoy Gateway's Envoy API: a field it lacks (another Envoy release) is a
		// difference, not a bad input.
		our, err := decode(r)
		if err != nil {
			v.OursError = err.Error()
		} else if proto.Equal(res.Resources[i].Message, our) {
			continue
		}
		eg, _ := marshal.Marshal(res.Resources[i].Message)
		d := diffJSON{Index: i, Type: r.Type, EG: eg, Ours: r.JSON}
		if our != nil {
			d.Ours, _ = marshal.Marshal(our)
		}
		v.Diffs = append(v.Diffs, d)
	}
	v.Equal = res.Err == nil && len(v.Diffs) == 0
	return v
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	for in.Scan() {
		var c caseJSON
		var v verdictJSON
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			v = verdictJSON{ID: c.ID, InputError: "case: " + err.Error()}
		} else {
			v = judge(c)
		}
		if err := enc.Encode(&v); err != nil {
			fmt.Fprintln(os.Stderr, "eg-patch:", err)
			os.Exit(2)
		}
	}
	if err := in.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "eg-patch: reading stdin:", err)
		os.Exit(2)
	}
}
