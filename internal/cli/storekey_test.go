package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/store"
)

// Keys of the store-key tests, as 64 hex characters.
const (
	testKeyA = "a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0"
	testKeyB = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"
)

// keyID returns the key ID of the key in the variable name.
func keyID(t *testing.T, name string) string {
	t.Helper()
	k, err := engine.StoreKey{Env: name}.Read(os.Getenv)
	if err != nil || k == nil {
		t.Fatalf("%s: %v", name, err)
	}
	return store.KeyID(k)
}

// oneLineError checks that r failed with exit 1 and one error line (after
// progress lines, if any) that holds every string of want.
func oneLineError(t *testing.T, what string, r result, want ...string) {
	t.Helper()
	oneLineErrorCode(t, what, 1, r, want...)
}

// oneLineErrorCode is oneLineError for a command whose errors exit with
// code (diff's are 2: 1 means differences).
func oneLineErrorCode(t *testing.T, what string, code int, r result, want ...string) {
	t.Helper()
	var errs []string
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "error: ") {
			errs = append(errs, l)
		}
	}
	if r.code != code || len(errs) != 1 || !strings.HasSuffix(r.stderr, errs[0]+"\n") {
		t.Errorf("%s: exit %d, stderr %q; want exit %d and one error line", what, r.code, r.stderr, code)
		return
	}
	for _, w := range want {
		if !strings.Contains(errs[0], w) {
			t.Errorf("%s: the error does not say %q: %s", what, w, errs[0])
		}
	}
}

