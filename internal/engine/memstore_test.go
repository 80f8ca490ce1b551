package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/store"
)

// memStore is a Store in memory: snapshots by ID, runs in the order they
// were put, and an error to return per method, for the tests of the engine
// logic that reads and writes the store without a cluster. Its object IDs
// are store.ObjectID's, as a store file's are.
type memStore struct {
	mu        sync.Mutex
	path      string
	redactor  *secret.Redactor
	snapshots map[string]*store.Snapshot
	runs      []store.Run
	closed    int
	// fail maps a method name (PutSnapshot, PutRun, RunWithAfter,
	// Snapshot, Close) to the error it returns.
	fail map[string]error
}

var _ Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{
		path:      "mem.db",
		redactor:  secret.NewRedactor([]byte("the store's own key")),
		snapshots: map[string]*store.Snapshot{},
		fail:      map[string]error{},
	}
}

func (m *memStore) RunWithAfter(after string) (*store.Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail["RunWithAfter"]; err != nil {
		return nil, err
	}
	for i := len(m.runs) - 1; i >= 0; i-- {
		if after != "" && m.runs[i].After == after {
			r := m.runs[i]
			return &r, nil
		}
	}
	return nil, nil
}

func (m *memStore) Snapshot(id string) (*store.Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail["Snapshot"]; err != nil {
		return nil, err
	}
	s, ok := m.snapshots[id]
	if !ok {
		return nil, fmt.Errorf("store: snapshot %s: not found", id)
	}
	return s, nil
}

func (m *memStore) Redactor() *secret.Redactor { return m.redactor }

func (m *memStore) Path() string { return m.path }

func (m *memStore) PutSnapshot(_ context.Context, meta store.Meta, objs []*unstructured.Unstructured) (store.Meta, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail["PutSnapshot"]; err != nil {
		return store.Meta{}, err
	}
	meta.ID = fmt.Sprintf("snap-%d", len(m.snapshots)+1)
	meta.Count = len(objs)
	s := &store.Snapshot{Meta: meta}
	for _, u := range objs {
		s.Entries = append(s.Entries, store.Entry{Ref: object.RefOf(u), ID: store.ObjectID(m.redactor, u)})
	}
	m.snapshots[meta.ID] = s
	return meta, nil
}

func (m *memStore) PutRun(_ context.Context, run store.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail["PutRun"]; err != nil {
		return err
	}
	m.runs = append(m.runs, run)
	return nil
}

func (m *memStore) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed++
	return m.fail["Close"]
}

// memLock is a held Lock.
type memLock struct {
	lost     chan struct{}
	released int
	err      error
}

var _ Lock = (*memLock)(nil)

func (l *memLock) Lost() <-chan struct{} { return l.lost }

func (l *memLock) Release() error {
	l.released++
	return l.err
}

var errBoom = errors.New("boom")
