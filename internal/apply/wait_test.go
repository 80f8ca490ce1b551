package apply_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/testenv"
)

// waitIgnoreElapsed leaves out the one field that depends on timing.
var waitIgnoreElapsed = cmpopts.IgnoreFields(apply.Readiness{}, "Elapsed")

func TestWaitConfigMapIsCurrentAtOnce(t *testing.T) {
	f := newWaitFixture(t, env)
	ref := f.configMap("settings")

	opts := apply.DefaultWaitOptions()
	opts.Timeout = 30 * time.Second
	opts.Interval = time.Hour // a second round would hit the timeout
	got, err := apply.Wait(t.Context(), f.client(nil), []object.Ref{ref}, opts)
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := []apply.Readiness{{Ref: ref, Status: apply.StatusCurrent, Message: "Resource is always ready"}}
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
}

func TestWaitDeploymentWithoutControllersTimesOut(t *testing.T) {
	f := newWaitFixture(t, env)
	_, dep := f.deployment("web", 2)
	cm := f.configMap("settings")

	opts := apply.DefaultWaitOptions()
	opts.Timeout = time.Second
	opts.Interval = 100 * time.Millisecond
	start := time.Now()
	got, err := apply.Wait(t.Context(), f.client(nil), []object.Ref{dep, cm}, opts)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Wait took %s with a timeout of 1s", took)
	}
	want := []apply.Readiness{
		{Ref: dep, Status: apply.StatusInProgress, Message: "Replicas: 0/2"},
		{Ref: cm, Status: apply.StatusCurrent, Message: "Resource is always ready"},
	}
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	if len(got) == 2 && got[0].Elapsed < time.Second {
		t.Errorf("pending deployment: Elapsed = %s, want the whole wait (>= 1s)", got[0].Elapsed)
	}
	wantErr := "timed out after 1s waiting for 1 of 2 objects: deployment.apps/web -n " + f.ns + " (InProgress: Replicas: 0/2)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("error = %v, want %q", err, wantErr)
	}
	var we *apply.WaitError
	if !errors.As(err, &we) || we.Timeout != time.Second || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %#v, want a *WaitError with Timeout 1s that is context.DeadlineExceeded", err)
	}
}

func TestWaitDeploymentBecomesCurrent(t *testing.T) {
	f := newWaitFixture(t, env)
	dep, ref := f.deployment("web", 2)

	done := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		done <- f.setStatus(t.Context(), dep, appsv1.DeploymentStatus{
			ObservedGeneration: dep.Generation,
			Replicas:           2, UpdatedReplicas: 2, ReadyReplicas: 2, AvailableReplicas: 2,
			Conditions: []appsv1.DeploymentCondition{
				{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"},
				{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable"},
			},
		})
	}()

	opts := apply.DefaultWaitOptions()
	opts.Timeout = 30 * time.Second
	opts.Interval = 200 * time.Millisecond
	got, err := apply.Wait(t.Context(), f.client(nil), []object.Ref{ref}, opts)
	if serr := <-done; serr != nil {
		t.Fatalf("set status: %v", serr)
	}
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := []apply.Readiness{{Ref: ref, Status: apply.StatusCurrent, Message: "Deployment is available. Replicas: 2"}}
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	if got[0].Elapsed < time.Second || got[0].Elapsed > 10*time.Second {
		t.Errorf("Elapsed = %s, want about 1s (the status was set after 1s)", got[0].Elapsed)
	}
}

func TestWaitDeploymentPastItsProgressDeadlineFails(t *testing.T) {
	f := newWaitFixture(t, env)
	cm := f.configMap("settings")
	dep, ref := f.deployment("web", 2)
	err := f.setStatus(t.Context(), dep, appsv1.DeploymentStatus{
		ObservedGeneration: dep.Generation,
		Replicas:           2, UpdatedReplicas: 2,
		Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse,
			Reason: "ProgressDeadlineExceeded", Message: `ReplicaSet "web-abc" has timed out progressing.`,
		}},
	})
	if err != nil {
		t.Fatalf("set status: %v", err)
	}

	opts := apply.DefaultWaitOptions()
	opts.Timeout = 30 * time.Second
	opts.Interval = 100 * time.Millisecond
	start := time.Now()
	got, err := apply.Wait(t.Context(), f.client(nil), []object.Ref{cm, ref}, opts)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Wait took %s: a Failed object must end the wait, not the timeout", took)
	}
	want := []apply.Readiness{
		{Ref: cm, Status: apply.StatusCurrent, Message: "Resource is always ready"},
		{Ref: ref, Status: apply.StatusFailed, Message: "Progress deadline exceeded"},
	}
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	wantErr := "1 of 2 objects failed: deployment.apps/web -n " + f.ns + " (Failed: Progress deadline exceeded)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("error = %v, want %q", err, wantErr)
	}
}

