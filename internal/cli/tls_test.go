package cli

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/localtable/localtable/localtabletest"
)

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key
// as PEM files, and returns their paths and a pool trusting it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localtable test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile, pool
}

// serveTLS runs serve with --cert/--key and args until the test ends. It
// returns the printed endpoint, connection string and banner, and the
// pool that trusts the certificate.
func serveTLS(t *testing.T, args ...string) (endpoint, connStr, banner string, pool *x509.CertPool) {
	certFile, keyFile, pool := selfSigned(t)
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--addr", "127.0.0.1:0", "--log-level", "error", "--cert", certFile, "--key", keyFile}, args...), pw, io.Discard)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	sc := bufio.NewScanner(pr)
	var b strings.Builder
	for sc.Scan() {
		line := sc.Text()
		b.WriteString(line + "\n")
		if strings.HasPrefix(line, "DefaultEndpointsProtocol=") {
			connStr = line
			for _, kv := range strings.Split(line, ";") {
				if v, ok := strings.CutPrefix(kv, "TableEndpoint="); ok {
					endpoint = v
				}
			}
		}
		if strings.HasPrefix(line, "localtable: ready (") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	if !strings.HasPrefix(endpoint, "https://127.0.0.1:") || !strings.HasPrefix(connStr, "DefaultEndpointsProtocol=https;") {
		t.Fatalf("endpoint %q, connection string %q", endpoint, connStr)
	}
	return endpoint, connStr, b.String(), pool
}

// TestRunTLSBearerToken serves HTTPS with --cert/--key and --oauth basic
// and talks to it with a token credential and with the printed connection
// string.
func TestRunTLSBearerToken(t *testing.T) {
	endpoint, connStr, banner, pool := serveTLS(t, "--oauth", "basic")
	if !strings.Contains(banner, "bearer tokens (--oauth basic: claims checked, signature NOT checked)") {
		t.Errorf("the banner does not announce token acceptance:\n%s", banner)
	}
	transport := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	opts := &aztables.ClientOptions{}
	opts.Transport = transport

	bg := context.Background()
	svc, err := aztables.NewServiceClient(endpoint, localtabletest.NewTokenCredential(nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTable(bg, "secure", nil); err != nil {
		t.Fatalf("CreateTable with a token: %v", err)
	}
	c := svc.NewClient("secure")
	b, _ := json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 1})
	if _, err := c.AddEntity(bg, b, nil); err != nil {
		t.Fatalf("AddEntity: %v", err)
	}
	b, _ = json.Marshal(map[string]any{"PartitionKey": "p", "RowKey": "r", "V": 2})
	if _, err := c.UpsertEntity(bg, b, nil); err != nil {
		t.Fatalf("UpsertEntity: %v", err)
	}
	// The shared key client from the printed connection string reads it.
	ks, err := aztables.NewServiceClientFromConnectionString(connStr, opts)
	if err != nil {
		t.Fatal(err)
	}
	g, err := ks.NewClient("secure").GetEntity(bg, "p", "r", nil)
	if err != nil || !strings.Contains(string(g.Value), `"V":2`) {
		t.Fatalf("GetEntity with shared key: %v %s", err, g.Value)
	}
	if _, err := c.DeleteEntity(bg, "p", "r", nil); err != nil {
		t.Fatalf("DeleteEntity: %v", err)
	}
	// A client that does not trust the certificate fails.
	noRetry := &aztables.ClientOptions{}
	noRetry.Retry = policy.RetryOptions{MaxRetries: -1}
	untrusted, _ := aztables.NewServiceClient(endpoint, localtabletest.NewTokenCredential(nil), noRetry)
	if _, err := untrusted.CreateTable(bg, "nope", &aztables.CreateTableOptions{}); err == nil {
		t.Fatal("untrusted certificate accepted")
	}
}

// TestRunTLSRefusesTokensWithoutOAuth: HTTPS alone does not accept bearer
// tokens, whose signatures are never checked (issue 22): a token with the
// right claims and a junk signature creates nothing.
func TestRunTLSRefusesTokensWithoutOAuth(t *testing.T) {
	endpoint, _, banner, pool := serveTLS(t)
	if strings.Contains(banner, "bearer") {
		t.Errorf("the banner announces bearer tokens:\n%s", banner)
	}
	opts := &aztables.ClientOptions{}
	opts.Transport = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	opts.Retry = policy.RetryOptions{MaxRetries: -1}
	svc, err := aztables.NewServiceClient(endpoint, localtabletest.NewTokenCredential(nil), opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateTable(context.Background(), "forged", nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden {
		t.Fatalf("CreateTable with a forged token over HTTPS without --oauth: %v, want 403", err)
	}
}

// TestServeOAuthFlag: --oauth takes basic alone, and only with HTTPS.
func TestServeOAuthFlag(t *testing.T) {
	certFile, keyFile, _ := selfSigned(t)
	for _, args := range [][]string{
		{"--oauth", "basic"},
		{"--oauth", "full", "--cert", certFile, "--key", keyFile},
	} {
		err := run(context.Background(), append([]string{"--addr", "127.0.0.1:0"}, args...), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--oauth") {
			t.Errorf("%v: %v, want a usage error about --oauth", args, err)
		}
	}
}

// TestBannerWarnsOffLoopback: the banner names the authentication in force
// and warns when a mode without real credentials listens on an address
// other machines reach.
func TestBannerWarnsOffLoopback(t *testing.T) {
	c := commands["serve"]
	for _, tc := range []struct {
		cfg      serveConfig
		loopback bool
		auth     string
		warn     bool
	}{
		{serveConfig{addr: "127.0.0.1:10002"}, true, "SAS (account keys)\n", false},
		{serveConfig{addr: "0.0.0.0:10002"}, false, "SAS (account keys)\n", false},
		{serveConfig{addr: "127.0.0.1:10002", noAuth: true}, true, "none (--no-auth)", false},
		{serveConfig{addr: "0.0.0.0:10002", noAuth: true}, false, "none (--no-auth)", true},
		{serveConfig{addr: "127.0.0.1:10002", cert: "c", keyFile: "k", oauth: "basic"}, true, "signature NOT checked", false},
		{serveConfig{addr: "0.0.0.0:10002", cert: "c", keyFile: "k", oauth: "basic"}, false, "signature NOT checked", true},
		{serveConfig{addr: "0.0.0.0:10002", cert: "c", keyFile: "k"}, false, "SAS (account keys)\n", false},
	} {
		p, err := planServe(c, &tc.cfg, newEngines(&Config{}), nil)
		if err != nil {
			t.Fatalf("%+v: %v", tc.cfg, err)
		}
		var b strings.Builder
		printBanner(&b, &tc.cfg, p, p.accounts, "http", "127.0.0.1:10002", tc.loopback, nil)
		if !strings.Contains(b.String(), tc.auth) || strings.Contains(b.String(), "WARNING") != tc.warn {
			t.Errorf("%+v (loopback %v): want %q, warning %v:\n%s", tc.cfg, tc.loopback, tc.auth, tc.warn, b.String())
		}
	}
}
