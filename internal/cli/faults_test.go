package cli_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/snapply/snapply/internal/store"
	"github.com/snapply/snapply/internal/testenv"
)

// Faults that are not here: Ctrl-C in the middle of an apply is
// TestApplyInterrupted (apply_test.go); a lock whose holder died is taken
// over once its lease expires in TestFaultAPIServerGone below (the re-run
// after the crash), and in detail in internal/apply's lock tests.

// TestFaultAPIServerGone kills the API server in the middle of an apply:
// after the 19th of 50 writes. The objects written stay written, every
// other one is reported failed, the store keeps the before snapshot and the
// records, a plan against the dead server fails with one line, and once a
// server is back on the same etcd a re-run converges.
func TestFaultAPIServerGone(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir() // etcd's data stays here across the restart
	e2, err := testenv.Start(ctx, testenv.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e2.Stop() })
	cs, err := kubernetes.NewForConfig(e2.Config)
	if err != nil {
		t.Fatal(err)
	}
	const objects, killAt = 50, 20
	pid := apiServerPID(t, e2)
	var writes atomic.Int32
	startWebhook(t, cs, "default", 10, func(req *admissionv1.AdmissionRequest) string {
		if !ptr.Deref(req.DryRun, false) && writes.Add(1) == killAt {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Errorf("kill the API server: %v", err)
			}
		}
		return ""
	})

	var b strings.Builder
	for i := range objects {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm-%03d, namespace: default}\ndata: {k: v}\n", i)
	}
	src := manifests(t, "", map[string]string{"cms.yaml": b.String()})
	db := filepath.Join(t.TempDir(), "s.db")
	apply := func(kubeconfig string, extra ...string) result {
		args := append([]string{"apply", src, "--kubeconfig", kubeconfig, "--store", db, "--name", "faults", "--inventory-namespace", "default", "--wait=false", "--color=never"}, extra...)
		return runRaw(t, args...)
	}

	// One write at a time, so that exactly killAt-1 are written.
	r := apply(e2.Kubeconfig, "--concurrency", "1", "-q")
	noStackTrace(t, "apply", r)
	if r.code != 1 {
		t.Fatalf("apply while the API server dies: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := fmt.Sprintf("Apply: %d applied, 0 unchanged, 0 pruned, %d failed, 0 not attempted", killAt-1, objects-killAt+1)
	if !strings.Contains(r.stdout, want) {
		t.Errorf("apply result lacks %q:\n%s", want, r.stdout)
	}
	wantEntry(t, "apply", r.stdout, "! configmap/cm-049 -n default (failed)", "cms.yaml:247", []string{"connection refused"})
	wantEntry(t, "apply", r.stdout, "+ configmap/cm-018 -n default (applied)", "cms.yaml:92", nil)
	errLine := lastLine(r.stderr)
	for _, w := range []string{"error: apply: recording the outcome: ", "cannot reach the API server at https://127.0.0.1:"} {
		if !strings.Contains(errLine, w) {
			t.Errorf("error %q lacks %q", errLine, w)
		}
	}
	if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
		t.Errorf("stderr (with -q) has %d lines, want the error only:\n%s", n+1, r.stderr)
	}
	run := recordedRun(t, db)
	if run.After != "" {
		t.Errorf("run records after snapshot %s of a dead server", run.After)
	}
	outcomes := map[string]int{}
	for _, rec := range run.Records {
		outcomes[rec.Outcome]++
	}
	if outcomes["applied"] != killAt-1 || outcomes["failed"] != objects-killAt+1 {
		t.Errorf("recorded outcomes %v, want %d applied and %d failed", outcomes, killAt-1, objects-killAt+1)
	}

	// Stopped before a plan: one line, nothing planned.
	r = runRaw(t, "plan", src, "--kubeconfig", e2.Kubeconfig, "--store", db, "-q")
	noStackTrace(t, "plan", r)
	wantOneError(t, "plan against a stopped API server", r, "cannot reach the API server at https://127.0.0.1:", "connection refused")

	// A server again, on the same etcd. The lock of the dead run is held
	// until its lease expires (30s): the re-run waits, then takes it over.
	if err := e2.Stop(); err != nil {
		t.Logf("stop the killed environment: %v", err)
	}
	e3, err := testenv.Start(ctx, testenv.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e3.Stop() })
	r = apply(e3.Kubeconfig, "--timeout", "2m")
	want = fmt.Sprintf("Apply: %d applied, %d unchanged, 0 pruned, 0 failed, 0 not attempted", objects-killAt+1, killAt-1)
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("re-run: exit %d, want 0 and %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "lock default/snapply-faults taken in ") {
		t.Errorf("re-run did not take the lock over:\n%s", r.stderr)
	}
	r = apply(e3.Kubeconfig, "-q")
	want = fmt.Sprintf("Apply: 0 applied, %d unchanged", objects)
	if r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Errorf("second re-run: exit %d, want 0 and %q\n%s%s", r.code, want, r.stdout, r.stderr)
	}
}