func TestWaitCancelReturnsPromptlyWithStatusesSoFar(t *testing.T) {
	f := newWaitFixture(t, env)
	cm := f.configMap("settings")
	_, dep := f.deployment("web", 1)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	opts := apply.DefaultWaitOptions()
	opts.Timeout = time.Minute
	opts.Interval = 100 * time.Millisecond
	time.AfterFunc(500*time.Millisecond, cancel)
	start := time.Now()
	got, err := apply.Wait(ctx, f.client(nil), []object.Ref{cm, dep}, opts)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Wait took %s, though ctx was cancelled after 0.5s", took)
	}
	want := []apply.Readiness{
		{Ref: cm, Status: apply.StatusCurrent, Message: "Resource is always ready"},
		{Ref: dep, Status: apply.StatusInProgress, Message: "Replicas: 0/1"},
	}
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if err != nil && !strings.Contains(err.Error(), "deployment.apps/web -n "+f.ns+" (InProgress: Replicas: 0/1)") {
		t.Errorf("error = %v, want it to name the pending deployment", err)
	}
}

func TestWaitCtxDeadlineDuringPauseKeepsLastStatus(t *testing.T) {
	f := newWaitFixture(t, env)
	_, dep := f.deployment("web", 1)

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	opts := apply.DefaultWaitOptions()
	opts.Timeout = time.Minute
	opts.Interval = time.Hour
	start := time.Now()
	got, err := apply.Wait(ctx, f.client(nil), []object.Ref{dep}, opts)
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("Wait took %s, though ctx's deadline was 0.3s", took)
	}
	want := []apply.Readiness{{Ref: dep, Status: apply.StatusInProgress, Message: "Replicas: 0/1"}}
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	var we *apply.WaitError
	if !errors.As(err, &we) || we.Timeout != 0 || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want a *WaitError caused by ctx's deadline, not by the wait's timeout", err)
	}
}

func TestWaitReportsProgress(t *testing.T) {
	f := newWaitFixture(t, env)
	cm := f.configMap("settings")
	_, dep := f.deployment("web", 2)

	type call struct {
		Ready, Total int
		Pending      []apply.Readiness
	}
	var calls []call
	opts := apply.DefaultWaitOptions()
	opts.Timeout = 800 * time.Millisecond
	opts.Interval = 100 * time.Millisecond
	opts.Progress = func(ready, total int, pending []apply.Readiness) {
		calls = append(calls, call{ready, total, pending})
	}
	_, _ = apply.Wait(t.Context(), f.client(nil), []object.Ref{cm, dep}, opts)

	if len(calls) < 2 {
		t.Fatalf("Progress called %d times in 0.8s with a 0.1s interval, want at least 2", len(calls))
	}
	want := call{Ready: 1, Total: 2, Pending: []apply.Readiness{{Ref: dep, Status: apply.StatusInProgress, Message: "Replicas: 0/2"}}}
	for i, c := range calls {
		if diff := cmp.Diff(want, c, waitIgnoreElapsed); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i, diff)
		}
	}
}

func TestWaitListsManyObjectsOfAKindAndGivesUpOnMissingOnes(t *testing.T) {
	f := newWaitFixture(t, env)
	var refs []object.Ref
	for _, name := range []string{"a", "b", "c", "d"} {
		refs = append(refs, f.configMap(name))
	}
	refs = append(refs, f.configMapRef("missing"))

	var mu sync.Mutex
	var requests []string
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return waitRoundTrip(func(req *http.Request) (*http.Response, error) {
			mu.Lock()
			requests = append(requests, req.Method+" "+req.URL.Path)
			mu.Unlock()
			return rt.RoundTrip(req)
		})
	})
	opts := apply.DefaultWaitOptions()
	opts.Timeout = 30 * time.Second
	opts.Interval = 100 * time.Millisecond
	opts.NotFoundGrace = 300 * time.Millisecond
	start := time.Now()
	got, err := apply.Wait(t.Context(), f.client(cfg), refs, opts)
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Wait took %s: a missing object must be given up on after the grace period", took)
	}

	var want []apply.Readiness
	for _, ref := range refs[:4] {
		want = append(want, apply.Readiness{Ref: ref, Status: apply.StatusCurrent, Message: "Resource is always ready"})
	}
	want = append(want, apply.Readiness{Ref: refs[4], Status: apply.StatusNotFound, Message: "not found"})
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
	if len(got) == 5 && got[4].Elapsed < opts.NotFoundGrace {
		t.Errorf("missing object given up on after %s, before the grace period of %s", got[4].Elapsed, opts.NotFoundGrace)
	}
	wantErr := "1 of 5 objects failed: configmap/missing -n " + f.ns + " (NotFound: not found)"
	if err == nil || err.Error() != wantErr {
		t.Errorf("error = %v, want %q", err, wantErr)
	}

	mu.Lock()
	defer mu.Unlock()
	base := "/api/v1/namespaces/" + f.ns + "/configmaps"
	lists := 0
	for _, r := range requests {
		switch r {
		case "GET " + base:
			lists++
		case "GET " + base + "/a", "GET " + base + "/b", "GET " + base + "/c", "GET " + base + "/d":
			t.Errorf("request %q: 5 pending ConfigMaps of one namespace must be read with one LIST", r)
		}
	}
	if lists != 1 {
		t.Errorf("%d LISTs of %s, want 1 (later rounds GET the one missing object); requests:\n%s", lists, base, strings.Join(requests, "\n"))
	}
}

