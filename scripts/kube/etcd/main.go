// Command etcd is etcd's own server entry point and nothing else: etcd publishes its server as a
// library module (go.etcd.io/etcd/server/v3) but its command lives in the unversioned top-level
// module, so the build calls etcdmain from a main of our own.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
