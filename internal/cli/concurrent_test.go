package cli_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/snapply/snapply/internal/store"
)

// TestConcurrentAppliesAreSerialised runs 10 `snapply apply` at once on the
// same inventory, each with its own store file and its own variant of the
// same ConfigMaps. The Lease must let them through one at a time: all
// succeed, no two applies overlap, exactly the first creates the objects,
// and the cluster ends in the state of the apply that finished last.
func TestConcurrentAppliesAreSerialised(t *testing.T) {
	const n = 10
	ns := env.Namespace(t)
	dirs, dbs := make([]string, n), make([]string, n)
	for i := range n {
		dirs[i] = manifests(t, ns, map[string]string{"cm.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: NS}
data: {v: "a-%d"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: NS}
data: {v: "b-%d"}
`, i, i)})
		dbs[i] = filepath.Join(t.TempDir(), fmt.Sprintf("%d.db", i))
	}

	results := make([]result, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			results[i] = applyIn(t, ns, dbs[i], dirs[i], "--timeout", "2m", "-q")
		})
	}
	wg.Wait()
	t.Logf("%d concurrent applies took %s", n, time.Since(start).Round(time.Millisecond))
	for i, r := range results {
		if r.code != 0 {
			t.Errorf("apply of variant %d: exit %d\n%s\n%s", i, r.code, r.stdout, r.stderr)
		}
	}
	if t.Failed() {
		return
	}

	// Each run is recorded in its store while it holds the lock, after it
	// applied: in the order of their Created times, every run applied after
	// the one before it was recorded.
	type span struct {
		variant        int
		first, created time.Time
		actions        []string
	}
	spans := make([]span, n)
	for i := range n {
		run := onlyRun(t, dbs[i])
		s := span{variant: i, created: run.Created}
		for _, rec := range run.Records {
			if rec.Outcome != "applied" {
				t.Errorf("variant %d: %s %s, want applied", i, rec.Ref, rec.Outcome)
			}
			if s.first.IsZero() || rec.Started.Before(s.first) {
				s.first = rec.Started
			}
			s.actions = append(s.actions, rec.Ref.Name+" "+rec.Action)
		}
		if len(run.Records) != 2 || s.first.IsZero() {
			t.Fatalf("variant %d: records %+v, want 2 with start times", i, run.Records)
		}
		slices.Sort(s.actions)
		spans[i] = s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.created.Compare(b.created) })
	for k, s := range spans {
		if k > 0 && !s.first.After(spans[k-1].created) {
			t.Errorf("variant %d started applying at %s, before variant %d (the run before it) was recorded at %s: the applies overlap",
				s.variant, s.first.Format(time.StampMicro), spans[k-1].variant, spans[k-1].created.Format(time.StampMicro))
		}
		// The first creates both objects; each later one sees the objects
		// its predecessor left and updates them.
		want := []string{"a update", "b update"}
		if k == 0 {
			want = []string{"a create", "b create"}
		}
		if !slices.Equal(s.actions, want) {
			t.Errorf("run %d (variant %d): actions %v, want %v", k, s.variant, s.actions, want)
		}
	}

	last := spans[n-1].variant
	cms, err := clientset(t).CoreV1().ConfigMaps(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, cm := range cms.Items {
		if v, ok := cm.Data["v"]; ok {
			got[cm.Name] = v
		}
	}
	want := map[string]string{"a": fmt.Sprintf("a-%d", last), "b": fmt.Sprintf("b-%d", last)}
	if !maps.Equal(got, want) {
		t.Errorf("live ConfigMaps %v, want %v: the state of variant %d, recorded last", got, want, last)
	}
}

// onlyRun returns the one run recorded in the store file at path.
func onlyRun(t *testing.T, path string) store.Run {
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
		t.Fatalf("%s: %d runs recorded, want 1", path, len(runs))
	}
	return runs[0]
}
