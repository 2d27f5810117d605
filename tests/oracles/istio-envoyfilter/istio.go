package main

// Istio's side: the EnvoyFilter our render printed, read as istiod reads it from the API server
// (the YAML decoded by Kubernetes' reader, the spec converted by Istio's crd conversion), judged
// by Istio's validation webhook function, turned into patches by convertToEnvoyFilterWrapper
// (exported by the one file build.sh adds to the copied module) and applied by istiod's own
// ApplyClusterMerge, ApplyListenerPatches and ApplyRouteConfigurationPatches, each resource in
// the patch context istiod applies it in.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
	kubeyaml "k8s.io/apimachinery/pkg/util/yaml"

	networking "istio.io/api/networking/v1alpha3"
	"istio.io/istio/pilot/pkg/config/kube/crd"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/pkg/networking/core/envoyfilter"
	"istio.io/istio/pkg/config"
	"istio.io/istio/pkg/config/host"
	"istio.io/istio/pkg/config/schema/collections"
	efvalidation "istio.io/istio/pkg/config/validation/envoyfilter"
)

// istioResult is what Istio made of one rendered EnvoyFilter.
type istioResult struct {
	refused  string            // why Istio cannot take it (read, validation, a patch dropped); "" when applied
	warnings []string          // the validation's warnings but its standing one (EnvoyFilter exposes internals)
	after    map[string][]byte // resource key (kind/name) -> the patched resource, canonical; nil: removed
}

// readEnvoyFilter decodes the one EnvoyFilter of a rendered YAML stream as istiod receives it.
func readEnvoyFilter(yamlText []byte) (*config.Config, error) {
	dec := kubeyaml.NewYAMLOrJSONDecoder(bytes.NewReader(yamlText), 512*1024)
	var found *config.Config
	for {
		obj := crd.IstioKind{}
		err := dec.Decode(&obj)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("Kubernetes' YAML reader: %v", err)
		}
		if reflect.DeepEqual(obj, crd.IstioKind{}) {
			continue
		}
		if obj.Kind != "EnvoyFilter" {
			return nil, fmt.Errorf("rendered a %s, not an EnvoyFilter", obj.Kind)
		}
		if found != nil {
			return nil, fmt.Errorf("rendered more than one EnvoyFilter")
		}
		cfg, err := crd.ConvertObject(collections.EnvoyFilter, &obj, "")
		if err != nil {
			return nil, fmt.Errorf("Istio's conversion: %v", err)
		}
		found = cfg
	}
	if found == nil {
		return nil, fmt.Errorf("rendered no EnvoyFilter")
	}
	return found, nil
}

const standingWarning = "EnvoyFilter exposes internal implementation details"

// istioApply validates, converts and applies the EnvoyFilter to a fresh copy of every resource.
func istioApply(yamlText []byte, rs []resource) istioResult {
	cfg, err := readEnvoyFilter(yamlText)
	if err != nil {
		return istioResult{refused: err.Error()}
	}
	var res istioResult
	warn, verr := efvalidation.ValidateEnvoyFilter(*cfg)
	for _, w := range each(warn) {
		if !strings.Contains(w.Error(), standingWarning) {
			res.warnings = append(res.warnings, w.Error())
		}
	}
	if verr != nil {
		res.refused = "validation: " + verr.Error()
		return res
	}
	w := model.ConvertToEnvoyFilterWrapper(cfg)
	n := 0
	for _, ps := range w.Patches {
		n += len(ps)
	}
	if want := len(cfg.Spec.(*networking.EnvoyFilter).ConfigPatches); n != want {
		res.refused = fmt.Sprintf("convertToEnvoyFilterWrapper kept %d of %d configPatches (a value it could not build)", n, want)
		return res
	}
	efw := &model.MergedEnvoyFilterWrapper{Patches: w.Patches}
	proxy := &model.Proxy{Type: model.SidecarProxy}
	res.after = map[string][]byte{}
	for _, r := range rs {
		m := proto.Clone(r.msg)
		var out proto.Message
		switch v := m.(type) {
		case *cluster.Cluster:
			var hosts []host.Name
			for _, h := range r.hosts {
				hosts = append(hosts, host.Name(h))
			}
			out = envoyfilter.ApplyClusterMerge(r.pctx, efw, v, hosts)
		case *listener.Listener:
			ls := envoyfilter.ApplyListenerPatches(r.pctx, efw, []*listener.Listener{v}, false)
			if len(ls) == 1 {
				out = ls[0]
			}
		case *route.RouteConfiguration:
			out = envoyfilter.ApplyRouteConfigurationPatches(r.pctx, proxy, efw, v)
		}
		if out == nil || reflect.ValueOf(out).IsNil() {
			res.after[r.key()] = nil // removed
			continue
		}
		b, err := canonical(out)
		if err != nil {
			res.refused = fmt.Sprintf("%s %s: the patched resource does not print: %v", r.kind, r.name, err)
			return res
		}
		res.after[r.key()] = b
	}
	return res
}

// each is the errors a validation result joins (a multierror), one by one.
func each(err error) []error {
	if err == nil {
		return nil
	}
	if m, ok := err.(interface{ WrappedErrors() []error }); ok {
		return m.WrappedErrors()
	}
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		return m.Unwrap()
	}
	return []error{err}
}
