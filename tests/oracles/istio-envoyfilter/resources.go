package main

// The resources both sides patch: one sidecar's clusters, listeners and route configurations
// (the workload of Service api in namespace shop), built as istiod builds them
// (pilot/pkg/networking/core: cluster_builder.go, listener_builder.go, httproute.go), with
// Istio's names (outbound|PORT|SUBSET|HOST, inbound|PORT||, virtualInbound, virtualOutbound,
// 0.0.0.0_PORT, route configurations named by port). Istio-only extension types (istio.stats,
// metadata exchange) are left out: both sides must be able to read every resource, and they are
// not what a PropertyOverride patches. Each resource carries the patch context istiod applies
// an EnvoyFilter in to it, and the service hosts it passes (inbound clusters only).

import (
	"encoding/json"
	"fmt"

	admin "github.com/envoyproxy/go-control-plane/envoy/admin/v3"
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	router "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	originaldst "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/original_dst/v3"
	tlsinspector "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/listener/tls_inspector/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	previoushosts "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	rawbuffer "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/raw_buffer/v3"
	upstreamhttp "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	networking "istio.io/api/networking/v1alpha3"
)

const (
	clusterDomain = "cluster.local"
	localService  = "api"
	localNS       = "shop"
)

// resource is one generated xDS resource and how istiod patches it.
type resource struct {
	kind  string // cluster, listener, route (preview's "type")
	name  string
	msg   proto.Message
	pctx  networking.EnvoyFilter_PatchContext
	hosts []string // ApplyClusterMerge's hosts: the local service for inbound clusters, else none
}

// key names a resource among all kinds: a cluster and a route configuration may share a name
// (Istio names both of an inbound port inbound|PORT||).
func (r resource) key() string { return r.kind + "/" + r.name }

func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(err)
	}
	return a
}

func adsSource() *core.ConfigSource {
	return &core.ConfigSource{
		ConfigSourceSpecifier: &core.ConfigSource_Ads{Ads: &core.AggregatedConfigSource{}},
		InitialFetchTimeout:   durationpb.New(0),
		ResourceApiVersion:    core.ApiVersion_V3,
	}
}

func maxThresholds() *cluster.CircuitBreakers {
	return &cluster.CircuitBreakers{Thresholds: []*cluster.CircuitBreakers_Thresholds{{
		MaxConnections:     wrapperspb.UInt32(4294967295),
		MaxPendingRequests: wrapperspb.UInt32(4294967295),
		MaxRequests:        wrapperspb.UInt32(4294967295),
		MaxRetries:         wrapperspb.UInt32(4294967295),
		TrackRemaining:     true,
	}}}
}

func istioMetadata(host, name, ns string) *core.Metadata {
	svc, _ := structpb.NewStruct(map[string]any{"services": []any{map[string]any{"host": host, "name": name, "namespace": ns}}})
	return &core.Metadata{FilterMetadata: map[string]*structpb.Struct{"istio": svc}}
}

func outboundCluster(port int, subset, name, ns string, h2 bool) *cluster.Cluster {
	host := fmt.Sprintf("%s.%s.svc.%s", name, ns, clusterDomain)
	full := fmt.Sprintf("outbound|%d|%s|%s", port, subset, host)
	c := &cluster.Cluster{
		Name:                 full,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_EDS},
		EdsClusterConfig:     &cluster.Cluster_EdsClusterConfig{EdsConfig: adsSource(), ServiceName: full},
		ConnectTimeout:       durationpb.New(10e9),
		LbPolicy:             cluster.Cluster_LEAST_REQUEST,
		CircuitBreakers:      maxThresholds(),
		CommonLbConfig:       &cluster.Cluster_CommonLbConfig{},
		Metadata:             istioMetadata(host, name, ns),
		TransportSocketMatches: []*cluster.Cluster_TransportSocketMatch{{
			Name:            "tlsMode-disabled",
			TransportSocket: &core.TransportSocket{Name: "envoy.transport_sockets.raw_buffer", ConfigType: &core.TransportSocket_TypedConfig{TypedConfig: mustAny(&rawbuffer.RawBuffer{})}},
		}},
	}
	if h2 {
		c.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(&upstreamhttp.HttpProtocolOptions{
			UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_{ExplicitHttpConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig{
				ProtocolConfig: &upstreamhttp.HttpProtocolOptions_ExplicitHttpConfig_Http2ProtocolOptions{Http2ProtocolOptions: &core.Http2ProtocolOptions{MaxConcurrentStreams: wrapperspb.UInt32(1073741824)}},
			}},
		})}
	}
	return c
}

