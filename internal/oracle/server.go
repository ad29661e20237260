// Package oracle runs a real Kubernetes CRD API server in process — embedded etcd on 127.0.0.1
// and k8s.io/apiextensions-apiserver's own server — so tests can watch what a cluster actually
// does with a CRD change: whether it accepts the update, and what happens to stored objects.
package oracle

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	clientset "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/apiextensions-apiserver/test/integration/fixtures"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// Server is one etcd and one CRD API server for a test.
type Server struct {
	CRDs    clientset.Interface
	Dynamic dynamic.Interface
	// Etcd reads what is stored, below the API server.
	Etcd *clientv3.Client
	// Prefix is the API server's key prefix in etcd.
	Prefix string
	// EtcdURL is etcd's client URL (127.0.0.1 only).
	EtcdURL string
	// Config reaches the API server.
	Config *rest.Config
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartEtcd starts an embedded etcd on free loopback ports, stopped when the test ends.
func StartEtcd(t testing.TB) string {
	t.Helper()
	cfg := embed.NewConfig()
	cfg.Dir = t.TempDir()
	cfg.Name = "crdguard"
	client, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	peer, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", freePort(t)))
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	cfg.LogLevel = "panic" // its shutdown complaints are noise here
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatalf("starting etcd: %v", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(60 * time.Second):
		e.Close()
		t.Fatal("etcd did not become ready")
	}
	t.Cleanup(e.Close)
	return client.String()
}

// Start starts etcd and the CRD API server. It sets KUBE_INTEGRATION_ETCD_URL for the server's
// test fixture, so tests that call it must not run in parallel.
func Start(t *testing.T) *Server {
	t.Helper()
	return StartWithFlags(t)
}

// StartWithFlags is Start with more flags for the API server, which override its defaults: e.g.
// --authorization-kubeconfig, to decide requests with a test's own authorization webhook.
func StartWithFlags(t *testing.T, flags ...string) *Server {
	t.Helper()
	silenceLogs()
	etcdURL := StartEtcd(t)
	t.Setenv("KUBE_INTEGRATION_ETCD_URL", etcdURL)
	stop, config, options, err := fixtures.StartDefaultServer(t, append([]string{"--watch-cache=false"}, flags...)...)
	if err != nil {
		t.Fatalf("starting the API server: %v", err)
	}
	t.Cleanup(stop)
	config.QPS, config.Burst = 1000, 2000
	crds, err := clientset.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(config)
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := clientv3.New(clientv3.Config{Endpoints: []string{etcdURL}, DialTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { etcd.Close() })
	return &Server{CRDs: crds, Dynamic: dyn, Etcd: etcd, Prefix: options.RecommendedOptions.Etcd.StorageConfig.Prefix, EtcdURL: etcdURL, Config: config}
}

// silenceLogs keeps the API server's and etcd's logs out of test output.
func silenceLogs() {
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
}

// Kubeconfig writes a kubeconfig file that reaches the server, for code that loads one.
func (s *Server) Kubeconfig(t testing.TB) string {
	t.Helper()
	cluster := map[string]any{"server": s.Config.Host}
	ca := s.Config.TLSClientConfig.CAData
	if len(ca) == 0 && s.Config.TLSClientConfig.CAFile != "" {
		var err error
		if ca, err = os.ReadFile(s.Config.TLSClientConfig.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	if sn := s.Config.TLSClientConfig.ServerName; sn != "" {
		cluster["tls-server-name"] = sn // the loopback certificate names its own server
	}
	if len(ca) > 0 {
		cluster["certificate-authority-data"] = base64.StdEncoding.EncodeToString(ca)
	} else {
		cluster["insecure-skip-tls-verify"] = true
	}
	user := map[string]any{}
	if s.Config.BearerToken != "" {
		user["token"] = s.Config.BearerToken
	}
	if len(s.Config.TLSClientConfig.CertData) > 0 {
		user["client-certificate-data"] = base64.StdEncoding.EncodeToString(s.Config.TLSClientConfig.CertData)
		user["client-key-data"] = base64.StdEncoding.EncodeToString(s.Config.TLSClientConfig.KeyData)
	}
	cfg := map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "oracle",
		"clusters": []any{map[string]any{"name": "oracle", "cluster": cluster}},
		"users":    []any{map[string]any{"name": "oracle", "user": user}},
		"contexts": []any{map[string]any{"name": "oracle", "context": map[string]any{"cluster": "oracle", "user": "oracle"}}},
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Pause waits a moment between polls of the server, which offers no sync point for some of its
// asynchronous work (CRD establishment, storage swaps).
func Pause() { time.Sleep(20 * time.Millisecond) }
