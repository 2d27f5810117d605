package main

// Proto equality, made printable: both sides' resources are Go proto messages printed by
// protojson (proto names, Anys unpacked by their type, so two encodings of one Any compare
// equal), then re-read and printed with sorted keys. Equal bytes mean proto-equal messages.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func canonical(m proto.Message) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// diffPaths lists where two canonical resources differ (at most max places), each as
// "/json/pointer: ours X, Istio Y".
func diffPaths(ours, istio []byte, max int) []string {
	var a, b any
	if ours == nil || istio == nil {
		return []string{fmt.Sprintf("(whole resource): ours %s, Istio %s", show(ours), show(istio))}
	}
	_ = json.Unmarshal(ours, &a)
	_ = json.Unmarshal(istio, &b)
	var out []string
	walkDiff("", a, b, &out, max)
	return out
}

func show(b []byte) string {
	if b == nil {
		return "removed"
	}
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func walkDiff(at string, a, b any, out *[]string, max int) {
	if len(*out) >= max || reflect.DeepEqual(a, b) {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		var ks []string
		for k := range keys {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			walkDiff(at+"/"+k, am[k], bm[k], out, max)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			walkDiff(fmt.Sprintf("%s/%d", at, i), al[i], bl[i], out, max)
		}
		return
	}
	js := func(v any) string {
		if v == nil {
			return "absent"
		}
		x, _ := json.Marshal(v)
		return show(x)
	}
	*out = append(*out, fmt.Sprintf("%s: ours %s, Istio %s", at, js(a), js(b)))
}