func originalDstCluster(name string, bind bool) *cluster.Cluster {
	c := &cluster.Cluster{
		Name:                 name,
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_ORIGINAL_DST},
		ConnectTimeout:       durationpb.New(10e9),
		LbPolicy:             cluster.Cluster_CLUSTER_PROVIDED,
		CircuitBreakers:      maxThresholds(),
	}
	if bind {
		c.UpstreamBindConfig = &core.BindConfig{SourceAddress: &core.SocketAddress{Address: "127.0.0.6", PortSpecifier: &core.SocketAddress_PortValue{PortValue: 0}}}
	}
	return c
}

func clusters() []resource {
	out := func(c *cluster.Cluster) resource {
		return resource{kind: "cluster", name: c.Name, msg: c, pctx: networking.EnvoyFilter_SIDECAR_OUTBOUND}
	}
	in := func(c *cluster.Cluster) resource {
		return resource{kind: "cluster", name: c.Name, msg: c, pctx: networking.EnvoyFilter_SIDECAR_INBOUND,
			hosts: []string{fmt.Sprintf("%s.%s.svc.%s", localService, localNS, clusterDomain)}}
	}
	blackhole := &cluster.Cluster{
		Name:                 "BlackHoleCluster",
		ClusterDiscoveryType: &cluster.Cluster_Type{Type: cluster.Cluster_STATIC},
		ConnectTimeout:       durationpb.New(10e9),
		LoadAssignment:       &endpoint.ClusterLoadAssignment{ClusterName: "BlackHoleCluster"},
	}
	passthrough := originalDstCluster("PassthroughCluster", false)
	passthrough.TypedExtensionProtocolOptions = map[string]*anypb.Any{"envoy.extensions.upstreams.http.v3.HttpProtocolOptions": mustAny(&upstreamhttp.HttpProtocolOptions{
		UpstreamProtocolOptions: &upstreamhttp.HttpProtocolOptions_UseDownstreamProtocolConfig{UseDownstreamProtocolConfig: &upstreamhttp.HttpProtocolOptions_UseDownstreamHttpConfig{
			HttpProtocolOptions: &core.Http1ProtocolOptions{}, Http2ProtocolOptions: &core.Http2ProtocolOptions{MaxConcurrentStreams: wrapperspb.UInt32(1073741824)},
		}},
	})}
	inbound := originalDstCluster("inbound|9080||", true)
	inbound.Metadata = istioMetadata(localService+"."+localNS+".svc."+clusterDomain, localService, localNS)
	return []resource{
		out(outboundCluster(9080, "", "reviews", "shop", false)),
		out(outboundCluster(9080, "v1", "reviews", "shop", false)),
		out(outboundCluster(8080, "", "payments", "default", true)),
		out(outboundCluster(3306, "", "mysql", "shop", false)),
		out(blackhole),
		out(passthrough),
		in(inbound),
		in(originalDstCluster("InboundPassthroughCluster", true)),
	}
}

func routerFilter() *hcm.HttpFilter {
	return &hcm.HttpFilter{Name: "envoy.filters.http.router", ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&router.Router{})}}
}

func tcpFilter(stat, cl string) *listener.Filter {
	return &listener.Filter{Name: "envoy.filters.network.tcp_proxy", ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(&tcpproxy.TcpProxy{
		StatPrefix: stat, ClusterSpecifier: &tcpproxy.TcpProxy_Cluster{Cluster: cl},
	})}}
}

func sockAddr(ip string, port uint32) *core.Address {
	return &core.Address{Address: &core.Address_SocketAddress{SocketAddress: &core.SocketAddress{Address: ip, PortSpecifier: &core.SocketAddress_PortValue{PortValue: port}}}}
}