// TestFaultAdmission puts a validating webhook in front of the ConfigMaps
// of a set of three: it denies one, or is too slow for one, at plan time or
// only when the object is written. The others are applied, the one is
// reported with the webhook's words, the exit code is 1, the store keeps the
// before snapshot and the records, and once the cause is gone a re-run
// converges.
func TestFaultAdmission(t *testing.T) {
	const denyMsg = "deny-me is refused by policy (test webhook)"
	cases := []struct {
		name string
		// decide is the webhook's answer for a write (dry run or not) of
		// the ConfigMap named name: a denial, or a sleep beyond its
		// timeout of one second.
		decide func(name string, dryRun bool) (deny string, slow bool)
		// removeToFix: the fix is to drop the object from the set, else
		// the webhook is fixed.
		removeToFix bool
		fatal       []string // plan and apply refuse as a whole
		planEntry   string   // or: the plan's line of the refused object ("" when it plans clean)
		applied     string   // the summary line of the apply
		applyEntry  string   // the apply's line of the object
		message     []string // what the reports say about it
		rerun       string   // the summary of the re-run once fixed
	}{
		{
			name: "webhook denies one object",
			decide: func(name string, _ bool) (string, bool) {
				if name == "deny-me" {
					return denyMsg, false
				}
				return "", false
			},
			removeToFix: true,
			planEntry:   "! configmap/deny-me -n NS (invalid)",
			applied:     "Apply: 2 applied, 0 unchanged, 0 pruned, 0 failed, 1 not attempted",
			applyEntry:  "! configmap/deny-me -n NS (not attempted)",
			message:     []string{`admission webhook "configmaps.NS.snapply.test" denied the request: ` + denyMsg},
			rerun:       "Apply: 0 applied, 2 unchanged, 0 pruned, 0 failed",
		},
		{
			name: "webhook denies one object when it is written",
			decide: func(name string, dryRun bool) (string, bool) {
				if name == "deny-me" && !dryRun {
					return denyMsg, false
				}
				return "", false
			},
			applied:    "Apply: 2 applied, 0 unchanged, 0 pruned, 1 failed, 0 not attempted",
			applyEntry: "! configmap/deny-me -n NS (failed)",
			message:    []string{`admission webhook "configmaps.NS.snapply.test" denied the request: ` + denyMsg},
			rerun:      "Apply: 1 applied, 2 unchanged, 0 pruned, 0 failed",
		},
		{
			name: "webhook times out when the object is written",
			decide: func(name string, dryRun bool) (string, bool) {
				return "", name == "deny-me" && !dryRun
			},
			applied:    "Apply: 2 applied, 0 unchanged, 0 pruned, 1 failed, 0 not attempted",
			applyEntry: "! configmap/deny-me -n NS (failed)",
			message:    []string{`failed calling webhook "configmaps.NS.snapply.test"`, "deadline exceeded"},
			rerun:      "Apply: 1 applied, 2 unchanged, 0 pruned, 0 failed",
		},
		{
			name: "webhook times out at plan time",
			decide: func(name string, _ bool) (string, bool) {
				return "", name == "deny-me"
			},
			fatal: []string{"plan: configmap/deny-me -n NS (1-deny-me.yaml:1): ", `failed calling webhook "configmaps.NS.snapply.test"`, "deadline exceeded"},
			rerun: "Apply: 3 applied, 0 unchanged, 0 pruned, 0 failed",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t)
			subst := func(s string) string { return strings.ReplaceAll(s, "NS", ns) }
			var fixed atomic.Bool
			startWebhook(t, clientset(t), ns, 1, func(req *admissionv1.AdmissionRequest) string {
				if fixed.Load() {
					return ""
				}
				deny, slow := tc.decide(req.Name, ptr.Deref(req.DryRun, false))
				if slow {
					time.Sleep(2 * time.Second)
				}
				return deny
			})
			files := map[string]string{}
			for i, name := range []string{"a", "deny-me", "b"} {
				files[fmt.Sprintf("%d-%s.yaml", i, name)] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s, namespace: NS}\ndata: {k: v}\n", name)
			}
			src := manifests(t, ns, files)
			db := filepath.Join(t.TempDir(), "s.db")
			run := func(cmd string) result {
				args := []string{cmd, src, "--store", db, "-q", "--color=never", "--name", ns, "--inventory-namespace", ns}
				if cmd == "apply" {
					args = append(args, "--wait=false")
				}
				r := snapply(t, args...)
				noStackTrace(t, cmd, r)
				return r
			}
			var message []string
			for _, m := range tc.message {
				message = append(message, subst(m))
			}

			plan, applied := run("plan"), run("apply")
			switch {
			case tc.fatal != nil:
				var want []string
				for _, f := range tc.fatal {
					want = append(want, subst(f))
				}
				wantOneError(t, "plan", plan, want...)
				wantOneError(t, "apply", applied, want...)
				if got := liveMembers(t, ns); len(got) != 0 {
					t.Errorf("a refused apply wrote %v", got)
				}
			default:
				if tc.planEntry != "" {
					wantExit(t, "plan", plan, 1, "error: plan has 0 conflicts and 1 invalid objects\n")
					wantEntry(t, "plan", plan.stdout, subst(tc.planEntry), "1-deny-me.yaml:1", message)
				} else {
					wantExit(t, "plan", plan, 0, "")
				}
				if applied.code != 1 || !strings.Contains(applied.stdout, tc.applied) {
					t.Errorf("apply: exit %d, want 1 and %q\n%s%s", applied.code, tc.applied, applied.stdout, applied.stderr)
				}
				wantEntry(t, "apply", applied.stdout, subst(tc.applyEntry), "1-deny-me.yaml:1", message)
				if diff := slices.Compare(liveMembers(t, ns), []string{"a", "b"}); diff != 0 {
					t.Errorf("live after apply: %v, want a and b", liveMembers(t, ns))
				}
				// The store has the before snapshot and the webhook's words.
				rec := recordedRun(t, db).Records
				i := slices.IndexFunc(rec, func(r store.Record) bool { return r.Ref.Name == "deny-me" })
				if i < 0 || !strings.Contains(rec[i].Error, message[0]) {
					t.Errorf("recorded records %+v lack deny-me with %q", rec, message[0])
				}
			}

			if tc.removeToFix {
				if err := os.Remove(filepath.Join(src, "1-deny-me.yaml")); err != nil {
					t.Fatal(err)
				}
			} else {
				fixed.Store(true)
			}
			if r := run("apply"); r.code != 0 || !strings.Contains(r.stdout, tc.rerun) {
				t.Errorf("re-run once fixed: exit %d, want 0 and %q\n%s%s", r.code, tc.rerun, r.stdout, r.stderr)
			}
			if r := run("plan"); r.code != 0 || !strings.Contains(r.stdout, "No changes.") {
				t.Errorf("plan after the re-run: exit %d, want no changes\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestFaultRequestTimeout gives every request 1ms: the run stops at the
// first one with one line that says the time ran out.
func TestFaultRequestTimeout(t *testing.T) {
	ns := env.Namespace(t)
	src := manifests(t, ns, map[string]string{"cm.yaml": configMaps})
	for _, cmd := range []string{"plan", "apply"} {
		r := snapply(t, cmd, src, "--store", filepath.Join(t.TempDir(), "s.db"), "-q", "--name", ns, "--inventory-namespace", ns, "--request-timeout", "1ms")
		noStackTrace(t, cmd, r)
		wantOneError(t, cmd, r)
		// Which request runs out first varies, and so does who notices:
		// the client (the server reset the HTTP/2 stream once its own copy
		// of the timeout ran out, or client-go's deadline passed before it
		// sent anything), or the server answering 504.
		if !strings.Contains(r.stderr, "request timed out after 1ms (--request-timeout)") && !strings.Contains(r.stderr, "context deadline exceeded") && !strings.Contains(r.stderr, "in the time allotted") {
			t.Errorf("%s: the error does not say that the time ran out: %s", cmd, r.stderr)
		}
	}
	if got := liveMembers(t, ns); len(got) != 0 {
		t.Errorf("an apply that timed out wrote %v", got)
	}
}

// TestFaultStore runs plan and apply with a store file that cannot be used:
// one line naming the file and what is wrong, exit 1, nothing applied.
func TestFaultStore(t *testing.T) {
	cases := []struct {
		name string
		// setup returns the store path; it may make a valid store at good
		// first.
		setup func(t *testing.T, good string) string
		want  []string
	}{
		{
			name: "unwritable",
			setup: func(t *testing.T, _ string) string {
				dir := t.TempDir()
				if os.Geteuid() == 0 {
					// root writes anywhere: a path under a regular file
					// cannot be created either.
					file := filepath.Join(dir, "file.txt")
					if err := os.WriteFile(file, nil, 0o644); err != nil {
						t.Fatal(err)
					}
					return filepath.Join(file, "s.db")
				}
				if err := os.Chmod(dir, 0o500); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
				return filepath.Join(dir, "s.db")
			},
			want: []string{"s.db: "},
		},
		{
			name:  "a directory",
			setup: func(t *testing.T, _ string) string { return t.TempDir() },
			want:  []string{": is a directory"},
		},
		{
			name: "truncated",
			setup: func(t *testing.T, good string) string {
				fi, err := os.Stat(good)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.Truncate(good, fi.Size()/2); err != nil {
					t.Fatal(err)
				}
				return good
			},
			want: []string{"s.db: not a valid snapply store: "},
		},
		{
			name: "not a store",
			setup: func(t *testing.T, _ string) string {
				path := filepath.Join(t.TempDir(), "s.db")
				if err := os.WriteFile(path, []byte(strings.Repeat("not a store\n", 2000)), 0o644); err != nil {
					t.Fatal(err)
				}
				return path
			},
			want: []string{"s.db: not a valid snapply store: "},
		},
		{
			name: "newer schema",
			setup: func(t *testing.T, good string) string {
				// The schema version is "schema" in the "meta" bucket (see
				// the layout in internal/store's documentation).
				b, err := bolt.Open(good, 0o600, &bolt.Options{Timeout: 5 * time.Second})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				if err := b.Update(func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("99"))
				}); err != nil {
					t.Fatal(err)
				}
				return good
			},
			want: []string{"s.db: schema version 99 is newer than this snapply understands", "; upgrade snapply"},
		},
		{
			name: "locked by another process",
			setup: func(t *testing.T, good string) string {
				// Held open for writing, as a running snapply holds it;
				// plan and apply wait 5s for it.
				db, err := store.Open(good, store.DefaultOptions())
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return good
			},
			want: []string{"s.db: locked by another process"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t)
			src := manifests(t, ns, map[string]string{"cm.yaml": configMaps})
			good := filepath.Join(t.TempDir(), "s.db")
			if r := snapply(t, "plan", src, "--store", good, "-q", "--name", ns, "--inventory-namespace", ns); r.code != 0 {
				t.Fatalf("plan into a new store: exit %d\n%s", r.code, r.stderr)
			}
			path := tc.setup(t, good)
			for _, cmd := range []string{"plan", "apply"} {
				r := snapply(t, cmd, src, "--store", path, "-q", "--name", ns, "--inventory-namespace", ns)
				noStackTrace(t, cmd, r)
				wantOneError(t, cmd, r, append([]string{"error: store: " + path}, tc.want...)...)
			}
			nothingWritten(t, ns)
			if got := liveMembers(t, ns); len(got) != 0 {
				t.Errorf("apply with an unusable store wrote %v", got)
			}
		})
	}
}

