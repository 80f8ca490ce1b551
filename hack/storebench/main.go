// Command storebench measures how the store grows: "a store holding 100
// snapshots of the 1,000-object benchmark app, with 1% of objects changed
// between snapshots, is under 3x the size of a store holding one snapshot".
//
//	go run ./hack/storebench [--fixture DIR] [--snapshots 100] [--changed 10] [--limit 3] [--keep DIR]
//
// It takes the benchmark fixture (hack/genfixture's base variant: 1,010
// objects in 10 namespaces; generated with `go run ./hack/genfixture` into
// a temporary directory unless --fixture names one), renders it, and turns
// every object into what the API server returns once snapply applied it:
// uid, resourceVersion, creationTimestamp, server defaults, managedFields
// (snapply's apply, and the controller's writes of a Deployment), status.
// It writes store A with one snapshot of it and store B with --snapshots
// snapshots, each opened and closed like one CI run, with --changed
// objects (1% by default) changed before each but the first: a ConfigMap
// value, a Deployment's image tag (with the controller's new status and
// revision), a Service's port. Then it prints, as its last line,
//
//	store: 1 snapshot 405504 B, 100 snapshots 1003520 B, ratio 2.47 (limit 3)
//
// Before it, a line gives the cost of encrypting the store (a store key,
// whole-file age encryption): the size of both stores encrypted, the time
// to encrypt and decrypt each, the time of one more CI run on store B
// plain and encrypted, and the time to stretch a passphrase key.
//
// and exits 1 when the ratio is not under the limit, 2 when it cannot run.
// The same flags always build the same objects.
package main

import (
	"context"
	"crypto/sha1"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/render"
	"github.com/snapply/snapply/internal/store"
)

// errOverLimit is returned by run when the ratio is not under the limit.
var errOverLimit = errors.New("over the limit")

func main() {
	err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errOverLimit):
		os.Exit(1)
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "storebench:", err)
		os.Exit(2)
	}
}

// options are the flags.
type options struct {
	fixture   string
	snapshots int
	changed   int
	limit     float64
	keep      string
	seed      uint64
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("storebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.fixture, "fixture", "", "directory holding hack/genfixture's base fixture; default: generate it with `go run ./hack/genfixture`")
	fs.IntVar(&o.snapshots, "snapshots", 100, "snapshots in store B")
	fs.IntVar(&o.changed, "changed", 0, "objects changed between snapshots; default: 1% of the objects, at least 1")
	fs.Float64Var(&o.limit, "limit", 3, "the ratio of the two sizes must be under this")
	fs.StringVar(&o.keep, "keep", "", "write the two stores into this directory and keep them")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the live metadata and of the changes")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if o.snapshots < 1 {
		return fmt.Errorf("snapshots: %d: want at least 1", o.snapshots)
	}

	work, err := os.MkdirTemp("", "storebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	dir := o.keep
	if dir == "" {
		dir = work
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	start := time.Now()
	fixture := o.fixture
	if fixture == "" {
		fixture = filepath.Join(work, "fixture")
		cmd := exec.CommandContext(ctx, "go", "run", "github.com/snapply/snapply/hack/genfixture", "--out", fixture)
		cmd.Stdout, cmd.Stderr = stderr, stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("go run ./hack/genfixture: %w", err)
		}
	}
	desired, err := render.Render(ctx, fixture, render.Options{Root: fixture})
	if err != nil {
		return err
	}
	c := newCluster(o.seed, time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC))
	for _, d := range desired {
		c.objs = append(c.objs, c.create(d.Obj))
	}
	if o.changed == 0 {
		o.changed = max(1, len(c.objs)/100)
	}
	candidates := members(c.objs)
	if o.changed > len(candidates) {
		return fmt.Errorf("changed: %d: the fixture has only %d objects to change", o.changed, len(candidates))
	}
	fmt.Fprintf(stderr, "storebench: %d live objects (%s of JSON) from %s in %s\n", len(c.objs), bytesText(jsonSize(c.objs)), fixture, since(start))

	start = time.Now()
	pathA := filepath.Join(dir, "one.db")
	if err := putRun(ctx, pathA, c, 0); err != nil {
		return err
	}
	pathB := filepath.Join(dir, "many.db")
	for i := range o.snapshots {
		if i > 0 {
			c.now = c.now.Add(time.Hour)
			for _, k := range c.rng.Perm(len(candidates))[:o.changed] {
				c.objs[candidates[k]] = c.change(c.objs[candidates[k]])
			}
		}
		if err := putRun(ctx, pathB, c, i); err != nil {
			return err
		}
	}
	if err := check(pathB, o.snapshots, len(c.objs)); err != nil {
		return err
	}
	sizeA, err := fileSize(pathA)
	if err != nil {
		return err
	}
	sizeB, err := fileSize(pathB)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "storebench: wrote 1 + %d snapshots, %d objects changed between snapshots, in %s\n", o.snapshots, o.changed, since(start))
	if o.keep != "" {
		fmt.Fprintf(stderr, "storebench: kept %s and %s\n", pathA, pathB)
	}

	enc, err := encryptionCost(ctx, dir, pathA, pathB, c, o.snapshots)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, enc)

	ratio := float64(sizeB) / float64(sizeA)
	fmt.Fprintf(stdout, "store: 1 snapshot %d B, %d snapshots %d B, ratio %.2f (limit %g)\n", sizeA, o.snapshots, sizeB, ratio, o.limit)
	if ratio >= o.limit {
		return errOverLimit
	}
	return nil
}

