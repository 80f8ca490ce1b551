package action

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
)

const (
	dbPassword  = "s3cr3t-db-password"
	apiKey      = "ak_live_51HxYzQ"
	configFile  = "url: https://db.internal:5432\nuser: app\npassword: " + dbPassword + "\n"
	lastApplied = `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"stringData":{"api-key":"` + apiKey + `"}}`
)

func testObjects() []object.Object {
	objs := []*unstructured.Unstructured{
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "Secret",
			"metadata": map[string]any{
				"name": "db", "namespace": "prod",
				"annotations": map[string]any{"kubectl.kubernetes.io/last-applied-configuration": lastApplied},
			},
			"data":       map[string]any{"password": base64.StdEncoding.EncodeToString([]byte(dbPassword))},
			"stringData": map[string]any{"config.yaml": configFile, "api-key": apiKey},
		}},
		{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "settings", "namespace": "prod"},
			"data":     map[string]any{"log-level": "debug-verbose"},
		}},
	}
	out := make([]object.Object, len(objs))
	for i, u := range objs {
		out[i] = object.Object{Ref: object.RefOf(u), Obj: u}
	}
	return out
}

func TestMask(t *testing.T) {
	r := newRunner(t, prOpened)
	Mask(r.action(), testObjects())
	masks := r.masks()
	for _, want := range []string{
		dbPassword,
		base64.StdEncoding.EncodeToString([]byte(dbPassword)),
		apiKey,
		base64.StdEncoding.EncodeToString([]byte(apiKey)),
		configFile,
		base64.StdEncoding.EncodeToString([]byte(configFile)),
		"password: " + dbPassword, // a line of the multi-line value
		"url: https://db.internal:5432",
		lastApplied,
	} {
		if !slices.Contains(masks, want) {
			t.Errorf("not masked: %q", want)
		}
	}
	if slices.Contains(masks, "debug-verbose") {
		t.Error("masked a ConfigMap value")
	}
	seen := map[string]bool{}
	for _, m := range masks {
		if seen[m] {
			t.Errorf("masked %q twice", m)
		}
		seen[m] = true
	}
}

func TestMaskStrings(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"single line", "hunter2", []string{"hunter2"}},
		{"short single line is still masked", "ab", []string{"ab"}},
		{"blank", " \n ", nil},
		{"surrounding space", " hunter2 ", []string{" hunter2 ", "hunter2"}},
		{"trailing line break", "hunter2\n", []string{"hunter2\n", "hunter2"}},
		{"lines", "{\n  \"key\": \"abcdef\"\n}\n", []string{"{\n  \"key\": \"abcdef\"\n}\n", `"key": "abcdef"`}},
		{"CRLF lines", "first-line\r\nsecond-line\r\n", []string{"first-line\r\nsecond-line\r\n", "first-line", "second-line"}},
		{"PEM", "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----\n", []string{"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY-----\n", "MIIEvQIBADANBgkq"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, maskStrings(tt.in)); diff != "" {
				t.Errorf("maskStrings(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// TestMaskedBeforeLogged runs what snapply action does first — load the
// config, write the kubeconfig, mask the desired Secrets — and then logs
// every secret in a group, and checks that each line of the log that shows
// a secret comes after the mask that hides it.
func TestMaskedBeforeLogged(t *testing.T) {
	const token = "ghs_0123456789abcdefghij"
	r := newRunner(t, prOpened).input(InputGitHubToken, token).input(InputKubeconfig, testKubeconfig)
	a := r.action()
	cfg, err := Load(a)
	if err != nil {
		t.Fatal(err)
	}
	_, cleanup, err := WriteKubeconfig(a, cfg.Inputs.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	objs := testObjects()
	Mask(a, objs)

	keyLines := strings.Split(strings.TrimSpace(testKeyPEM), "\n")[1:3]
	secrets := append([]string{
		token, testToken, testPassword, testIDToken, testAWSKey,
		dbPassword, apiKey, base64.StdEncoding.EncodeToString([]byte(dbPassword)), lastApplied,
	}, keyLines...)
	err = Group(a, "render", func() error {
		for _, s := range secrets {
			a.Infof("value: %s", s)
		}
		a.Infof("%s", configFile)
		a.Infof("%s", testKeyPEM)
		return fmt.Errorf("fails with %s", dbPassword)
	})
	if err == nil {
		t.Fatal("Group lost fn's error")
	}
	a.Errorf("%v", err)

	if n := strings.Count(r.out.String(), "\nvalue: "); n != len(secrets) {
		t.Fatalf("logged %d values, want %d", n, len(secrets))
	}
	if bad := unmasked(r, secrets); len(bad) > 0 {
		t.Errorf("lines show a secret before it is masked:\n%s", strings.Join(bad, "\n"))
	}

	// The check catches a value logged before its mask.
	late := newRunner(t, prOpened)
	la := late.action()
	la.Infof("value: %s", dbPassword)
	Mask(la, objs)
	la.Infof("value: %s", dbPassword)
	if diff := cmp.Diff([]string{"value: " + dbPassword}, unmasked(late, []string{dbPassword})); diff != "" {
		t.Errorf("unmasked lines (-want +got):\n%s", diff)
	}
}
