package apply

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math"
	"os"
	"os/user"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/snapply/snapply/internal/kube"
)

// LockTokenAnnotation on a held Lease holds a random token that is new for
// every Acquire: two holders that show the same identity (two runs on one
// laptop, two goroutines) still never mistake each other's lease for their
// own.
const LockTokenAnnotation = AnnotationPrefix + "lock-token"

// releaseTimeout bounds Release, which runs on its own context so that it
// works after the caller's context is cancelled.
const releaseTimeout = 15 * time.Second

// LockOptions tunes Acquire.
type LockOptions struct {
	// Holder is the identity shown to others waiting for the lock: the run
	// URL in GitHub Actions, else "user@host pid N". Empty means that
	// default.
	Holder string
	// Duration is the lease duration (whole seconds, at least one): a
	// holder that has not renewed it for that long is taken to be dead.
	// While held, the lease is renewed every Duration/3. Zero means 30s.
	Duration time.Duration
	// Wait is how long Acquire waits for another holder's lease before it
	// fails; zero means it fails at once.
	Wait time.Duration
	// Poll is how often Acquire looks at a lease held by another. Zero means
	// 2s.
	Poll time.Duration
	// OnWait, when set, is called once when Acquire finds the lease held by
	// another and starts to wait, with the holder's identity.
	OnWait func(holder string)
}

// DefaultLockOptions returns the options snapply locks with: this run's
// identity, a 30s lease, waiting up to 5 minutes, looking every 2s.
func DefaultLockOptions() LockOptions {
	return LockOptions{
		Holder:   defaultHolder(os.Getenv),
		Duration: 30 * time.Second,
		Wait:     5 * time.Minute,
		Poll:     2 * time.Second,
	}
}

// withDefaults fills in the zero fields that DefaultLockOptions sets.
func (o LockOptions) withDefaults() LockOptions {
	d := DefaultLockOptions()
	if o.Holder == "" {
		o.Holder = d.Holder
	}
	if o.Duration <= 0 {
		o.Duration = d.Duration
	}
	if o.Poll <= 0 {
		o.Poll = d.Poll
	}
	o.Wait = max(o.Wait, 0)
	return o
}

// DefaultHolder is this run's identity for others waiting on the lock: the
// run URL in GitHub Actions, else "user@host pid N".
func DefaultHolder(getenv func(string) string) string { return defaultHolder(getenv) }

// defaultHolder is the run URL in GitHub Actions, else "user@host pid N".
func defaultHolder(getenv func(string) string) string {
	if getenv("GITHUB_ACTIONS") == "true" && getenv("GITHUB_REPOSITORY") != "" && getenv("GITHUB_RUN_ID") != "" {
		server := getenv("GITHUB_SERVER_URL")
		if server == "" {
			server = "https://github.com"
		}
		return fmt.Sprintf("%s/%s/actions/runs/%s", server, getenv("GITHUB_REPOSITORY"), getenv("GITHUB_RUN_ID"))
	}
	name := getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown"
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%s@%s pid %d", name, host, os.Getpid())
}

// LockHeldError says that another holder kept the lock for longer than
// Acquire was allowed to wait.
type LockHeldError struct {
	// Namespace and Name are the Lease's.
	Namespace, Name string
	// Holder is the identity of the holder, as it showed it.
	Holder string
	// Since is when the holder took the lock; zero when the lease does not
	// say.
	Since time.Time
	// Waited is how long Acquire was allowed to wait.
	Waited time.Duration
}