func listeners() []resource {
	virtualOutbound := &listener.Listener{
		Name:             "virtualOutbound",
		Address:          sockAddr("0.0.0.0", 15001),
		UseOriginalDst:   wrapperspb.Bool(true),
		TrafficDirection: core.TrafficDirection_OUTBOUND,
		FilterChains:     []*listener.FilterChain{{Name: "PassthroughFilterChain", Filters: []*listener.Filter{tcpFilter("PassthroughCluster", "PassthroughCluster")}}},
	}
	inboundHCM := &hcm.HttpConnectionManager{
		StatPrefix: "inbound_0.0.0.0_9080",
		RouteSpecifier: &hcm.HttpConnectionManager_RouteConfig{RouteConfig: &route.RouteConfiguration{
			Name: "inbound|9080||", ValidateClusters: wrapperspb.Bool(false),
		}},
		HttpFilters:              []*hcm.HttpFilter{routerFilter()},
		UseRemoteAddress:         wrapperspb.Bool(false),
		ForwardClientCertDetails: hcm.HttpConnectionManager_APPEND_FORWARD,
		NormalizePath:            wrapperspb.Bool(true),
	}
	virtualInbound := &listener.Listener{
		Name:             "virtualInbound",
		Address:          sockAddr("0.0.0.0", 15006),
		TrafficDirection: core.TrafficDirection_INBOUND,
		ListenerFilters: []*listener.ListenerFilter{
			{Name: "envoy.filters.listener.original_dst", ConfigType: &listener.ListenerFilter_TypedConfig{TypedConfig: mustAny(&originaldst.OriginalDst{})}},
			{Name: "envoy.filters.listener.tls_inspector", ConfigType: &listener.ListenerFilter_TypedConfig{TypedConfig: mustAny(&tlsinspector.TlsInspector{})}},
		},
		ListenerFiltersTimeout:           durationpb.New(0),
		ContinueOnListenerFiltersTimeout: true,
		FilterChains: []*listener.FilterChain{{
			Name:             "0.0.0.0_9080",
			FilterChainMatch: &listener.FilterChainMatch{DestinationPort: wrapperspb.UInt32(9080), TransportProtocol: "raw_buffer"},
			Filters: []*listener.Filter{{Name: "envoy.filters.network.http_connection_manager",
				ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(inboundHCM)}}},
		}},
	}
	outboundHCM := &hcm.HttpConnectionManager{
		StatPrefix:       "outbound_0.0.0.0_9080",
		RouteSpecifier:   &hcm.HttpConnectionManager_Rds{Rds: &hcm.Rds{ConfigSource: adsSource(), RouteConfigName: "9080"}},
		HttpFilters:      []*hcm.HttpFilter{routerFilter()},
		UseRemoteAddress: wrapperspb.Bool(false),
		NormalizePath:    wrapperspb.Bool(true),
	}
	http9080 := &listener.Listener{
		Name:             "0.0.0.0_9080",
		Address:          sockAddr("0.0.0.0", 9080),
		BindToPort:       wrapperspb.Bool(false),
		TrafficDirection: core.TrafficDirection_OUTBOUND,
		FilterChains: []*listener.FilterChain{{Filters: []*listener.Filter{{Name: "envoy.filters.network.http_connection_manager",
			ConfigType: &listener.Filter_TypedConfig{TypedConfig: mustAny(outboundHCM)}}}}},
		DefaultFilterChain: &listener.FilterChain{Name: "PassthroughFilterChain", Filters: []*listener.Filter{tcpFilter("PassthroughCluster", "PassthroughCluster")}},
	}
	mysql := &listener.Listener{
		Name:             "10.96.0.20_3306",
		Address:          sockAddr("10.96.0.20", 3306),
		BindToPort:       wrapperspb.Bool(false),
		TrafficDirection: core.TrafficDirection_OUTBOUND,
		FilterChains:     []*listener.FilterChain{{Filters: []*listener.Filter{tcpFilter("outbound|3306||mysql.shop.svc.cluster.local", "outbound|3306||mysql.shop.svc.cluster.local")}}},
	}
	r := func(l *listener.Listener, pctx networking.EnvoyFilter_PatchContext) resource {
		return resource{kind: "listener", name: l.Name, msg: l, pctx: pctx}
	}
	return []resource{
		r(virtualOutbound, networking.EnvoyFilter_SIDECAR_OUTBOUND),
		r(virtualInbound, networking.EnvoyFilter_SIDECAR_INBOUND),
		r(http9080, networking.EnvoyFilter_SIDECAR_OUTBOUND),
		r(mysql, networking.EnvoyFilter_SIDECAR_OUTBOUND),
	}
}

