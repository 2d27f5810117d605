// consulpeer: the speed of Consul's builtin/property-override PatchStruct, for bench_engine's
// side-by-side table (tests/bench/bench_engine.c --peer). The algorithm is written here from
// its public description (docs/consul-semantics.md: strip leading '/', split on '/', walk exact
// proto field names with protoreflect, add initialises parents and sets a scalar, a wrapper,
// a typed list or a new message of the named children; remove never creates parents and
// clears a set field; an unknown name lists the message's first 10 fields). Consul's own Go
// module is not used (BUSL). Values are typed as Consul's tests type them (int, float64,
// string, map[string]interface{}, []string). It pays what Consul's structpatcher.go pays and
// no more (checked against its public source; docs/benchmarks.md lists what was compared).
//
// Usage: consulpeer --cluster FILE (a binary envoy.config.cluster.v3.Cluster) --n N --repeat R
// Prints one line per case: "<case index> <ns per PatchStruct on a fresh copy>": copies cloned
// in groups of 16 just before (not timed), then patched under one pair of clock reads; the
// median group, less the clock's own cost (the median of two back-to-back reads), per copy.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type patch struct {
	op, path string
	value    interface{}
}

// The cases of bench_engine.c's kCases, in its order.
var cases = []patch{
	{"add", "/outlier_detection/max_ejection_percent", 50},
	{"add", "/outlier_detection", map[string]interface{}{"consecutive_5xx": 7, "max_ejection_percent": 30,
		"enforcing_consecutive_5xx": 90, "success_rate_minimum_hosts": 3}},
	{"add", "/upstream_connection_options/tcp_keepalive/keepalive_time", 300},
	{"add", "/lrs_report_endpoint_metrics", []string{"cpu_utilization", "mem_utilization", "application_utilization"}},
	{"add", "/lb_policy", "RING_HASH"},
	{"remove", "/outlier_detection", nil},
	{"add", "/outlier_detection/max_ejection_percnt", 50},
}

var failing = map[int]bool{6: true}

// The field list as Consul's fieldListStr builds it: a strings.Builder written piece by piece
// (WriteString of the header's parts, each field's TextName and a newline, the closing
// sentence), no fmt. (Until issue 25 the header went through fmt.Fprintf and each newline was a
// WriteByte: on the unknown-field case that made the peer slower than Consul and the ratio
// against it flattering.)
func fieldList(md protoreflect.MessageDescriptor, debug bool) string {
	fs := md.Fields()
	n := fs.Len()
	cut := !debug && n > 10
	if cut {
		n = 10
	}
	b := strings.Builder{}
	b.WriteString("available ")
	b.WriteString(string(md.FullName()))
	b.WriteString(" fields:\n")
	for i := 0; i < n; i++ {
		b.WriteString(fs.Get(i).TextName())
		b.WriteString("\n")
	}
	if cut {
		b.WriteString("First 10 fields for this message included, configure with `Debug = true` to print all.")
	}
	return b.String()
}

func fieldType(fd protoreflect.FieldDescriptor) string {
	if fd.IsMap() {
		return "map"
	}
	t := fd.Kind().String()
	if fd.Kind() == protoreflect.MessageKind {
		t = string(fd.Message().FullName())
	}
	if fd.IsList() {
		return "repeated " + t
	}
	return t
}

func field(md protoreflect.MessageDescriptor, name string, debug bool) (protoreflect.FieldDescriptor, error) {
	fd := md.Fields().ByName(protoreflect.Name(name))
	if fd == nil {
		return nil, fmt.Errorf("no match for field '%s'!\n%s", name, fieldList(md, debug))
	}
	return fd, nil
}

func mismatch(v interface{}, fd protoreflect.FieldDescriptor) error {
	return fmt.Errorf("patch value type %T could not be applied to target field type '%s'", v, fieldType(fd))
}