func TestWaitUnknownKindIsUnknown(t *testing.T) {
	f := newWaitFixture(t, env)
	opts := apply.DefaultWaitOptions()
	opts.Timeout = 500 * time.Millisecond
	opts.Interval = 100 * time.Millisecond
	ref := object.Ref{Group: "example.com", Version: "v1", Kind: "Widget", Namespace: f.ns, Name: "w"}
	got, err := apply.Wait(t.Context(), f.client(nil), []object.Ref{ref}, opts)
	if len(got) != 1 || got[0].Status != apply.StatusUnknown || !strings.Contains(got[0].Message, `no matches for kind "Widget"`) {
		t.Errorf("readiness = %+v, want Unknown with the discovery error", got)
	}
	if err == nil || !strings.Contains(err.Error(), "timed out after 500ms waiting for 1 of 1 objects: widget.example.com/w -n "+f.ns+" (Unknown: ") {
		t.Errorf("error = %v, want a timeout naming widget.example.com/w", err)
	}
}

func TestWaitForNothingReturnsAtOnce(t *testing.T) {
	got, err := apply.Wait(t.Context(), nil, nil, apply.DefaultWaitOptions())
	if err != nil || len(got) != 0 {
		t.Errorf("Wait(no refs) = %v, %v; want nothing and no error", got, err)
	}
}

