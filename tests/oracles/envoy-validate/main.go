// envoy-validate: Envoy's own protoc-gen-validate validators (go-control-plane's generated
// ValidateAll) as a test oracle.
//
// Reads cases on stdin, one JSON object a line:
//
//	{"type": "Cluster", "value": {...proto3 JSON...}}
//	{"type": "Cluster", "binary": "<base64 of the wire bytes>"}
//
// (binary: what Envoy receives over xDS; it also carries what proto3 JSON cannot, such as a
// Duration whose nanos are out of range, which the validators judge and protojson refuses).
// `type` is Cluster, ClusterLoadAssignment, Listener, RouteConfiguration or any message's full
// name ("envoy.config.core.v3.Address"). Prints one JSON line per case, in order:
//
//	{"violations": [{"path": "/outlier_detection/max_ejection_percent", "reason": "value must be ..."}]}
//	{"error": "..."}      the case could not be read (bad JSON, unknown type, protojson refused it)
//
// With "describe": true instead of a value, the answer is the message's own schema in this
// version, for comparing with another: {"fields": [{"name": ..., "rules": <validate.FieldRules as
// proto3 JSON with proto names, or absent>}], "required_oneofs": [...]}.
//
// A violation's path is made of proto field names (a oneof's name for "value is required" on a
// oneof), list indexes and map keys, from the message given: the Go field names of the generated
// validation errors mapped back through the message's descriptor. One process judges any number
// of cases; output is flushed at end of input, or after every line with -line-buffered.
//
// One program is built per embedded snapshot (build.sh), envoy-validate-vX.Y.Z from the envoy
// module vX.Y.Z: -version prints the version it was built from. -descriptor-set and
// -compare-descriptors print or compare its descriptor registry (descriptors.go).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/envoyproxy/protoc-gen-validate/validate"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

var shortNames = map[string]string{
	"Cluster":               "envoy.config.cluster.v3.Cluster",
	"ClusterLoadAssignment": "envoy.config.endpoint.v3.ClusterLoadAssignment",
	"Listener":              "envoy.config.listener.v3.Listener",
	"RouteConfiguration":    "envoy.config.route.v3.RouteConfiguration",
}

type input struct {
	Type     string          `json:"type"`
	Value    json.RawMessage `json:"value"`
	Binary   []byte          `json:"binary"`
	Describe bool            `json:"describe"`
}

type fieldInfo struct {
	Name  string          `json:"name"`
	Rules json.RawMessage `json:"rules,omitempty"`
}

type violation struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// One answer: violations (a case judged), fields (a message described) or an error.
type output struct {
	Violations *[]violation `json:"violations,omitempty"`
	Fields     []fieldInfo  `json:"fields,omitempty"`
	Required   []string     `json:"required_oneofs,omitempty"`
	Error      string       `json:"error,omitempty"`
}

// What every generated <Message>ValidationError offers, and every <Message>MultiError.
type fieldError interface {
	Field() string
	Reason() string
	Cause() error
	Key() bool
}

type multiError interface {
	AllErrors() []error
}

type allValidator interface {
	ValidateAll() error
}

func main() {
	lineBuffered := flag.Bool("line-buffered", false, "flush the output after every case")
	version := flag.Bool("version", false, "print the envoy module version this program was built from")
	descSet := flag.Bool("descriptor-set", false, "print every Envoy v3 file and its imports as a binary FileDescriptorSet")
	compare := flag.String("compare-descriptors", "", "compare a FileDescriptorSet `FILE` with -descriptor-set's, file by file")
	flag.Parse()
	switch {
	case *version:
		fmt.Println(envoyVersion())
		return
	case *descSet:
		out := bufio.NewWriter(os.Stdout)
		if err := writeDescriptorSet(out); err != nil {
			fmt.Fprintln(os.Stderr, "envoy-validate:", err)
			os.Exit(2)
		}
		if err := out.Flush(); err != nil {
			fmt.Fprintln(os.Stderr, "envoy-validate:", err)
			os.Exit(2)
		}
		return
	case *compare != "":
		bad, err := compareDescriptors(*compare, os.Stdout)
		if err != nil {
			fmt.Fprintln(os.Stderr, "envoy-validate:", err)
			os.Exit(2)
		}
		if bad > 0 {
			os.Exit(1)
		}
		return
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			if e := enc.Encode(judge(line)); e != nil {
				fmt.Fprintln(os.Stderr, "envoy-validate:", e)
				os.Exit(2)
			}
			if *lineBuffered {
				out.Flush()
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "envoy-validate:", err)
			os.Exit(2)
		}
	}
}

