package cli_test

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/store"
)

// The clear values of the test Secret. Each must be found nowhere snapply
// writes: outputs, errors, the store file.
var secretValues = []string{
	"s3cr3t-string-data-value",
	"s3cr3t-data-value",
	"s3cr3t-in-last-applied",
	"s3cr3t-changed-value",
}

func secretManifest(dataValue string) string {
	return `apiVersion: v1
kind: Secret
metadata:
  name: creds
  namespace: NS
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: '{"stringData":{"old":"s3cr3t-in-last-applied"}}'
stringData:
  password: s3cr3t-string-data-value
data:
  token: ` + base64.StdEncoding.EncodeToString([]byte(dataValue)) + `
`
}

func TestSecretValuesNeverLeave(t *testing.T) {
	t.Run("without a store key", func(t *testing.T) { secretValuesNeverLeave(t, "") })
	// With a store key the file is encrypted and the values sealed; the
	// key itself, in any form, must not leave either.
	t.Run("with a store key", func(t *testing.T) { secretValuesNeverLeave(t, "the store key passphrase for the leak test") })
}

func secretValuesNeverLeave(t *testing.T, key string) {
	t.Setenv("LEAK_TEST_KEY", key)
	t.Setenv("LEAK_TEST_NEW_KEY", "a second store key passphrase for the leak test")
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	var outputs []string
	run := func(args ...string) {
		t.Helper()
		r := snapply(t, args...)
		if r.code != 0 && r.code != 2 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		outputs = append(outputs, r.stdout, r.stderr)
	}
	inv := []string{"--store", db, "--name", ns, "--inventory-namespace", ns, "--store-key-env", "LEAK_TEST_KEY"}
	v1 := manifests(t, ns, map[string]string{"secret.yaml": secretManifest("s3cr3t-data-value")})
	v2 := manifests(t, ns, map[string]string{"secret.yaml": secretManifest("s3cr3t-changed-value")})
	for _, o := range []string{"text", "markdown", "json", "html"} {
		run(append([]string{"plan", v1, "-o", o, "--color=always"}, inv...)...)
	}
	var first struct{ Snapshot string }
	if err := json.Unmarshal([]byte(outputs[4]), &first); err != nil || first.Snapshot == "" {
		t.Fatalf("plan -o json: %v\n%s", err, outputs[4])
	}
	run(append([]string{"apply", v1, "--color=always"}, inv...)...)
	for _, o := range []string{"text", "markdown", "json", "html"} {
		run(append([]string{"plan", v2, "-o", o, "--diff=both"}, inv...)...)
	}
	if html := outputs[len(outputs)-2]; !strings.Contains(html, "data.token") || !strings.Contains(html, "redacted sha256:") {
		t.Errorf("the HTML plan shows no redacted field of the Secret: the test would not see a leak there")
	}
	for _, o := range []string{"json", "mermaid", "dot", "text"} {
		run(append([]string{"graph", v2, "-o", o}, inv...)...)
	}
	for _, o := range []string{"text", "markdown", "json"} {
		run(append([]string{"apply", v2, "-o", o}, inv...)...)
	}
	// The known path (the record of the last apply) is taken, and says so.
	run(append([]string{"plan", v2}, inv...)...)
	if last := outputs[len(outputs)-2]; !strings.Contains(last, "0 dry runs, 1 known unchanged") {
		t.Errorf("the Secret is not known unchanged after its apply:\n%s", last)
	}
	// git still says v1: the drift report compares the two values.
	for _, o := range []string{"text", "markdown", "json"} {
		run(append([]string{"drift", v1, "-o", o}, inv...)...)
	}
	if md := outputs[len(outputs)-4]; !strings.Contains(md, "adopt the live values in git") || !strings.Contains(md, "redacted sha256:") {
		t.Errorf("the drift report shows no adopt patch with a redacted value: the test would not see a leak there\n%s", md)
	}
	for _, o := range []string{"yaml", "json"} {
		run(append([]string{"render", v2, "-o", o, "--show-source"}, inv...)...)
		run("render", v2, "-o", o, "--offline", "--store", filepath.Join(t.TempDir(), "none.db"))
	}
	offline := func(args ...string) { // offline commands: no kubeconfig flags
		t.Helper()
		r := runRaw(t, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		outputs = append(outputs, r.stdout, r.stderr)
	}
	offline("history", "--store", db, "-o", "json", "--store-key-env", "LEAK_TEST_KEY")
	offline("show", "--store", db, "latest", "--managed-fields", "--store-key-env", "LEAK_TEST_KEY")
	run("diff", "--store", db, "latest", "--live", "--store-key-env", "LEAK_TEST_KEY")
	offline("show", "--store", db, "latest", "-o", "html", "--store-key-env", "LEAK_TEST_KEY")
	offline("diff", "--store", db, first.Snapshot, "latest", "-o", "html", "--store-key-env", "LEAK_TEST_KEY")
	if html := outputs[len(outputs)-2]; !strings.Contains(html, "redacted sha256:") {
		t.Errorf("the HTML diff shows no redacted value of the Secret: the test would not see a leak there")
	}
	keys := []string{}
	if key != "" {
		// Every store command, and the errors of a wrong and a missing key.
		offline("store", "rekey", "--store", db, "--old-key-env", "LEAK_TEST_KEY", "--new-key-env", "LEAK_TEST_NEW_KEY")
		offline("store", "rekey", "--store", db, "--old-key-env", "LEAK_TEST_NEW_KEY", "--new-key-env", "LEAK_TEST_KEY")
		for _, args := range [][]string{{"history", "--store", db}, {"history", "--store", db, "--store-key-env", "LEAK_TEST_NEW_KEY"}} {
			r := runRaw(t, args...)
			if r.code != 1 {
				t.Errorf("%v: exit %d, want 1", args, r.code)
			}
			outputs = append(outputs, r.stdout, r.stderr)
		}
		for _, k := range []string{"LEAK_TEST_KEY", "LEAK_TEST_NEW_KEY"} {
			b, err := engine.StoreKey{Env: k}.Read(os.Getenv)
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, os.Getenv(k), hex.EncodeToString(b), base64.StdEncoding.EncodeToString(b), string(b))
		}
	}

	// The plan must still say which keys changed.
	if joined := strings.Join(outputs, "\n"); !strings.Contains(joined, "token: <redacted sha256:") {
		t.Errorf("no redacted digest in the outputs: the test would not see a leak")
	}
	// The field diffs (text, markdown, JSON) show the Secret's changed keys.
	if joined := strings.Join(outputs, "\n"); !strings.Contains(joined, "~ data.token: <redacted sha256:") || !strings.Contains(joined, `"path": "data.token"`) {
		t.Errorf("no field diff of the Secret in the outputs: the test would not see a leak there")
	}

	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.OpenStore(db, true, engine.StoreKey{Env: "LEAK_TEST_KEY"}, os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, encrypted, _ := store.EncryptedKeyID(db); encrypted != (key != "") {
		t.Errorf("store file encrypted: %v, want %v", encrypted, key != "")
	}
	metas, err := s.Snapshots()
	if err != nil {
		t.Fatal(err)
	}
	var stored []string
	for _, m := range metas {
		snap, err := s.Snapshot(m.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range snap.Entries {
			u, err := s.Object(e.ID)
			if err != nil {
				t.Fatal(err)
			}
			y, _ := yaml.Marshal(u.Object)
			stored = append(stored, string(y))
			if u.GetKind() == "Secret" && u.GetName() == "creds" {
				if _, found, _ := unstructured.NestedMap(u.Object, "data"); !found {
					t.Errorf("stored Secret has no data at all: %s", y)
				}
			}
		}
	}
	haystacks := map[string]string{"outputs": strings.Join(outputs, "\n"), "store file": string(raw), "store objects": strings.Join(stored, "\n")}
	for where, text := range haystacks {
		for _, v := range secretValues {
			for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
				if strings.Contains(text, form) {
					t.Errorf("%s contain the secret value %q (as %q)", where, v, form)
				}
			}
		}
		if where == "store objects" {
			continue
		}
		for _, k := range keys {
			if strings.Contains(text, k) {
				t.Errorf("%s contain key material (%.6s...)", where, k)
			}
		}
	}
}

// TestSecretValuesFromChartValuesNeverLeave renders a Helm chart whose
// Secret takes its values from valuesInline and from a values file: they
// are redacted like any other Secret's, in every output and in the store.
func TestSecretValuesFromChartValuesNeverLeave(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	clear := []string{"s3cr3t-helm-inline-value", "s3cr3t-helm-file-value"}
	dir := manifests(t, ns, map[string]string{
		"kustomization.yaml":              "namespace: NS\nhelmCharts:\n- name: creds\n  valuesInline:\n    password: s3cr3t-helm-inline-value\n  additionalValuesFiles: [secret-values.yaml]\n",
		"secret-values.yaml":              "token: s3cr3t-helm-file-value\n",
		"charts/creds/Chart.yaml":         "apiVersion: v2\nname: creds\nversion: 0.1.0\n",
		"charts/creds/values.yaml":        "password: \"\"\ntoken: \"\"\n",
		"charts/creds/templates/sec.yaml": "apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: {{ .Values.password | quote }}\ndata:\n  token: {{ .Values.token | b64enc }}\n  random: {{ randAlphaNum 8 | b64enc }}\n",
	})
	inv := []string{"--store", db, "--name", ns, "--inventory-namespace", ns}
	var outputs []string
	for _, args := range [][]string{
		{"plan", dir, "-o", "text"}, {"plan", dir, "-o", "markdown"}, {"plan", dir, "-o", "json"},
		{"apply", dir, "-o", "json"}, {"plan", dir, "-o", "text"}, {"show", "latest"},
	} {
		if args[0] != "show" {
			args = append(args, inv...)
		} else {
			args = append(args, "--store", db)
		}
		var r result
		if args[0] != "show" {
			r = snapply(t, args...)
		} else {
			r = runRaw(t, args...) // show is offline: no kubeconfig flags
		}
		if r.code != 0 && r.code != 2 {
			t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		outputs = append(outputs, r.stdout, r.stderr)
	}
	joined := strings.Join(outputs, "\n")
	if !strings.Contains(joined, "password: <redacted sha256:") || !strings.Contains(joined, "non-deterministic") {
		t.Errorf("no redacted digest or non-deterministic warning in the outputs: the test would not see a leak\n%s", joined)
	}
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	for where, text := range map[string]string{"outputs": joined, "store file": string(raw)} {
		for _, v := range clear {
			for _, form := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
				if strings.Contains(text, form) {
					t.Errorf("%s contain the secret value %q (as %q)", where, v, form)
				}
			}
		}
	}
}