// putRun opens the store at path, writes one snapshot of the cluster, as
// the n-th CI run, and closes it (which cuts the file to the pages in use).
func putRun(ctx context.Context, path string, c *cluster, n int) error {
	return putRunWith(ctx, path, c, n, store.DefaultOptions())
}

// putRunWith is putRun with the store options opts.
func putRunWith(ctx context.Context, path string, c *cluster, n int, opts store.Options) error {
	db, err := store.Open(path, opts)
	if err != nil {
		return err
	}
	meta := store.Meta{
		Kind:    store.Before,
		Created: c.now,
		Cluster: store.Cluster{Server: "9b0f6c1e2d3a4b58", Context: "prod"}, // as kube.Client.ServerHash writes it: 16 hex characters
		Source: store.Source{
			Commit: fmt.Sprintf("%x", sha1.Sum([]byte(fmt.Sprint(n)))), Ref: "refs/heads/main",
			RunID: fmt.Sprint(12_000_000_000 + n), RunAttempt: "1", Workflow: "deploy", Actor: "octocat", Repository: "example/shop",
		},
		Scope: "namespaces",
	}
	_, err = db.PutSnapshot(ctx, meta, c.objs)
	return errors.Join(err, db.Close())
}

// check reads back the snapshots of store B: their number, and every
// object of the newest.
func check(path string, snapshots, objects int) error {
	db, err := store.Open(path, store.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	metas, err := db.Snapshots()
	if err != nil {
		return err
	}
	if len(metas) != snapshots {
		return fmt.Errorf("%s: %d snapshots, want %d", path, len(metas), snapshots)
	}
	s, err := db.Snapshot(store.Latest)
	if err != nil {
		return err
	}
	if len(s.Entries) != objects {
		return fmt.Errorf("%s: the newest snapshot holds %d objects, want %d", path, len(s.Entries), objects)
	}
	for _, e := range s.Entries {
		if _, err := db.Object(e.ID); err != nil {
			return err
		}
	}
	return nil
}

func fileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

func jsonSize(objs []*unstructured.Unstructured) int {
	n := 0
	for _, u := range objs {
		b, _ := u.MarshalJSON()
		n += len(b)
	}
	return n
}

func bytesText(n int) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}

func since(t time.Time) time.Duration { return time.Since(t).Round(time.Millisecond) }

// encryptionCost measures what a store key costs: the stores at pathA and
// pathB encrypted (size, time to encrypt and decrypt), one more run on a
// copy of store B plain and encrypted, and stretching a passphrase.
func encryptionCost(ctx context.Context, dir, pathA, pathB string, c *cluster, n int) (string, error) {
	key := make([]byte, store.SealKeySize)
	for i := range key {
		key[i] = byte(i)
	}
	line := "store encryption:"
	for _, p := range []struct{ name, path string }{{"1 snapshot", pathA}, {fmt.Sprintf("%d snapshots", n), pathB}} {
		enc, dec := p.path+".age", p.path+".plain"
		start := time.Now()
		if err := store.EncryptFile(p.path, enc, key); err != nil {
			return "", err
		}
		tEnc := time.Since(start)
		start = time.Now()
		if err := store.DecryptFile(enc, dec, key); err != nil {
			return "", err
		}
		tDec := time.Since(start)
		plain, err := fileSize(p.path)
		if err != nil {
			return "", err
		}
		sealed, err := fileSize(enc)
		if err != nil {
			return "", err
		}
		line += fmt.Sprintf(" %s %d B -> %d B (+%.2f%%), encrypt %s, decrypt %s;", p.name, plain, sealed, 100*float64(sealed-plain)/float64(plain), round(tEnc), round(tDec))
		os.Remove(dec)
	}
	// One more CI run (open, snapshot, close) on store B, plain and
	// encrypted: the encrypted run decrypts, writes and re-encrypts.
	plainRun, encRun := filepath.Join(dir, "run-plain.db"), filepath.Join(dir, "run-enc.db")
	if err := copyFile(pathB, plainRun); err != nil {
		return "", err
	}
	if err := store.EncryptFile(pathB, encRun, key); err != nil {
		return "", err
	}
	c.now = c.now.Add(time.Hour)
	var times [2]time.Duration
	for i, p := range []string{plainRun, encRun} {
		// Both seal Secret values: the difference is the file encryption.
		opts := store.DefaultOptions()
		opts.SealKey = key
		if i == 1 {
			opts.FileKey = key
		}
		start := time.Now()
		if err := putRunWith(ctx, p, c, n, opts); err != nil {
			return "", err
		}
		times[i] = time.Since(start)
	}
	line += fmt.Sprintf(" a run on the %d-snapshot store %s plain, %s encrypted;", n, round(times[0]), round(times[1]))
	start := time.Now()
	if _, err := store.KeyFromVar(func(string) string { return "a passphrase, not a key" }, "KEY"); err != nil {
		return "", err
	}
	return line + fmt.Sprintf(" stretching a passphrase %s", round(time.Since(start))), nil
}

func round(d time.Duration) time.Duration { return d.Round(time.Millisecond) }

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}