// envoyVersion is the envoy module's version in the build information ("v1.37.0").
func envoyVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/envoyproxy/go-control-plane/envoy" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func judge(line []byte) output {
	var c input
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields() // a key this version does not know is no case to judge silently
	if err := dec.Decode(&c); err != nil {
		return output{Error: "case: " + err.Error()}
	}
	name := c.Type
	if full, ok := shortNames[name]; ok {
		name = full
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		return output{Error: fmt.Sprintf("type %q: %v", c.Type, err)}
	}
	m := mt.New().Interface()
	if c.Describe {
		return describe(m.ProtoReflect().Descriptor())
	}
	if c.Binary != nil {
		if err := proto.Unmarshal(c.Binary, m); err != nil {
			return output{Error: "binary: " + err.Error()}
		}
	} else if len(c.Value) > 0 {
		if err := protojson.Unmarshal(c.Value, m); err != nil {
			return output{Error: "protojson: " + err.Error()}
		}
	}
	v, ok := m.(allValidator)
	if !ok {
		return output{Error: fmt.Sprintf("type %q has no ValidateAll", name)}
	}
	vs := []violation{}
	flatten(v.ValidateAll(), m.ProtoReflect().Descriptor(), "", &vs)
	return output{Violations: &vs}
}

// flatten walks a ValidateAll error tree: multi-errors are lists, a field error whose cause is
// another validation error ("embedded message failed validation") descends into that field's
// message, anything else is one violation.
func flatten(err error, md protoreflect.MessageDescriptor, prefix string, out *[]violation) {
	if err == nil {
		return
	}
	if me, ok := err.(multiError); ok {
		for _, e := range me.AllErrors() {
			flatten(e, md, prefix, out)
		}
		return
	}
	fe, ok := err.(fieldError)
	if !ok {
		*out = append(*out, violation{Path: prefix, Reason: err.Error()})
		return
	}
	path, sub := resolve(md, fe.Field(), prefix)
	cause := fe.Cause()
	if cause != nil && sub != nil && isValidation(cause) {
		flatten(cause, sub, path, out)
		return
	}
	reason := fe.Reason()
	if fe.Key() {
		reason = "key: " + reason
	}
	if cause != nil {
		reason += ": " + cause.Error()
	}
	*out = append(*out, violation{Path: path, Reason: reason})
}

func isValidation(err error) bool {
	switch err.(type) {
	case multiError, fieldError:
		return true
	}
	return false
}

// norm is how a generated Go name and a proto name are compared: protoc-gen-go's CamelCase
// drops the underscores before letters and upper-cases them, keeping some before digits
// ("EnforcingConsecutive_5Xx"); lower-cased without underscores both sides agree.
func norm(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSuffix(s, "_")), "_", "")
}

// resolve maps a generated error's field ("MaxEjectionPercent", "LbEndpoints[2]",
// "FilterMetadata[key]", or a oneof's name) to its proto path under prefix, and gives the
// message the field holds (a list's item, a map's value), if any.
func resolve(md protoreflect.MessageDescriptor, field, prefix string) (string, protoreflect.MessageDescriptor) {
	name, index, hasIndex := field, "", false
	if i := strings.IndexByte(field, '['); i >= 0 && strings.HasSuffix(field, "]") {
		name, index, hasIndex = field[:i], field[i+1:len(field)-1], true
	}
	want := norm(name)
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		if norm(string(f.Name())) != want {
			continue
		}
		path := prefix + "/" + string(f.Name())
		if hasIndex {
			path += "/" + index
		}
		switch {
		case f.IsMap():
			return path, f.MapValue().Message()
		default:
			return path, f.Message()
		}
	}
	oneofs := md.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		if o := oneofs.Get(i); norm(string(o.Name())) == want {
			return prefix + "/" + string(o.Name()), nil
		}
	}
	// Not a name of this message: keep the generated one, so a reader sees the mismatch.
	return prefix + "/?" + field, nil
}

// describe gives a message's fields and their protoc-gen-validate rules as this version has them.
func describe(md protoreflect.MessageDescriptor) output {
	o := output{Fields: []fieldInfo{}}
	opts := protojson.MarshalOptions{UseProtoNames: true}
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		fi := fieldInfo{Name: string(f.Name())}
		if fo := f.Options(); fo != nil && proto.HasExtension(fo, validate.E_Rules) {
			if r, ok := proto.GetExtension(fo, validate.E_Rules).(*validate.FieldRules); ok && r != nil {
				b, err := opts.Marshal(r)
				if err != nil {
					return output{Error: "rules of " + string(f.FullName()) + ": " + err.Error()}
				}
				fi.Rules = b
			}
		}
		o.Fields = append(o.Fields, fi)
	}
	oneofs := md.Oneofs()
	for i := 0; i < oneofs.Len(); i++ {
		od := oneofs.Get(i)
		if oo := od.Options(); oo != nil && proto.HasExtension(oo, validate.E_Required) {
			if req, ok := proto.GetExtension(oo, validate.E_Required).(bool); ok && req {
				o.Required = append(o.Required, string(od.Name()))
			}
		}
	}
	return o
}