// TestWaitRollsOutWithControllers starts a second API server, with
// kube-controller-manager, kube-scheduler and kwok, and waits for a real
// rollout.
func TestWaitRollsOutWithControllers(t *testing.T) {
	ctx := t.Context()
	start := time.Now()
	e, err := testenv.Start(ctx, testenv.Options{Controllers: true})
	if err != nil {
		t.Fatalf("start with controllers: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	started := time.Since(start)
	f := newWaitFixture(t, e)
	cm := f.configMap("settings")
	_, dep := f.deployment("web", 2)

	opts := apply.DefaultWaitOptions()
	opts.Timeout = 2 * time.Minute
	start = time.Now()
	got, err := apply.Wait(ctx, f.client(nil), []object.Ref{cm, dep}, opts)
	t.Logf("controllers started in %s; Wait returned after %s", started.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	want := []apply.Readiness{
		{Ref: cm, Status: apply.StatusCurrent, Message: "Resource is always ready"},
		{Ref: dep, Status: apply.StatusCurrent, Message: "Deployment is available. Replicas: 2"},
	}
	if diff := cmp.Diff(want, got, waitIgnoreElapsed); diff != "" {
		t.Errorf("readiness (-want +got):\n%s", diff)
	}
}

func TestWaitErrorMessage(t *testing.T) {
	web := apply.Readiness{Ref: object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"}, Status: apply.StatusInProgress, Message: "Replicas: 1/2"}
	db := apply.Readiness{Ref: object.Ref{Group: "apps", Version: "v1", Kind: "StatefulSet", Namespace: "prod", Name: "db"}, Status: apply.StatusFailed, Message: "Progress deadline exceeded"}
	ns := apply.Readiness{Ref: object.Ref{Version: "v1", Kind: "Namespace", Name: "prod"}, Status: apply.StatusTerminating}
	many := make([]apply.Readiness, 12)
	for i := range many {
		many[i] = apply.Readiness{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: string(rune('a' + i))}, Status: apply.StatusUnknown, Message: "forbidden"}
	}
	tests := []struct {
		name string
		err  apply.WaitError
		want string
	}{{
		name: "timeout",
		err:  apply.WaitError{Total: 40, Timeout: 5 * time.Minute, Cause: context.DeadlineExceeded, NotReady: []apply.Readiness{web, ns}},
		want: "timed out after 5m0s waiting for 2 of 40 objects: deployment.apps/web -n prod (InProgress: Replicas: 1/2), namespace/prod (Terminating)",
	}, {
		name: "failed",
		err:  apply.WaitError{Total: 2, Failed: []apply.Readiness{db}},
		want: "1 of 2 objects failed: statefulset.apps/db -n prod (Failed: Progress deadline exceeded)",
	}, {
		name: "timeout and failed",
		err:  apply.WaitError{Total: 3, Timeout: time.Second, Cause: context.DeadlineExceeded, NotReady: []apply.Readiness{web}, Failed: []apply.Readiness{db}},
		want: "timed out after 1s waiting for 1 of 3 objects: deployment.apps/web -n prod (InProgress: Replicas: 1/2); 1 of 3 objects failed: statefulset.apps/db -n prod (Failed: Progress deadline exceeded)",
	}, {
		name: "cancelled",
		err:  apply.WaitError{Total: 1, Cause: context.Canceled, NotReady: []apply.Readiness{web}},
		want: "stopped waiting for 1 of 1 objects (context canceled): deployment.apps/web -n prod (InProgress: Replicas: 1/2)",
	}, {
		name: "many",
		err:  apply.WaitError{Total: 12, Timeout: time.Minute, NotReady: many},
		want: "timed out after 1m0s waiting for 12 of 12 objects: configmap/a -n prod (Unknown: forbidden), configmap/b -n prod (Unknown: forbidden), configmap/c -n prod (Unknown: forbidden), configmap/d -n prod (Unknown: forbidden), configmap/e -n prod (Unknown: forbidden), configmap/f -n prod (Unknown: forbidden), configmap/g -n prod (Unknown: forbidden), configmap/h -n prod (Unknown: forbidden), configmap/i -n prod (Unknown: forbidden), configmap/j -n prod (Unknown: forbidden), and 2 more",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, tt.err.Error()); diff != "" {
				t.Errorf("Error() (-want +got):\n%s", diff)
			}
		})
	}
}

// waitRoundTrip lets a test watch the requests of a client.
type waitRoundTrip func(*http.Request) (*http.Response, error)

func (f waitRoundTrip) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// waitFixture creates the objects of one wait test in its own namespace of
// an API server.
type waitFixture struct {
	t   *testing.T
	cfg *rest.Config
	cs  kubernetes.Interface
	ns  string
}

func newWaitFixture(t *testing.T, e *testenv.Env) *waitFixture {
	t.Helper()
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	return &waitFixture{t: t, cfg: e.Config, cs: cs, ns: e.Namespace(t)}
}

// client returns the client Wait is given, built from cfg, or from the
// fixture's API server config when cfg is nil.
func (f *waitFixture) client(cfg *rest.Config) *kube.Client {
	f.t.Helper()
	if cfg == nil {
		cfg = f.cfg
	}
	c, err := kube.NewForConfig(cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *waitFixture) configMapRef(name string) object.Ref {
	return object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: f.ns, Name: name}
}

func (f *waitFixture) deploymentRef(name string) object.Ref {
	return object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: f.ns, Name: name}
}

func (f *waitFixture) configMap(name string) object.Ref {
	f.t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns}, Data: map[string]string{"k": "v"}}
	if _, err := f.cs.CoreV1().ConfigMaps(f.ns).Create(f.t.Context(), cm, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("configmap/%s -n %s: create: %v", name, f.ns, err)
	}
	return f.configMapRef(name)
}

func (f *waitFixture) deployment(name string, replicas int32) (*appsv1.Deployment, object.Ref) {
	f.t.Helper()
	labels := map[string]string{"app": name}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "pause",
					Image: "registry.k8s.io/pause:3.10",
				}}},
			},
		},
	}
	out, err := f.cs.AppsV1().Deployments(f.ns).Create(f.t.Context(), dep, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("deployment.apps/%s -n %s: create: %v", name, f.ns, err)
	}
	return out, f.deploymentRef(name)
}

// setStatus writes the Deployment's status through the status subresource,
// as the deployment controller would. It may run in another goroutine.
func (f *waitFixture) setStatus(ctx context.Context, dep *appsv1.Deployment, st appsv1.DeploymentStatus) error {
	dep = dep.DeepCopy()
	dep.Status = st
	_, err := f.cs.AppsV1().Deployments(dep.Namespace).UpdateStatus(ctx, dep, metav1.UpdateOptions{})
	return err
}
