package apply_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/snapply/snapply/internal/apply"
)

// lockOpts are quick options for tests: a short lease, fast polling.
func lockOpts(holder string, wait time.Duration) apply.LockOptions {
	return apply.LockOptions{Holder: holder, Duration: 3 * time.Second, Wait: wait, Poll: 20 * time.Millisecond}
}

func getLease(t *testing.T, ns, name string) *coordinationv1.Lease {
	t.Helper()
	l, err := clientset(t).CoordinationV1().Leases(ns).Get(context.Background(), apply.LeaseName(name), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func holderOf(l *coordinationv1.Lease) string {
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

func mustAcquire(t *testing.T, ns, name string, opts apply.LockOptions) *apply.Lock {
	t.Helper()
	l, err := apply.Acquire(context.Background(), newClient(t), name, ns, opts)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", opts.Holder, err)
	}
	t.Cleanup(func() { _ = l.Release() })
	return l
}

func TestLockSecondWaitsForRelease(t *testing.T) {
	ns := env.Namespace(t)
	first := mustAcquire(t, ns, "prod", lockOpts("first", 0))
	if got := holderOf(getLease(t, ns, "prod")); got != "first" {
		t.Fatalf("lease holder = %q, want first", got)
	}

	type result struct {
		lock *apply.Lock
		err  error
	}
	done := make(chan result, 1)
	go func() {
		l, err := apply.Acquire(context.Background(), newClient(t), "prod", ns, lockOpts("second", time.Minute))
		done <- result{l, err}
	}()
	select {
	case r := <-done:
		t.Fatalf("second Acquire returned while the first holds the lock: %v, %v", r.lock, r.err)
	case <-time.After(500 * time.Millisecond):
	}

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("second Acquire after Release: %v", r.err)
		}
		defer r.lock.Release()
	case <-time.After(30 * time.Second):
		t.Fatal("second Acquire still waiting 30s after Release")
	}
	lease := getLease(t, ns, "prod")
	if got := holderOf(lease); got != "second" {
		t.Errorf("lease holder = %q, want second", got)
	}
	if got := ptr.Deref(lease.Spec.LeaseDurationSeconds, 0); got != 3 {
		t.Errorf("leaseDurationSeconds = %d, want 3", got)
	}
}

func TestLockHeldError(t *testing.T) {
	ns := env.Namespace(t)
	holder := "https://github.com/o/r/actions/runs/123"
	mustAcquire(t, ns, "prod", lockOpts(holder, 0))
	since := getLease(t, ns, "prod").Spec.AcquireTime.Time

	start := time.Now()
	_, err := apply.Acquire(context.Background(), newClient(t), "prod", ns, lockOpts("second", 400*time.Millisecond))
	waited := time.Since(start)
	var held *apply.LockHeldError
	if !errors.As(err, &held) {
		t.Fatalf("Acquire() = %v, want a LockHeldError", err)
	}
	want := &apply.LockHeldError{Namespace: ns, Name: "snapply-prod", Holder: holder, Since: since, Waited: 400 * time.Millisecond}
	if diff := cmp.Diff(want, held); diff != "" {
		t.Errorf("LockHeldError (-want +got):\n%s", diff)
	}
	wantMsg := fmt.Sprintf("lock %s/snapply-prod: held by %s since %s; waited 400ms", ns, holder, since.UTC().Format(time.RFC3339))
	if err.Error() != wantMsg {
		t.Errorf("error = %q, want %q", err, wantMsg)
	}
	if waited < 400*time.Millisecond {
		t.Errorf("Acquire() gave up after %s, before its Wait of 400ms", waited)
	}

	// Without a Wait it fails at once.
	start = time.Now()
	if _, err := apply.Acquire(context.Background(), newClient(t), "prod", ns, lockOpts("third", 0)); !errors.As(err, &held) {
		t.Fatalf("Acquire() with no Wait = %v, want a LockHeldError", err)
	}
	if waited := time.Since(start); waited > 5*time.Second {
		t.Errorf("Acquire() with no Wait took %s", waited)
	}
}

func TestLockTakesOverExpiredLease(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	long := metav1.NewMicroTime(time.Now().Add(-time.Hour))
	dead := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: apply.LeaseName("prod")},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("dead-runner"),
			LeaseDurationSeconds: ptr.To[int32](30),
			AcquireTime:          &long,
			RenewTime:            &long,
			LeaseTransitions:     ptr.To[int32](4),
		},
	}
	if _, err := clientset(t).CoordinationV1().Leases(ns).Create(ctx, dead, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, ns, "prod", lockOpts("alive", 0))
	lease := getLease(t, ns, "prod")
	if got := holderOf(lease); got != "alive" {
		t.Errorf("lease holder = %q, want alive", got)
	}
	if got := ptr.Deref(lease.Spec.LeaseTransitions, 0); got != 5 {
		t.Errorf("leaseTransitions = %d, want 5", got)
	}
}

