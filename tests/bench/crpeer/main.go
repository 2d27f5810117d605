// Command crpeer is the benchmark's peer for the propertyoverride webhook: the same
// AdmissionReviews answered by controller-runtime's webhook server and admission package, the
// way a Go controller would answer them. Its decision is deliberately trivial (the spec has
// patches, each with a path that starts with '/'): the benchmark measures the HTTP, TLS and
// AdmissionReview handling around a decision, not the decision.
//
//	crpeer --cert-dir DIR [--host 127.0.0.1] [--port N] [--ready-file F]
//
// DIR holds tls.crt and tls.key. With --port 0 a free port is chosen; the ready file then
// receives "host:port" once the server accepts connections.
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

type validator struct{ decoder admission.Decoder }

func (v *validator) Handle(_ context.Context, req admission.Request) admission.Response {
	obj := &unstructured.Unstructured{}
	if err := v.decoder.Decode(req, obj); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	patches, found, err := unstructured.NestedSlice(obj.Object, "spec", "patches")
	if err != nil || !found || len(patches) == 0 {
		return admission.Denied("spec.patches: at least one patch is required")
	}
	for i, p := range patches {
		m, _ := p.(map[string]interface{})
		path, _ := m["path"].(string)
		if !strings.HasPrefix(path, "/") {
			return admission.Denied(fmt.Sprintf("spec.patches[%d].path: must start with '/'", i))
		}
	}
	return admission.Allowed("")
}

func main() {
	certDir := flag.String("cert-dir", "", "folder with tls.crt and tls.key")
	host := flag.String("host", "127.0.0.1", "address to listen on")
	port := flag.Int("port", 0, "port (0: a free one)")
	ready := flag.String("ready-file", "", "written with host:port once serving")
	flag.Parse()
	if *certDir == "" {
		fmt.Fprintln(os.Stderr, "crpeer: --cert-dir is required")
		os.Exit(2)
	}
	p := *port
	if p == 0 { // controller-runtime's server takes a fixed port: find a free one first
		l, err := net.Listen("tcp", net.JoinHostPort(*host, "0"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "crpeer:", err)
			os.Exit(1)
		}
		p = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	srv := webhook.NewServer(webhook.Options{
		Host: *host, Port: p, CertDir: *certDir, CertName: "tls.crt", KeyName: "tls.key",
	})
	srv.Register("/validate", &webhook.Admission{Handler: &validator{decoder: admission.NewDecoder(runtime.NewScheme())}})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Start(ctx) }()
	addr := net.JoinHostPort(*host, fmt.Sprint(p))
	for i := 0; i < 200; i++ { // the server listens asynchronously
		if c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-errc:
			fmt.Fprintln(os.Stderr, "crpeer:", err)
			os.Exit(1)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if *ready != "" {
		if err := os.WriteFile(*ready+".tmp", []byte(addr+"\n"), 0o644); err == nil {
			os.Rename(*ready+".tmp", *ready)
		}
	}
	if err := <-errc; err != nil {
		fmt.Fprintln(os.Stderr, "crpeer:", err)
		os.Exit(1)
	}
}