// Error implements error.
func (e *LockHeldError) Error() string {
	since := ""
	if !e.Since.IsZero() {
		since = " since " + e.Since.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("lock %s/%s: held by %s%s; waited %s", e.Namespace, e.Name, e.Holder, since, e.Waited)
}

// LeaseName is the name of the Lease that serialises the applies of the
// inventory name.
func LeaseName(name string) string {
	return "snapply-" + name
}

// Lock is a held Lease. Release it when done.
type Lock struct {
	leases    coordinationclient.LeaseInterface
	server    string
	namespace string
	name      string
	holder    string
	token     string
	duration  time.Duration

	mu    sync.Mutex
	lease *coordinationv1.Lease // as last written by us

	lost     chan struct{}
	lostOnce sync.Once
	stop     context.CancelFunc
	stopped  chan struct{}
	stopOnce sync.Once
}

// Acquire takes the Lease LeaseName(name) in namespace, creating it when
// missing. While another holder's lease is unexpired it looks again every
// opts.Poll, for up to opts.Wait, and then fails with a *LockHeldError. A
// lease is expired, its holder dead, when its renewTime plus its
// leaseDurationSeconds is in the past, or when it has not changed for its
// lease duration by this process's clock (which guards against a holder
// whose clock runs ahead). Every write carries the resourceVersion that was
// read, so of two acquirers that race, only one wins.
//
// While the lock is held a goroutine renews it every opts.Duration/3, until
// Release or until ctx is done. When the lease is taken by another, deleted,
// or cannot be renewed for opts.Duration, Lost's channel is closed.
func Acquire(ctx context.Context, c *kube.Client, name, namespace string, opts LockOptions) (*Lock, error) {
	opts = opts.withDefaults()
	cs, err := coordinationclient.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("lock %s/%s: %w", namespace, LeaseName(name), err)
	}
	l := &Lock{
		leases:    cs.Leases(namespace),
		server:    c.Config.Host,
		namespace: namespace,
		name:      LeaseName(name),
		holder:    opts.Holder,
		token:     rand.Text(),
		duration:  time.Duration(leaseSeconds(opts.Duration)) * time.Second,
		lost:      make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	lease, err := l.acquire(ctx, opts)
	if err != nil {
		return nil, err
	}
	l.lease = lease
	rctx, stop := context.WithCancel(ctx)
	l.stop = stop
	go l.renewLoop(rctx)
	return l, nil
}

// acquire loops until it has written the lease as ours, the wait is over,
// or ctx is done.
func (l *Lock) acquire(ctx context.Context, opts LockOptions) (*coordinationv1.Lease, error) {
	start := time.Now()
	deadline := start.Add(opts.Wait)
	var seenVersion string
	var seenAt time.Time
	waiting := false
	for {
		cur, err := l.leases.Get(ctx, l.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			created, err := l.leases.Create(ctx, l.take(&coordinationv1.Lease{
				ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.namespace},
			}), metav1.CreateOptions{FieldManager: kube.FieldManager})
			if err == nil {
				return created, nil
			}
			if apierrors.IsAlreadyExists(err) {
				continue // another acquirer created it first: look again
			}
			return nil, fmt.Errorf("lock %s/%s: create: %w", l.namespace, l.name, kube.Unreachable(l.server, err))
		}
		if err != nil {
			return nil, fmt.Errorf("lock %s/%s: %w", l.namespace, l.name, kube.Unreachable(l.server, err))
		}

		now := time.Now()
		if cur.ResourceVersion != seenVersion {
			seenVersion, seenAt = cur.ResourceVersion, now
		}
		if free(cur, now, now.Sub(seenAt)) {
			updated, err := l.leases.Update(ctx, l.take(cur.DeepCopy()), metav1.UpdateOptions{FieldManager: kube.FieldManager})
			if err == nil {
				return updated, nil
			}
			if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
				continue // changed since we read it: look again
			}
			return nil, fmt.Errorf("lock %s/%s: take: %w", l.namespace, l.name, kube.Unreachable(l.server, err))
		}

		if !now.Before(deadline) {
			e := &LockHeldError{Namespace: l.namespace, Name: l.name, Waited: opts.Wait}
			if cur.Spec.HolderIdentity != nil {
				e.Holder = *cur.Spec.HolderIdentity
			}
			if cur.Spec.AcquireTime != nil {
				e.Since = cur.Spec.AcquireTime.Time
			}
			return nil, e
		}
		if !waiting && opts.OnWait != nil {
			waiting = true
			holder := ""
			if cur.Spec.HolderIdentity != nil {
				holder = *cur.Spec.HolderIdentity
			}
			opts.OnWait(holder)
		}
		t := time.NewTimer(min(opts.Poll, deadline.Sub(now)))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("lock %s/%s: %w", l.namespace, l.name, ctx.Err())
		case <-t.C:
		}
	}
}

// take makes lease ours: holder, token, fresh acquire and renew times.
func (l *Lock) take(lease *coordinationv1.Lease) *coordinationv1.Lease {
	now := metav1.NowMicro()
	if h := lease.Spec.HolderIdentity; h != nil && *h != "" {
		lease.Spec.LeaseTransitions = ptr.To(ptr.Deref(lease.Spec.LeaseTransitions, 0) + 1)
	}
	lease.Spec.HolderIdentity = ptr.To(l.holder)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(l.duration / time.Second))
	lease.Spec.AcquireTime = &now
	lease.Spec.RenewTime = &now
	if lease.Annotations == nil {
		lease.Annotations = map[string]string{}
	}
	lease.Annotations[LockTokenAnnotation] = l.token
	return lease
}

