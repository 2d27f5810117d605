// The etcd the real-API-server tests run against (scripts/build-kube.sh): the etcd server of
// the release kubeadm pairs with Kubernetes v1.32.13 (its DefaultEtcdVersion, 3.5.24), started
// through etcd's own etcdmain. No go.sum is committed: the go command verifies every module it
// fetches against the Go checksum database.
module propertyoverride.io/kube-build/etcd

go 1.24

require go.etcd.io/etcd/server/v3 v3.5.24
