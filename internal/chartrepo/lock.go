package chartrepo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/text"
)

// lockHeader starts every lock file snapply writes.
const lockHeader = "# Written by `snapply lock`: the digest of every remote Helm chart, by\n# chart and version. plan and apply refuse a chart that does not match.\n"

// Lock is a lock file: chart key (see Key) -> version -> digest.
type Lock struct {
	Charts map[string]map[string]string `json:"charts"`
}

// ReadLock reads the lock file at path; a file that does not exist is an
// empty Lock.
func ReadLock(path string) (*Lock, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{Charts: map[string]map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	var l Lock
	if err := yaml.UnmarshalStrict(b, &l); err != nil {
		return nil, fmt.Errorf("%s: %s", filepath.Base(path), text.OneLine(err.Error()))
	}
	if l.Charts == nil {
		l.Charts = map[string]map[string]string{}
	}
	return &l, nil
}

// Digest returns the digest locked for key at version, or "".
func (l *Lock) Digest(key, version string) string {
	return l.Charts[key][version]
}

// Set locks key at version to digest.
func (l *Lock) Set(key, version, digest string) {
	if l.Charts == nil {
		l.Charts = map[string]map[string]string{}
	}
	if l.Charts[key] == nil {
		l.Charts[key] = map[string]string{}
	}
	l.Charts[key][version] = digest
}

// Marshal returns the lock file's content: sorted, with a header.
func (l *Lock) Marshal() ([]byte, error) {
	b, err := yaml.Marshal(l)
	if err != nil {
		return nil, err
	}
	return append([]byte(lockHeader), b...), nil
}

// Locks collects the lock files `snapply lock` writes: one per
// kustomization directory that lists remote charts.
type Locks struct {
	mu    sync.Mutex
	files map[string]*Lock // by path
}

// Record locks key at version to digest in the lock file at path; the
// entries of the file as it was are kept.
func (ls *Locks) Record(path, key, version, digest string) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.files == nil {
		ls.files = map[string]*Lock{}
	}
	l, ok := ls.files[path]
	if !ok {
		var err error
		if l, err = ReadLock(path); err != nil {
			return err
		}
		ls.files[path] = l
	}
	l.Set(key, version, digest)
	return nil
}

// Paths returns the lock files recorded, sorted.
func (ls *Locks) Paths() []string {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []string
	for p := range ls.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Save writes every recorded lock file.
func (ls *Locks) Save() error {
	for _, p := range ls.Paths() {
		ls.mu.Lock()
		b, err := ls.files[p].Marshal()
		ls.mu.Unlock()
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}
