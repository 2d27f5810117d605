module propertyoverride/tests/oracles/envoy-validate

go 1.22

require (
	github.com/envoyproxy/go-control-plane/envoy v1.32.3
	github.com/envoyproxy/protoc-gen-validate v1.1.0
	google.golang.org/protobuf v1.35.2
)

require (
	cel.dev/expr v0.16.0 // indirect
	github.com/cncf/xds/go v0.0.0-20240723142845-024c85f92f20 // indirect
	github.com/google/go-cmp v0.6.0 // indirect
	github.com/planetscale/vtprotobuf v0.6.1-0.20240319094008-0393e58bdf10 // indirect
	go.opentelemetry.io/proto/otlp v1.0.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20240814211410-ddb44dafa142 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20240814211410-ddb44dafa142 // indirect
)
