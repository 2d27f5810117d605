// A performance peer for the webhook benchmark (tests/bench/bench_crpeer.sh): a validating
// webhook on controller-runtime's admission package and webhook server. Test-only. No go.sum
// is committed: bench_crpeer.sh builds a copy under .deps/ and the go command verifies every
// module against the Go checksum database.
module propertyoverride.io/tests/bench/crpeer

go 1.23.0

require (
	k8s.io/api v0.32.13
	k8s.io/apimachinery v0.32.13
	sigs.k8s.io/controller-runtime v0.20.4
)