func TestLockRenewsWhileHeld(t *testing.T) {
	ns := env.Namespace(t)
	opts := lockOpts("holder", 0)
	opts.Duration = 2 * time.Second
	l := mustAcquire(t, ns, "prod", opts)
	first := getLease(t, ns, "prod").Spec.RenewTime.Time

	time.Sleep(3 * time.Second) // longer than a lease duration
	if _, err := apply.Acquire(context.Background(), newClient(t), "prod", ns, lockOpts("other", 0)); err == nil {
		t.Fatal("another Acquire took a lease that its holder renews")
	}
	if renewed := getLease(t, ns, "prod").Spec.RenewTime.Time; !renewed.After(first.Add(time.Second)) {
		t.Errorf("renewTime %s, first %s: not renewed", renewed, first)
	}
	select {
	case <-l.Lost():
		t.Error("Lost() closed while the lock is renewed")
	default:
	}
}

func TestLockLost(t *testing.T) {
	ctx := context.Background()
	ns := env.Namespace(t)
	opts := lockOpts("holder", 0)
	opts.Duration = time.Second
	l := mustAcquire(t, ns, "prod", opts)

	// Someone else writes the lease as theirs.
	leases := clientset(t).CoordinationV1().Leases(ns)
	lease := getLease(t, ns, "prod")
	lease.Spec.HolderIdentity = ptr.To("usurper")
	delete(lease.Annotations, apply.LockTokenAnnotation)
	if _, err := leases.Update(ctx, lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("Lost() not closed 10s after another holder took the lease")
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if got := holderOf(getLease(t, ns, "prod")); got != "usurper" {
		t.Errorf("after Release of a lost lock, holder = %q, want usurper left alone", got)
	}
}

func TestLockContention(t *testing.T) {
	ns := env.Namespace(t)
	const n = 10
	var inside, most, done atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			opts := lockOpts(fmt.Sprintf("worker-%d", i), 2*time.Minute)
			l, err := apply.Acquire(context.Background(), newClient(t), "prod", ns, opts)
			if err != nil {
				errs <- err
				return
			}
			now := inside.Add(1)
			for {
				m := most.Load()
				if now <= m || most.CompareAndSwap(m, now) {
					break
				}
			}
			time.Sleep(30 * time.Millisecond)
			inside.Add(-1)
			done.Add(1)
			if err := l.Release(); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := most.Load(); got != 1 {
		t.Errorf("%d holders at once, want 1", got)
	}
	if got := done.Load(); got != n {
		t.Errorf("%d of %d workers held the lock", got, n)
	}
}

func TestLockReleaseAfterCancel(t *testing.T) {
	ns := env.Namespace(t)
	ctx, cancel := context.WithCancel(context.Background())
	l, err := apply.Acquire(ctx, newClient(t), "prod", ns, lockOpts("holder", 0))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := l.Release(); err != nil {
		t.Fatalf("Release() after cancel: %v", err)
	}
	lease := getLease(t, ns, "prod")
	if got := holderOf(lease); got != "" {
		t.Errorf("lease holder after Release = %q, want none", got)
	}
	if _, ok := lease.Annotations[apply.LockTokenAnnotation]; ok {
		t.Error("lease keeps the lock token after Release")
	}
	// Released means free at once, without waiting for expiry.
	next := mustAcquire(t, ns, "prod", lockOpts("next", 0))
	if err := l.Release(); err != nil {
		t.Fatalf("second Release() = %v", err)
	}
	if got := holderOf(getLease(t, ns, "prod")); got != next.Holder() {
		t.Errorf("a second Release of an old lock changed the holder to %q", got)
	}
}

func TestLockSameHolderTwice(t *testing.T) {
	ns := env.Namespace(t)
	mustAcquire(t, ns, "prod", lockOpts("me@laptop", 0))
	if _, err := apply.Acquire(context.Background(), newClient(t), "prod", ns, lockOpts("me@laptop", 0)); err == nil {
		t.Fatal("a second Acquire showing the same holder took a held lock")
	}
}

func TestDefaultLockOptionsHolder(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_SERVER_URL", "https://github.example.com")
	t.Setenv("GITHUB_REPOSITORY", "o/r")
	t.Setenv("GITHUB_RUN_ID", "123")
	if got, want := apply.DefaultLockOptions().Holder, "https://github.example.com/o/r/actions/runs/123"; got != want {
		t.Errorf("Holder in GitHub Actions = %q, want %q", got, want)
	}
	t.Setenv("GITHUB_ACTIONS", "")
	want := regexp.MustCompile(fmt.Sprintf(`^\S+@\S+ pid %d$`, os.Getpid()))
	if got := apply.DefaultLockOptions().Holder; !want.MatchString(got) {
		t.Errorf("Holder outside GitHub Actions = %q, want user@host pid N", got)
	}
}