func scalar(v interface{}, fd protoreflect.FieldDescriptor) (protoreflect.Value, error) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if s, ok := v.(string); ok {
			if ev := fd.Enum().Values().ByName(protoreflect.Name(s)); ev != nil {
				return protoreflect.ValueOfEnum(ev.Number()), nil
			}
		}
		if i, ok := v.(int); ok {
			if ev := fd.Enum().Values().ByNumber(protoreflect.EnumNumber(i)); ev != nil {
				return protoreflect.ValueOfEnum(ev.Number()), nil
			}
		}
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		switch n := v.(type) {
		case int:
			return protoreflect.ValueOfUint32(uint32(n)), nil
		case float64:
			return protoreflect.ValueOfUint32(uint32(n)), nil
		}
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		switch n := v.(type) {
		case int:
			return protoreflect.ValueOfInt32(int32(n)), nil
		case float64:
			return protoreflect.ValueOfInt32(int32(n)), nil
		}
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		switch n := v.(type) {
		case int:
			return protoreflect.ValueOfInt64(int64(n)), nil
		case float64:
			return protoreflect.ValueOfInt64(int64(n)), nil
		}
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		switch n := v.(type) {
		case int:
			return protoreflect.ValueOfUint64(uint64(n)), nil
		case float64:
			return protoreflect.ValueOfUint64(uint64(n)), nil
		}
	case protoreflect.DoubleKind:
		switch n := v.(type) {
		case int:
			return protoreflect.ValueOfFloat64(float64(n)), nil
		case float64:
			return protoreflect.ValueOfFloat64(n), nil
		}
	case protoreflect.FloatKind:
		switch n := v.(type) {
		case int:
			return protoreflect.ValueOfFloat32(float32(n)), nil
		case float64:
			return protoreflect.ValueOfFloat32(float32(n)), nil
		}
	case protoreflect.BoolKind:
		if b, ok := v.(bool); ok {
			return protoreflect.ValueOfBool(b), nil
		}
	case protoreflect.StringKind:
		if s, ok := v.(string); ok {
			return protoreflect.ValueOfString(s), nil
		}
	}
	return protoreflect.Value{}, mismatch(v, fd)
}

// toValue: the value for field fd of message m (a new message for wrappers and maps).
func toValue(m protoreflect.Message, fd protoreflect.FieldDescriptor, v interface{}, debug bool) (protoreflect.Value, error) {
	if fd.IsMap() {
		return protoreflect.Value{}, fmt.Errorf("unsupported target field type '%s'", fieldType(fd))
	}
	if fd.IsList() {
		ss, ok := v.([]string)
		if !ok || fd.Kind() != protoreflect.StringKind {
			return protoreflect.Value{}, mismatch(v, fd)
		}
		l := m.NewField(fd).List()
		for _, s := range ss {
			l.Append(protoreflect.ValueOfString(s))
		}
		return protoreflect.ValueOfList(l), nil
	}
	if fd.Kind() != protoreflect.MessageKind {
		return scalar(v, fd)
	}
	if obj, ok := v.(map[string]interface{}); ok {
		nm := m.Get(fd).Message().New()
		for k, cv := range obj {
			cf, err := field(nm.Descriptor(), k, debug)
			if err != nil {
				return protoreflect.Value{}, err
			}
			val, err := toValue(nm, cf, cv, debug)
			if err != nil {
				return protoreflect.Value{}, err
			}
			nm.Set(cf, val)
		}
		return protoreflect.ValueOfMessage(nm), nil
	}
	return wrapper(fd, v)
}

// wrapper: a google.protobuf.*Value target from a scalar. Consul names the wrapper by its full
// name and builds it with wrapperspb's constructors (a generated message, no reflective Set);
// so does the peer, so that it pays no more than Consul does.
func wrapper(fd protoreflect.FieldDescriptor, v interface{}) (protoreflect.Value, error) {
	name := fd.Message().FullName()
	if !strings.HasPrefix(string(name), "google.protobuf.") || !strings.HasSuffix(string(name), "Value") {
		return protoreflect.Value{}, fmt.Errorf("unsupported target field type '%s'", fieldType(fd))
	}
	switch x := v.(type) {
	case int:
		switch name {
		case "google.protobuf.UInt32Value":
			return protoreflect.ValueOfMessage(wrapperspb.UInt32(uint32(x)).ProtoReflect()), nil
		case "google.protobuf.UInt64Value":
			return protoreflect.ValueOfMessage(wrapperspb.UInt64(uint64(x)).ProtoReflect()), nil
		case "google.protobuf.Int32Value":
			return protoreflect.ValueOfMessage(wrapperspb.Int32(int32(x)).ProtoReflect()), nil
		case "google.protobuf.Int64Value":
			return protoreflect.ValueOfMessage(wrapperspb.Int64(int64(x)).ProtoReflect()), nil
		}
	case float64:
		switch name {
		case "google.protobuf.FloatValue":
			return protoreflect.ValueOfMessage(wrapperspb.Float(float32(x)).ProtoReflect()), nil
		case "google.protobuf.DoubleValue":
			return protoreflect.ValueOfMessage(wrapperspb.Double(x).ProtoReflect()), nil
		case "google.protobuf.UInt32Value":
			return protoreflect.ValueOfMessage(wrapperspb.UInt32(uint32(x)).ProtoReflect()), nil
		case "google.protobuf.UInt64Value":
			return protoreflect.ValueOfMessage(wrapperspb.UInt64(uint64(x)).ProtoReflect()), nil
		case "google.protobuf.Int32Value":
			return protoreflect.ValueOfMessage(wrapperspb.Int32(int32(x)).ProtoReflect()), nil
		case "google.protobuf.Int64Value":
			return protoreflect.ValueOfMessage(wrapperspb.Int64(int64(x)).ProtoReflect()), nil
		}
	case bool:
		if name == "google.protobuf.BoolValue" {
			return protoreflect.ValueOfMessage(wrapperspb.Bool(x).ProtoReflect()), nil
		}
	case string:
		if name == "google.protobuf.StringValue" {
			return protoreflect.ValueOfMessage(wrapperspb.String(x).ProtoReflect()), nil
		}
	}
	return protoreflect.Value{}, mismatch(v, fd)
}

