// A performance peer for bench_engine (tests/bench/bench_engine.c --peer): Consul's
// property-override PatchStruct algorithm written from its public description on Go's
// protoreflect, timed on the same realistic Cluster and cases. Test-only; Consul's own module is
// not used (BUSL). No go.sum is committed: build it with `go build` and the go command verifies
// every module against the Go checksum database.
module propertyoverride.io/tests/bench/consulpeer

go 1.23.0

require (
	github.com/envoyproxy/go-control-plane/envoy v1.32.4
	google.golang.org/protobuf v1.36.4
)