func routes() []resource {
	retry := &route.RetryPolicy{
		RetryOn:    "connect-failure,refused-stream,unavailable,cancelled,retriable-status-codes",
		NumRetries: wrapperspb.UInt32(2),
		RetryHostPredicate: []*route.RetryPolicy_RetryHostPredicate{{Name: "envoy.retry_host_predicates.previous_hosts",
			ConfigType: &route.RetryPolicy_RetryHostPredicate_TypedConfig{TypedConfig: mustAny(&previoushosts.PreviousHostsPredicate{})}}},
		HostSelectionRetryMaxAttempts: 5,
		RetriableStatusCodes:          []uint32{503},
	}
	toCluster := func(cl string, retry *route.RetryPolicy) *route.Route_Route {
		return &route.Route_Route{Route: &route.RouteAction{
			ClusterSpecifier: &route.RouteAction_Cluster{Cluster: cl},
			Timeout:          durationpb.New(0),
			RetryPolicy:      retry,
			MaxGrpcTimeout:   durationpb.New(0),
		}}
	}
	prefix := &route.RouteMatch{PathSpecifier: &route.RouteMatch_Prefix{Prefix: "/"}}
	outbound := &route.RouteConfiguration{
		Name: "9080",
		VirtualHosts: []*route.VirtualHost{
			{
				Name:    "reviews.shop.svc.cluster.local:9080",
				Domains: []string{"reviews.shop.svc.cluster.local", "reviews", "reviews.shop.svc", "reviews.shop", "10.96.0.30"},
				Routes: []*route.Route{{Name: "default", Match: prefix, Action: toCluster("outbound|9080||reviews.shop.svc.cluster.local", retry),
					Decorator: &route.Decorator{Operation: "reviews.shop.svc.cluster.local:9080/*"}}},
				IncludeRequestAttemptCount: true,
			},
			{
				Name:                       "allow_any",
				Domains:                    []string{"*"},
				Routes:                     []*route.Route{{Name: "allow_any", Match: prefix, Action: toCluster("PassthroughCluster", nil)}},
				IncludeRequestAttemptCount: true,
			},
		},
		ValidateClusters:               wrapperspb.Bool(false),
		MaxDirectResponseBodySizeBytes: wrapperspb.UInt32(1048576),
		IgnorePortInHostMatching:       true,
	}
	inbound := &route.RouteConfiguration{
		Name: "inbound|9080||",
		VirtualHosts: []*route.VirtualHost{{
			Name:    "inbound|http|9080",
			Domains: []string{"*"},
			Routes: []*route.Route{{Name: "default", Match: prefix, Action: toCluster("inbound|9080||", nil),
				Decorator: &route.Decorator{Operation: "api.shop.svc.cluster.local:9080/*"}}},
		}},
		ValidateClusters: wrapperspb.Bool(false),
	}
	return []resource{
		{kind: "route", name: outbound.Name, msg: outbound, pctx: networking.EnvoyFilter_SIDECAR_OUTBOUND},
		{kind: "route", name: inbound.Name, msg: inbound, pctx: networking.EnvoyFilter_SIDECAR_INBOUND},
	}
}

func allResources() []resource {
	var rs []resource
	rs = append(rs, clusters()...)
	rs = append(rs, listeners()...)
	return append(rs, routes()...)
}

// configDump is Envoy's /config_dump of those resources, all dynamic and active: what
// `propertyoverride preview --config-dump` reads.
func configDump(rs []resource) ([]byte, error) {
	cd := &admin.ClustersConfigDump{}
	ld := &admin.ListenersConfigDump{}
	rd := &admin.RoutesConfigDump{}
	for _, r := range rs {
		switch r.kind {
		case "cluster":
			cd.DynamicActiveClusters = append(cd.DynamicActiveClusters, &admin.ClustersConfigDump_DynamicCluster{VersionInfo: "1", Cluster: mustAny(r.msg)})
		case "listener":
			ld.DynamicListeners = append(ld.DynamicListeners, &admin.ListenersConfigDump_DynamicListener{Name: r.name,
				ActiveState: &admin.ListenersConfigDump_DynamicListenerState{VersionInfo: "1", Listener: mustAny(r.msg)}})
		case "route":
			rd.DynamicRouteConfigs = append(rd.DynamicRouteConfigs, &admin.RoutesConfigDump_DynamicRouteConfig{VersionInfo: "1", RouteConfig: mustAny(r.msg)})
		}
	}
	dump := &admin.ConfigDump{Configs: []*anypb.Any{mustAny(cd), mustAny(ld), mustAny(rd)}}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(dump)
	if err != nil {
		return nil, err
	}
	var v any // re-indented: a person reading a failing case's files reads this
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	return json.MarshalIndent(v, "", "  ")
}