// free reports whether a lease may be taken: nobody holds it, or its holder
// has stopped renewing it. unchanged is how long this process has seen the
// lease without a change.
func free(lease *coordinationv1.Lease, now time.Time, unchanged time.Duration) bool {
	if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		return true
	}
	d := time.Duration(ptr.Deref(lease.Spec.LeaseDurationSeconds, 0)) * time.Second
	if d <= 0 {
		d = DefaultLockOptions().Duration
	}
	if unchanged > d {
		return true
	}
	last := lease.Spec.RenewTime
	if last == nil {
		last = lease.Spec.AcquireTime
	}
	return last != nil && last.Add(d).Before(now)
}

// ours reports whether lease is held by this Lock.
func (l *Lock) ours(lease *coordinationv1.Lease) bool {
	h := lease.Spec.HolderIdentity
	return h != nil && *h == l.holder && lease.Annotations[LockTokenAnnotation] == l.token
}

// errNotHolder says that the lease is no longer ours.
var errNotHolder = errors.New("lease taken by another holder or deleted")

// renewLoop renews the lease every duration/3 until ctx is done, and
// declares the lock lost when the lease is no longer ours or has not been
// renewed for a whole duration.
func (l *Lock) renewLoop(ctx context.Context) {
	defer close(l.stopped)
	period := l.duration / 3
	t := time.NewTicker(period)
	defer t.Stop()
	lastOK := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, period)
		err := l.renew(rctx)
		cancel()
		switch {
		case err == nil:
			lastOK = time.Now()
		case ctx.Err() != nil:
			return
		case errors.Is(err, errNotHolder) || time.Since(lastOK) >= l.duration:
			l.lostOnce.Do(func() { close(l.lost) })
			return
		}
	}
}

// renew writes a fresh renewTime, re-reading the lease once when it changed
// under us (it is then still ours only if our token is on it).
func (l *Lock) renew(ctx context.Context) error {
	l.mu.Lock()
	cur := l.lease.DeepCopy()
	l.mu.Unlock()
	for range 2 {
		now := metav1.NowMicro()
		cur.Spec.RenewTime = &now
		updated, err := l.leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: kube.FieldManager})
		if err == nil {
			l.mu.Lock()
			l.lease = updated
			l.mu.Unlock()
			return nil
		}
		if apierrors.IsNotFound(err) {
			return errNotHolder
		}
		if !apierrors.IsConflict(err) {
			return err
		}
		cur, err = l.leases.Get(ctx, l.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return errNotHolder
		}
		if err != nil {
			return err
		}
		if !l.ours(cur) {
			return errNotHolder
		}
	}
	return errors.New("lease keeps changing")
}

// Lost returns a channel that is closed when the lock is lost while held:
// another holder took the lease, it was deleted, or it could not be renewed
// for a whole lease duration. The caller should stop changing the cluster.
func (l *Lock) Lost() <-chan struct{} {
	return l.lost
}

// Holder is the identity this lock shows to others.
func (l *Lock) Holder() string {
	return l.holder
}

// Release stops renewing the lease and, if it is still ours, releases it
// (clears its holder) so that a waiting apply takes it at once. It runs on
// its own short context, so it works after the caller's context is
// cancelled. Releasing a lock that is no longer ours, or twice, does
// nothing.
func (l *Lock) Release() error {
	l.stopOnce.Do(l.stop)
	<-l.stopped
	ctx, cancel := context.WithTimeout(context.Background(), releaseTimeout)
	defer cancel()
	for {
		cur, err := l.leases.Get(ctx, l.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock %s/%s: release: %w", l.namespace, l.name, kube.Unreachable(l.server, err))
		}
		if !l.ours(cur) {
			return nil
		}
		cur.Spec.HolderIdentity = nil
		cur.Spec.RenewTime = ptr.To(metav1.NowMicro())
		delete(cur.Annotations, LockTokenAnnotation)
		_, err = l.leases.Update(ctx, cur, metav1.UpdateOptions{FieldManager: kube.FieldManager})
		if apierrors.IsConflict(err) {
			continue // changed since we read it: look again
		}
		if err != nil {
			return fmt.Errorf("lock %s/%s: release: %w", l.namespace, l.name, kube.Unreachable(l.server, err))
		}
		return nil
	}
}

// leaseSeconds rounds d up to whole seconds, at least one.
func leaseSeconds(d time.Duration) int32 {
	s := math.Ceil(d.Seconds())
	return int32(min(max(s, 1), math.MaxInt32))
}
