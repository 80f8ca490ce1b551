package cli_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

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
	inv := []string{"--store", db, "--name", ns, "--inventory-namespace", ns}
	v1 := manifests(t, ns, map[string]string{"secret.yaml": secretManifest("s3cr3t-data-value")})
	v2 := manifests(t, ns, map[string]string{"secret.yaml": secretManifest("s3cr3t-changed-value")})
	for _, o := range []string{"text", "markdown", "json"} {
		run(append([]string{"plan", v1, "-o", o, "--color=always"}, inv...)...)
	}
	run(append([]string{"apply", v1, "--color=always"}, inv...)...)
	for _, o := range []string{"text", "markdown", "json"} {
		run(append([]string{"plan", v2, "-o", o}, inv...)...)
		run(append([]string{"apply", v2, "-o", o}, inv...)...)
	}
	// The known path (the record of the last apply) is taken, and says so.
	run(append([]string{"plan", v2}, inv...)...)
	if last := outputs[len(outputs)-2]; !strings.Contains(last, "0 dry runs, 1 known unchanged") {
		t.Errorf("the Secret is not known unchanged after its apply:\n%s", last)
	}
	run("history", "--store", db, "-o", "json")
	run("show", "--store", db, "latest", "--managed-fields")

	// The plan must still say which keys changed.
	if joined := strings.Join(outputs, "\n"); !strings.Contains(joined, "token: <redacted sha256:") {
		t.Errorf("no redacted digest in the outputs: the test would not see a leak")
	}

	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(db, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
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
	}
}