func TestEncryptedStoreFromTheCLI(t *testing.T) {
	t.Setenv("APP_STORE_KEY", testKeyA)
	t.Setenv("OTHER_STORE_KEY", testKeyB)
	t.Setenv(store.KeyEnv, "")
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	files := map[string]string{"app.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: billing-encrypted-settings, namespace: NS}
data: {ENDPOINT: "https://billing.internal.example/v1/charge"}
`}
	if r := applyIn(t, ns, db, manifests(t, ns, files), "--wait=false", "--store-key-env", "APP_STORE_KEY"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	raw, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(raw, []byte("snapply-encrypted-store v1 key-id="+keyID(t, "APP_STORE_KEY")+"\n")) {
		t.Fatalf("the store file is not encrypted: %q", raw[:min(len(raw), 60)])
	}
	for _, s := range []string{"billing-encrypted-settings", ns, "https://billing.internal.example/v1/charge", "ENDPOINT", "ConfigMap"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the encrypted store file holds %q", s)
		}
	}
	id := keyID(t, "APP_STORE_KEY")

	// Every command that opens the store opens it with the key...
	for _, args := range [][]string{
		{"history", "--store", db},
		{"show", "--store", db, "latest"},
		{"diff", "--store", db, "latest", "--live", "--kubeconfig", env.Kubeconfig},
		{"plan", manifests(t, ns, files), "--store", db, "--name", ns, "--inventory-namespace", ns, "--kubeconfig", env.Kubeconfig},
	} {
		r := runRaw(t, append(args, "--store-key-env", "APP_STORE_KEY")...)
		if r.code != 0 {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		// ...and without it, or with another, says so in one line.
		code := 1
		if args[0] == "diff" {
			code = 2 // diff's errors: 1 means differences
		}
		oneLineErrorCode(t, args[0]+" without a key", code, runRaw(t, args...),
			"store: "+db+": the store file is encrypted with key ID "+id+", and no store key was given; set SNAPPLY_STORE_KEY to the key the file was written with")
		oneLineErrorCode(t, args[0]+" with another key", code, runRaw(t, append(args, "--store-key-env", "OTHER_STORE_KEY")...),
			"store: "+db+": the store key does not open it: the file needs key ID "+id+", the key given has key ID "+keyID(t, "OTHER_STORE_KEY")+"; set OTHER_STORE_KEY")
	}
	if r := rollbackIn(t, ns, db, "--to", "latest", "--dry-run", "--store-key-env", "APP_STORE_KEY"); r.code != 0 {
		t.Errorf("rollback --dry-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	oneLineError(t, "rollback without a key", rollbackIn(t, ns, db, "--to", "latest"), "is encrypted with key ID "+id)
	// The plan and rollback above wrote to the store; it is still encrypted.
	if got, enc, _ := store.EncryptedKeyID(db); !enc || got != id {
		t.Errorf("after plan and rollback: encrypted %v, key ID %q", enc, got)
	}
}

func TestStoreEncryptDecryptRekeyCommands(t *testing.T) {
	t.Setenv("OLD_KEY", testKeyA)
	t.Setenv("NEW_KEY", testKeyB)
	t.Setenv("UNSET_KEY", "")
	t.Setenv(store.KeyEnv, "")
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	if r := applyIn(t, ns, db, manifests(t, ns, map[string]string{"app.yaml": configMaps}), "--wait=false"); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	history := func(keyEnv string) result {
		return runRaw(t, "history", "--store", db, "--store-key-env", keyEnv)
	}
	ok := func(what string, r result) {
		t.Helper()
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", what, r.code, r.stdout, r.stderr)
		}
	}
	oldID, newID := keyID(t, "OLD_KEY"), keyID(t, "NEW_KEY")

	oneLineError(t, "encrypt without a key", runRaw(t, "store", "encrypt", "--store", db, "--store-key-env", "UNSET_KEY"), "UNSET_KEY is not set")
	oneLineError(t, "decrypt a plain store", runRaw(t, "store", "decrypt", "--store", db, "--store-key-env", "OLD_KEY"), "store: "+db+": not an encrypted store file")

	r := runRaw(t, "store", "encrypt", "--store", db, "--store-key-env", "OLD_KEY")
	ok("encrypt", r)
	if want := db + ": encrypted with key ID " + oldID + "\n"; r.stderr != want {
		t.Errorf("encrypt said %q, want %q", r.stderr, want)
	}
	oneLineError(t, "history without the key", history("UNSET_KEY"), "key ID "+oldID)
	ok("history with the key", history("OLD_KEY"))
	oneLineError(t, "encrypt twice", runRaw(t, "store", "encrypt", "--store", db, "--store-key-env", "NEW_KEY"), "already encrypted, with key ID "+oldID)

	oneLineError(t, "rekey with the wrong old key", runRaw(t, "store", "rekey", "--store", db, "--old-key-env", "NEW_KEY", "--new-key-env", "OLD_KEY"),
		"the file needs key ID "+oldID+", the key given has key ID "+newID+"; set NEW_KEY")
	oneLineError(t, "rekey to the same key", runRaw(t, "store", "rekey", "--store", db, "--old-key-env", "OLD_KEY", "--new-key-env", "OLD_KEY"), "hold the same key")
	r = runRaw(t, "store", "rekey", "--store", db, "--old-key-env", "OLD_KEY", "--new-key-env", "NEW_KEY")
	ok("rekey", r)
	if want := db + ": re-encrypted with key ID " + newID + " (was " + oldID + ")\n"; r.stderr != want {
		t.Errorf("rekey said %q, want %q", r.stderr, want)
	}
	oneLineError(t, "history with the old key after rekey", history("OLD_KEY"), "the file needs key ID "+newID)
	r = history("NEW_KEY")
	ok("history with the new key after rekey", r)
	if !strings.Contains(r.stdout, "desired") {
		t.Errorf("history after rekey lists no snapshot:\n%s", r.stdout)
	}

	ok("decrypt", runRaw(t, "store", "decrypt", "--store", db, "--store-key-env", "NEW_KEY"))
	ok("history of the decrypted store without a key", history("UNSET_KEY"))
	if fi, err := os.Stat(db); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("decrypted store: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
}

// The fixtures' repository is public: its store leaves the runner only
// encrypted, or when allow-public-store says so.
func TestActionPublicRepositoryStore(t *testing.T) {
	tests := []struct {
		name       string
		inputs     map[string]string
		wantUpload bool
		wantEnc    bool
	}{
		{name: "no key: not uploaded", wantUpload: false},
		{name: "allow-public-store: uploaded in the clear", inputs: map[string]string{"INPUT_ALLOW_PUBLIC_STORE": "true"}, wantUpload: true},
		{name: "store-key: uploaded encrypted", inputs: map[string]string{"INPUT_STORE-KEY": testKeyA}, wantUpload: true, wantEnc: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(store.KeyEnv, "")
			ns := env.Namespace(t)
			r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
			// The fixtures' repository is public ("private": false).
			res := r.run("push-main", tt.inputs)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			summary, _ := os.ReadFile(r.summary)
			const warning = "::warning::The store was not uploaded: this repository is public and no store-key is set"
			warned := strings.Contains(res.stdout, warning)
			if got := r.output("upload-store"); got != map[bool]string{true: "true", false: "false"}[tt.wantUpload] {
				t.Errorf("upload-store = %q, want %v", got, tt.wantUpload)
			}
			if tt.wantUpload == (r.output("artifact-name") == "") {
				t.Errorf("artifact-name = %q with upload %v", r.output("artifact-name"), tt.wantUpload)
			}
			if warned == tt.wantUpload || strings.Contains(string(summary), "allow-public-store: true") == tt.wantUpload {
				t.Errorf("warning %v, summary note %v; want both %v:\n%s\n%s", warned, !tt.wantUpload, !tt.wantUpload, res.stdout, summary)
			}
			_, enc, err := store.EncryptedKeyID(filepath.Join(r.workspace, "snapply.db"))
			if err != nil || enc != tt.wantEnc {
				t.Errorf("store file encrypted: %v (%v), want %v", enc, err, tt.wantEnc)
			}
			for _, l := range strings.Split(res.stdout+res.stderr+string(summary), "\n") {
				if strings.Contains(l, testKeyA) && l != "::add-mask::"+testKeyA {
					t.Errorf("the store key is in the log or the summary: %.40s", l)
				}
			}
		})
	}
}

func TestActionRollbackFromAnEncryptedArtifact(t *testing.T) {
	t.Setenv(store.KeyEnv, "")
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	key := map[string]string{"INPUT_STORE-KEY": testKeyA}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for _, src := range []map[string]string{key, extra} {
			for k, v := range src {
				m[k] = v
			}
		}
		return m
	}
	if res := r.run("push-main", with(map[string]string{"GITHUB_RUN_ID": "4001"})); res.code != 0 {
		t.Fatalf("v1: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	storeV1, err := os.ReadFile(filepath.Join(r.workspace, "snapply.db"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(storeV1, []byte(ns)) || !bytes.HasPrefix(storeV1, []byte("snapply-encrypted-store v1 ")) {
		t.Fatal("the artifact of run 4001 is not encrypted")
	}
	r.gh.AddArtifact(4001, "snapply-"+ns+"-4001-1", storeV1, false)
	r.write(map[string]string{"app.yaml": strings.Replace(configMaps, `k: "1"`, `k: "v2"`, 1)})
	if res := r.run("push-main", with(map[string]string{"GITHUB_RUN_ID": "4002"})); res.code != 0 {
		t.Fatalf("v2: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}

	// A fresh job without the key, or with another, cannot open it: one
	// error naming the key ID it needs, and the cluster is left alone.
	id := store.KeyID(mustHex(t, testKeyA))
	for name, inputs := range map[string]map[string]string{
		"no key":      {"INPUT_STORE-KEY": ""},
		"another key": {"INPUT_STORE-KEY": testKeyB},
	} {
		os.Remove(filepath.Join(r.workspace, "snapply.db"))
		in := map[string]string{"INPUT_ROLLBACK-TO": "4001", "GITHUB_RUN_ID": "4003", "INPUT_ALLOW_PUBLIC_STORE": "true"}
		for k, v := range inputs {
			in[k] = v
		}
		res := r.run("workflow_dispatch-rollback", in)
		var errLines []string
		for _, l := range strings.Split(res.stdout, "\n") {
			if strings.HasPrefix(l, "::error") {
				errLines = append(errLines, l)
			}
		}
		if res.code != 1 || len(errLines) != 1 || !strings.Contains(errLines[0], "key ID "+id) || !strings.Contains(errLines[0], "set the store-key input") {
			t.Errorf("%s: exit %d, error lines %q; want exit 1 and one line naming key ID %s", name, res.code, errLines, id)
		}
		if cm, _ := clientset(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "a", metav1.GetOptions{}); cm.Data["k"] != "v2" {
			t.Errorf("%s: a failed rollback changed the cluster: %v", name, cm.Data)
		}
	}

	os.Remove(filepath.Join(r.workspace, "snapply.db"))
	res := r.run("workflow_dispatch-rollback", with(map[string]string{"INPUT_ROLLBACK-TO": "4001", "GITHUB_RUN_ID": "4004"}))
	if res.code != 0 {
		t.Fatalf("rollback: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if cm, err := clientset(t).CoreV1().ConfigMaps(ns).Get(t.Context(), "a", metav1.GetOptions{}); err != nil || cm.Data["k"] != "1" {
		t.Errorf("a = %v (%v), want v1's value", cm.Data, err)
	}
	if r.output("rollback") != "true" || r.output("upload-store") != "true" {
		t.Errorf("outputs rollback %q, upload-store %q", r.output("rollback"), r.output("upload-store"))
	}
	// The workspace's store, which the rollback recorded into, stays encrypted.
	if _, enc, _ := store.EncryptedKeyID(filepath.Join(r.workspace, "snapply.db")); !enc {
		t.Error("the store after the rollback is not encrypted")
	}
}

func TestActionRollbackToARunThatKeptNoStore(t *testing.T) {
	ns := env.Namespace(t)
	r := newRunner(t, ns, map[string]string{"app.yaml": configMaps})
	res := r.run("workflow_dispatch-rollback", map[string]string{"INPUT_ROLLBACK-TO": "5001"})
	if res.code != 1 || !strings.Contains(res.stdout, "the store of that run was not kept") || !strings.Contains(res.stdout, "store-key") {
		t.Errorf("exit %d; want 1 and an error saying the store was not kept and how to keep it:\n%s", res.code, res.stdout)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	k, err := store.KeyFromVar(func(string) string { return s }, "KEY")
	if err != nil {
		t.Fatal(err)
	}
	return k
}
