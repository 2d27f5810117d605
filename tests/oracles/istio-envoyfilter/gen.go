package main

// The seeded generator of PropertyOverrides: paths walked through Envoy's own descriptors
// (go-control-plane's, the ones Istio is built with) from the resource type's message, values
// of every kind the field takes (scalars, enums by name and by number, Durations, wrappers bare,
// as {value: v} and through /value, nested messages, repeated fields, maps, Structs, Anys in
// protojson's @type form and in Consul's {type_url, value} form), removes, services, and now and
// then a value of the wrong kind or a string YAML readers disagree on. Everything a patch can say
// is drawn, so the refusals are counted by reason and every accepted patch is compared.

import (
	"encoding/base64"
	"math/rand/v2"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	rawbuffer "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/raw_buffer/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

type gen struct{ r *rand.Rand }

func newGen(seed uint64, index int) *gen {
	// one stream per case: a case is replayed from (seed, index) alone
	return &gen{r: rand.New(rand.NewPCG(seed, uint64(index)))}
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }
func (g *gen) intn(n int) int        { return g.r.IntN(n) }
func pick[T any](g *gen, xs []T) T   { return xs[g.r.IntN(len(xs))] }

var roots = map[string]protoreflect.MessageDescriptor{
	"cluster":                 (&cluster.Cluster{}).ProtoReflect().Descriptor(),
	"listener":                (&listener.Listener{}).ProtoReflect().Descriptor(),
	"route":                   (&route.RouteConfiguration{}).ProtoReflect().Descriptor(),
	"cluster-load-assignment": (&endpoint.ClusterLoadAssignment{}).ProtoReflect().Descriptor(),
}

// Strings YAML 1.1 or 1.2 readers may take for something else, and ordinary ones.
var stringPool = []string{
	"x", "outbound|9080||reviews.shop.svc.cluster.local", "reviews", "api.example.com", "/healthz", "x-request-id",
	"=", "true", "yes", "no", "on", "off", "y", "n", "null", "~", "1.0", "0x1F", "0o17", "017", "1e3", ".inf", "-.inf",
	".nan", "2001-01-01", "12:30:45", "1_000", "a: b", "#c", "*a", "&a", "!x", "-", "?", "|", ">", "@x", "`x", "%x", "<<",
	" lead", "trail ", "", "é", "tab\tin", "line\nbreak", "\"q\"", "'s'", "{}", "[]",
}

var anyTypes = []struct {
	url    string
	fields map[string]any
}{
	{"type.googleapis.com/envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer", nil},
	{"type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions", map[string]any{"common_http_protocol_options": map[string]any{"idle_timeout": "30s"}}},
	{"type.googleapis.com/envoy.extensions.load_balancing_policies.round_robin.v3.RoundRobin", nil},
	{"type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy", map[string]any{"stat_prefix": "tcp", "cluster": "PassthroughCluster"}},
	{"type.googleapis.com/envoy.extensions.filters.http.router.v3.Router", map[string]any{"suppress_envoy_headers": true}},
	{"type.googleapis.com/envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate", nil},
}

var rawBufferBytes = func() string {
	b, _ := proto.Marshal(&rawbuffer.RawBuffer{})
	return base64.StdEncoding.EncodeToString(b)
}()

// propertyOverride draws one case: the PropertyOverride and, for a Service target, the Service.
func (g *gen) propertyOverride(name string) (po map[string]any, service map[string]any) {
	ns, target := localNS, map[string]any{"group": "", "kind": "Service", "name": localService}
	if g.chance(0.3) {
		ns, target = "platform", map[string]any{"group": "networking.istio.io", "kind": "Mesh", "name": "global"}
	} else {
		service = map[string]any{"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": localService, "namespace": localNS},
			"spec":     map[string]any{"selector": map[string]any{"app": localService}, "ports": []any{map[string]any{"port": 9080, "name": "http"}}}}
	}
	n := 1
	if g.chance(0.35) {
		n = 2 + g.intn(2)
	}
	var patches []any
	for i := 0; i < n; i++ {
		patches = append(patches, g.patch())
	}
	// a rename first, now and then: Istio matches a later patch's service by the cluster's name
	// as the earlier patches left it, Consul by the name the resource came with
	if n > 1 && g.chance(0.08) {
		patches[0] = map[string]any{"op": "add", "path": "/name", "value": pick(g, []any{"renamed", "outbound|9080||other.shop.svc.cluster.local"}),
			"resourceFilter": map[string]any{"resourceType": "cluster", "trafficDirection": "outbound"}}
		if g.chance(0.5) {
			patches[1] = map[string]any{"op": "add", "path": "/connect_timeout", "value": "7s",
				"resourceFilter": map[string]any{"resourceType": "cluster", "trafficDirection": "outbound",
					"services": []any{map[string]any{"name": "reviews", "namespace": "shop"}}}}
		}
	}
	spec := map[string]any{"targetRef": target, "patches": patches}
	if g.chance(0.1) {
		spec["priority"] = g.intn(200) - 100
	}
	po = map[string]any{"apiVersion": "propertyoverride.io/v1alpha1", "kind": "PropertyOverride",
		"metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}
	return po, service
}

func (g *gen) patch() map[string]any {
	rt := pick(g, []string{"cluster", "cluster", "cluster", "cluster", "listener", "listener", "route", "route", "cluster-load-assignment"})
	dir := "outbound"
	if g.chance(0.3) {
		dir = "inbound"
	}
	rf := map[string]any{"resourceType": rt, "trafficDirection": dir}
	if (rt == "cluster" && dir == "outbound" && g.chance(0.35)) || g.chance(0.03) {
		rf["services"] = pick(g, [][]any{
			{map[string]any{"name": "reviews", "namespace": "shop"}},
			{map[string]any{"name": "payments"}},
			{map[string]any{"name": "mysql", "namespace": "shop"}},
			{map[string]any{"name": "nosuch", "namespace": "shop"}},
			{map[string]any{"name": "reviews", "namespace": "shop"}, map[string]any{"name": "payments", "namespace": "default"}},
		})
	}
	p := map[string]any{"resourceFilter": rf}
	path, leaf, through := g.path(roots[rt])
	p["path"] = path
	if g.chance(0.12) {
		p["op"] = "remove"
		return p
	}
	p["op"] = "add"
	switch through {
	case "value": // /wrapper/value: the wrapper's scalar
		p["value"] = g.scalar(leaf.Message().Fields().ByName("value"))
	case "duration": // /duration/seconds or /nanos
		p["value"] = pick(g, []any{0, 1, 5, 30, -1, 999999999})
	default:
		p["value"] = g.fieldValue(leaf, 0)
	}
	return p
}

// path walks from md: a field at each step, down through messages (not lists or maps, which
// Consul's paths do not index, but now and then an index anyway). `through` says the last step
// went into a wrapper's value or a Duration's field: the leaf is then that wrapper or Duration.
func (g *gen) path(md protoreflect.MessageDescriptor) (path string, leaf protoreflect.FieldDescriptor, through string) {
	for depth := 0; ; depth++ {
		fs := md.Fields()
		f := fs.Get(g.intn(fs.Len()))
		if f.Options() != nil && isDeprecated(f) && g.chance(0.7) {
			f = fs.Get(g.intn(fs.Len()))
		}
		// a list of messages or a map: Consul refuses the field whole ("unsupported target field
		// type"); drawn less often, so more cases reach both meshes
		if (f.IsMap() || (f.IsList() && f.Kind() == protoreflect.MessageKind)) && g.chance(0.6) {
			f = fs.Get(g.intn(fs.Len()))
		}
		path += "/" + string(f.Name())
		if f.IsList() || f.IsMap() {
			if f.IsList() && f.Kind() == protoreflect.MessageKind && g.chance(0.04) {
				path += "/0" // an index: Consul has none
			}
			return path, f, ""
		}
		if f.Kind() != protoreflect.MessageKind {
			return path, f, ""
		}
		full := string(f.Message().FullName())
		switch {
		case full == "google.protobuf.Duration":
			if g.chance(0.1) {
				return path + pick(g, []string{"/seconds", "/nanos"}), f, "duration"
			}
			return path, f, ""
		case isWrapper(full):
			if g.chance(0.25) {
				return path + "/value", f, "value"
			}
			return path, f, ""
		case full == "google.protobuf.Any" || full == "google.protobuf.Struct" || full == "google.protobuf.Value" ||
			full == "google.protobuf.Empty" || full == "google.protobuf.ListValue":
			return path, f, ""
		}
		if depth >= 4 || f.Message().Fields().Len() == 0 || !g.chance(0.65) {
			return path, f, ""
		}
		md = f.Message()
	}
}

func isDeprecated(f protoreflect.FieldDescriptor) bool {
	type dep interface{ GetDeprecated() bool }
	d, ok := f.Options().(dep)
	return ok && d.GetDeprecated()
}

func isWrapper(full string) bool {
	switch full {
	case "google.protobuf.BoolValue", "google.protobuf.StringValue", "google.protobuf.BytesValue",
		"google.protobuf.Int32Value", "google.protobuf.Int64Value", "google.protobuf.UInt32Value",
		"google.protobuf.UInt64Value", "google.protobuf.FloatValue", "google.protobuf.DoubleValue":
		return true
	}
	return false
}

// fieldValue is a value for the whole field: a list's elements, a map's entries, or one value.
func (g *gen) fieldValue(f protoreflect.FieldDescriptor, depth int) any {
	if f.IsMap() {
		m := map[string]any{}
		for i, n := 0, g.intn(3); i < n; i++ {
			k := pick(g, []string{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions", "istio", "k1", "1"})
			m[k] = g.single(f.MapValue(), depth+1)
		}
		return m
	}
	if f.IsList() {
		l := []any{}
		for i, n := 0, g.intn(3); i < n; i++ {
			l = append(l, g.single(f, depth+1))
		}
		return l
	}
	return g.single(f, depth)
}

func (g *gen) single(f protoreflect.FieldDescriptor, depth int) any {
	if g.chance(0.04) { // the wrong kind
		return pick(g, []any{"x", 7, true, []any{}, map[string]any{}, 1.5})
	}
	if f.Kind() == protoreflect.MessageKind || f.Kind() == protoreflect.GroupKind {
		return g.message(f.Message(), depth)
	}
	return g.scalar(f)
}

func (g *gen) scalar(f protoreflect.FieldDescriptor) any {
	switch f.Kind() {
	case protoreflect.BoolKind:
		return g.chance(0.7)
	case protoreflect.EnumKind:
		vs := f.Enum().Values()
		switch {
		case g.chance(0.1):
			return int(vs.Get(g.intn(vs.Len())).Number())
		case g.chance(0.03):
			return "NOT_A_VALUE"
		}
		return string(vs.Get(g.intn(vs.Len())).Name())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return pick(g, []any{0, 1, 3, 5, 100, 1024, -1, 65536, 2147483647, 2147483648})
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return pick(g, []any{0, 1, 5, 1024, 65536, 4294967295, 4294967296, -1})
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return pick(g, []any{0, 1, 5, 1000000, int64(9007199254740993), -1, "123"})
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return pick(g, []any{0, 1, 5, 1000000, uint64(18446744073709551615), "42"})
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return pick(g, []any{0.5, 1.5, 100, 0, 1e10, -2.25})
	case protoreflect.StringKind:
		return pick(g, stringPool)
	case protoreflect.BytesKind:
		return pick(g, []any{"aGVsbG8=", "", "%%"})
	}
	return nil
}

func (g *gen) message(md protoreflect.MessageDescriptor, depth int) any {
	full := string(md.FullName())
	switch {
	case full == "google.protobuf.Duration":
		if g.chance(0.1) {
			return map[string]any{"seconds": pick(g, []any{5, 0, 1})}
		}
		return pick(g, []any{"5s", "0.250s", "1.5s", "0s", "3600s", "-1s", "315576000001s", "1h", 5})
	case full == "google.protobuf.Timestamp":
		return "2026-01-01T00:00:00Z"
	case isWrapper(full):
		inner := g.scalar(md.Fields().ByName("value"))
		switch {
		case g.chance(0.2):
			return map[string]any{"value": inner}
		case g.chance(0.05):
			return map[string]any{}
		}
		return inner
	case full == "google.protobuf.Struct":
		return pick(g, []any{map[string]any{"a": "b", "n": 1}, map[string]any{"services": []any{map[string]any{"host": "h"}}}, map[string]any{}})
	case full == "google.protobuf.Value":
		return pick(g, []any{"x", 1, true, map[string]any{"k": "v"}, []any{1, "a"}})
	case full == "google.protobuf.ListValue":
		return []any{1, "a"}
	case full == "google.protobuf.Empty":
		return map[string]any{}
	case full == "google.protobuf.FieldMask":
		return "a.b"
	case full == "google.protobuf.Any":
		t := pick(g, anyTypes)
		switch {
		case g.chance(0.2): // Consul's own form of an Any
			v := map[string]any{"type_url": anyTypes[0].url}
			if g.chance(0.5) {
				v["value"] = rawBufferBytes
			}
			return v
		case g.chance(0.2):
			return map[string]any{"@type": t.url}
		}
		v := map[string]any{"@type": t.url}
		for k, x := range t.fields {
			v[k] = x
		}
		return v
	}
	v := map[string]any{}
	fs := md.Fields()
	if fs.Len() == 0 || depth >= 2 || g.chance(0.08) {
		return v
	}
	n := 1 + g.intn(2)
	first := fs.Get(g.intn(fs.Len()))
	for i := 0; i < n; i++ {
		f := first
		if i > 0 {
			f = fs.Get(g.intn(fs.Len()))
			// two members of one oneof now and then: Consul's result is map order's
			if o := first.ContainingOneof(); o != nil && !o.IsSynthetic() && g.chance(0.3) {
				f = o.Fields().Get(g.intn(o.Fields().Len()))
			}
		}
		v[string(f.Name())] = g.fieldValue(f, depth+1)
	}
	return v
}