// recordedRun opens the store at path, checks that it holds exactly one
// run and the run's snapshots, and returns the run.
func recordedRun(t *testing.T, path string) store.Run {
	t.Helper()
	db, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs()
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("store holds %d runs, want 1", len(runs))
	}
	run := runs[0]
	for kind, id := range map[store.Kind]string{store.Before: run.Before, store.Desired: run.Desired, store.After: run.After} {
		if id == "" && kind == store.After {
			continue
		}
		if s, err := db.Snapshot(id); err != nil || s.Meta.Kind != kind {
			t.Errorf("the run's %s snapshot %q: %v", kind, id, err)
		}
	}
	return run
}

// probeName is the name of the ConfigMap every test webhook denies, so that
// a test can tell when the API server calls it.
const probeName = "webhook-probe"

// webhookFunc decides one admission request: a message denies it, ""
// allows it.
type webhookFunc func(req *admissionv1.AdmissionRequest) (deny string)

// startWebhook serves a validating admission webhook over TLS, registers it
// for the ConfigMaps of ns on the API server of cs (failurePolicy Fail,
// timeout in seconds), and returns once the API server calls it. Both go
// away when the test ends.
func startWebhook(t *testing.T, cs kubernetes.Interface, ns string, timeout int32, decide webhookFunc) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		deny := "probe"
		if review.Request.Name != probeName {
			deny = decide(review.Request)
		}
		if deny != "" {
			resp.Allowed, resp.Result = false, &metav1.Status{Message: deny}
		}
		review.Request, review.Response = nil, resp
		_ = json.NewEncoder(w).Encode(&review)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshakes of a killed API server
	srv.StartTLS()
	t.Cleanup(srv.Close)

	caBundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	fail, none := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ns + ".snapply.test"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "configmaps." + ns + ".snapply.test",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(srv.URL + "/validate"), CABundle: caBundle},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{corev1.LabelMetadataName: ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To(timeout),
		}},
	}
	ctx := context.Background()
	webhooks := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	if _, err := webhooks.Create(ctx, cfg, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = webhooks.Delete(context.Background(), cfg.Name, metav1.DeleteOptions{}) })

	// The API server picks the configuration up within a second or so.
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: probeName}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil && strings.Contains(err.Error(), "probe") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the API server does not call the webhook: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// apiServerPID returns the process ID of the kube-apiserver of e.
func apiServerPID(t *testing.T, e *testenv.Env) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc to find the API server in: %v", err)
	}
	for _, d := range entries {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if filepath.Base(args[0]) == "kube-apiserver" && strings.Contains(string(cmdline), e.Dir) {
			return pid
		}
	}
	t.Fatalf("no kube-apiserver process for %s", e.Dir)
	return 0
}