func patchStruct(root protoreflect.Message, p patch, debug bool) (e error) {
	// As Consul's PatchStruct: a panic (a path through a scalar or an Any's fields) is an error.
	defer func() {
		if r := recover(); r != nil {
			e = fmt.Errorf("unexpected panic: %v", r)
		}
	}()
	if p.path == "" || p.path == "/" {
		return fmt.Errorf("non-empty, non-root Path is required;\n%s", fieldList(root.Descriptor(), debug))
	}
	segs := strings.Split(strings.TrimLeft(p.path, "/"), "/")
	m := root
	for _, s := range segs[:len(segs)-1] {
		if s == "" {
			return errors.New("empty field name in path")
		}
		fd, err := field(m.Descriptor(), s, debug)
		if err != nil {
			return err
		}
		switch {
		case fd.IsList():
			return fmt.Errorf("path contains member of repeated field '%s'; repeated field member access is not supported", s)
		case fd.IsMap():
			return fmt.Errorf("path contains member of map field '%s'; map field member access is not supported", s)
		}
		// Consul's walk: an unset parent is set to a new message on add (never on remove, which
		// walks on through the empty read-only view).
		fm := m.Get(fd).Message()
		if !fm.IsValid() && p.op == "add" {
			m.Set(fd, protoreflect.ValueOfMessage(fm.New()))
			fm = m.Get(fd).Message()
		}
		m = fm
	}
	last := segs[len(segs)-1]
	if last == "" {
		return errors.New("empty field name in path")
	}
	fd, err := field(m.Descriptor(), last, debug)
	if err != nil {
		return err
	}
	switch p.op {
	case "remove":
		if m.Has(fd) { // false on the read-only view of an unset parent
			m.Clear(fd)
		}
		return nil
	case "add":
		if p.value == nil {
			return errors.New("non-nil Value is required; use an empty map to reset all fields on a message or the 'remove' op to unset fields")
		}
		v, err := toValue(m, fd, p.value, debug)
		if err != nil {
			return err
		}
		m.Set(fd, v)
		return nil
	}
	return errors.New("unexpected error: no op implementation found")
}

// The median: a preemption on a shared machine does not move it.
func median(v []float64) float64 {
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func main() {
	clusterFile := flag.String("cluster", "", "binary envoy.config.cluster.v3.Cluster")
	n := flag.Int("n", 20000, "fresh copies per sample")
	repeat := flag.Int("repeat", 9, "samples")
	flag.Parse()
	data, err := os.ReadFile(*clusterFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	base := &clusterv3.Cluster{}
	if err := proto.Unmarshal(data, base); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	// What reading the clock twice costs, averaged: subtracted from each timing, as
	// bench_engine does.
	const pairs = 100001
	ov := make([]float64, pairs)
	for i := range ov {
		t0 := time.Now()
		ov[i] = float64(time.Since(t0).Nanoseconds())
	}
	perPair := median(ov)
	for ci, c := range cases {
		var samples []float64
		for r := 0; r < *repeat; r++ {
			// Copies in groups of 16, cloned together (not timed), then patched together under
			// one pair of clock reads, as bench_engine does.
			const group = 16
			groups := *n / group
			if groups < 1 {
				groups = 1
			}
			v := make([]float64, groups)
			copies := make([]protoreflect.Message, group)
			for g := 0; g < groups; g++ {
				for i := range copies {
					copies[i] = proto.Clone(base).ProtoReflect()
				}
				t0 := time.Now()
				var err error
				for i := range copies {
					err = patchStruct(copies[i], c, false)
				}
				v[g] = float64(time.Since(t0).Nanoseconds())
				if (err != nil) != failing[ci] {
					fmt.Fprintf(os.Stderr, "case %d: %v\n", ci, err)
					os.Exit(1)
				}
			}
			per := (median(v) - perPair) / group
			if per < 0 {
				per = 0
			}
			samples = append(samples, per)
		}
		sort.Float64s(samples)
		fmt.Printf("%d %.1f\n", ci, samples[len(samples)/2])
	}
}
