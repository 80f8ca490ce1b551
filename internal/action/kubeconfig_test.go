package action

import (
	"encoding/base64"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The credentials of testKubeconfig.
const (
	testToken    = "eyJhbGciOiJSUzI1NiJ9.c2VydmljZWFjY291bnQ.c2lnbmF0dXJlLXNlY3JldA"
	testPassword = "hunter2-but-longer"
	testIDToken  = "oidc-id-token-0123456789"
	testAWSKey   = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	testKeyPEM   = "-----BEGIN EC PRIVATE KEY-----\n" +
		"MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oLRGGaz0QPm7oAoGCCqGSM49\n" +
		"AwEHoUQDQgAE4G7hTYbS6l5rEdOx4cJ8u0NrVh7QjH3lTq1Kj4bGm0cUoFJ3sx3N\n" +
		"-----END EC PRIVATE KEY-----\n"
	testCertPEM = "-----BEGIN CERTIFICATE-----\n" +
		"MIIBhTCCASugAwIBAgIQIRi6zePL6mKjOipn+dNuaTAKBggqhkjOPQQDAjASMRAw\n" +
		"-----END CERTIFICATE-----\n"
)

var testKubeconfig = `apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod
  cluster:
    server: https://prod.example.com:6443
    certificate-authority-data: ` + base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n")) + `
contexts:
- name: prod
  context:
    cluster: prod
    user: deployer
    namespace: default
- name: staging
  context:
    cluster: prod
    user: oidc
users:
- name: deployer
  user:
    token: ` + testToken + `
- name: admin
  user:
    client-certificate-data: ` + base64.StdEncoding.EncodeToString([]byte(testCertPEM)) + `
    client-key-data: ` + base64.StdEncoding.EncodeToString([]byte(testKeyPEM)) + `
- name: basic
  user:
    username: ops
    password: ` + testPassword + `
- name: oidc
  user:
    auth-provider:
      name: oidc
      config:
        client-id: kubernetes
        id-token: ` + testIDToken + `
- name: aws
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: aws
      args: [eks, get-token, --cluster-name, prod]
      env:
      - name: AWS_PROFILE
        value: default
      - name: AWS_SECRET_ACCESS_KEY
        value: ` + testAWSKey + `
`

func TestWriteKubeconfig(t *testing.T) {
	r := newRunner(t, pushMain)
	path, cleanup, err := WriteKubeconfig(r.action(), testKubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("kubeconfig mode = %v, want -rw-------", mode)
	}
	if di, err := os.Stat(filepath.Dir(path)); err != nil || di.Mode().Perm()&0o077 != 0 {
		t.Errorf("kubeconfig directory: %v, %v; want one only its owner can enter", di.Mode(), err)
	}
	if ws := r.env["GITHUB_WORKSPACE"]; strings.HasPrefix(path, ws) {
		t.Errorf("kubeconfig %s is inside the workspace %s", path, ws)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != testKubeconfig {
		t.Errorf("kubeconfig file differs from the input")
	}

	masks := r.masks()
	keyLines := strings.Split(strings.TrimSpace(testKeyPEM), "\n")
	for _, want := range []string{
		testKubeconfig,
		testToken,
		testPassword,
		testIDToken,
		testAWSKey,
		base64.StdEncoding.EncodeToString([]byte(testKeyPEM)),
		base64.StdEncoding.EncodeToString([]byte(testCertPEM)),
		keyLines[1], keyLines[2],
	} {
		if !slices.Contains(masks, want) {
			t.Errorf("not masked: %q", want)
		}
	}
	// Words every log holds stay readable.
	for _, notSecret := range []string{"default", "kubernetes", "ops", "-----BEGIN EC PRIVATE KEY-----", "https://prod.example.com:6443"} {
		if slices.Contains(masks, notSecret) {
			t.Errorf("masked %q, which is no secret", notSecret)
		}
	}
	for _, l := range r.lines() {
		if !strings.HasPrefix(l, "::add-mask::") {
			t.Errorf("WriteKubeconfig printed %q", l)
		}
	}

	cleanup()
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("after cleanup: %v, want the directory gone", err)
	}
}

func TestWriteKubeconfigEmpty(t *testing.T) {
	r := newRunner(t, pushMain)
	path, cleanup, err := WriteKubeconfig(r.action(), "  \n")
	if err != nil || path != "" {
		t.Fatalf("WriteKubeconfig(blank) = %q, %v; want \"\", nil", path, err)
	}
	cleanup()
	if r.out.Len() != 0 {
		t.Errorf("printed %q", r.out.String())
	}
}

func TestWriteKubeconfigNotAKubeconfig(t *testing.T) {
	r := newRunner(t, pushMain)
	content := "token: " + testToken + "\n\tnot: [yaml"
	path, _, err := WriteKubeconfig(r.action(), content)
	if err == nil {
		t.Fatalf("WriteKubeconfig accepted %q", content)
	}
	if path != "" {
		t.Errorf("path = %q, want none", path)
	}
	if !strings.HasPrefix(err.Error(), "input kubeconfig: not a kubeconfig") {
		t.Errorf("error = %q, want it to name the input", err)
	}
	if !slices.Contains(r.masks(), "token: "+testToken) {
		t.Errorf("masks = %q, want each line masked", r.masks())
	}
}
