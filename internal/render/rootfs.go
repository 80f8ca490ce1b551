package render

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errReadOnly is returned by the writing methods of rootFS: rendering never
// writes.
var errReadOnly = errors.New("the render file system is read-only")

// rootFS is a read-only kustomize file system on disk that refuses every
// path outside root, after resolving symbolic links. It also lets the
// caller see and change the bytes of files as kustomize reads them
// (onRead), and records the first refusal, because kustomize
// often swallows the error of a read (it probes a path as a file, then as a
// directory) and reports something vaguer.
type rootFS struct {
	root string // absolute, symbolic links resolved
	disk filesys.FileSystem

	// onRead, when set, is called with the resolved path and the content
	// of every file read; it returns the content the reader sees, or an
	// error that refuses the read.
	onRead func(path string, content []byte) ([]byte, error)

	mu      sync.Mutex
	refusal error
	// virtual holds files that exist only in memory (the rendered output
	// of Helm charts), by resolved absolute path.
	virtual map[string][]byte
}

var _ filesys.FileSystem = (*rootFS)(nil)

func newRootFS(root string) *rootFS {
	return &rootFS{root: root, disk: filesys.MakeFsOnDisk()}
}

// addVirtual makes a read-only file at path (absolute, its directory
// resolved) that exists only in memory.
func (f *rootFS) addVirtual(path string, content []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.virtual == nil {
		f.virtual = map[string][]byte{}
	}
	f.virtual[path] = content
}

// virtualFile returns the in-memory file at name, if there is one.
func (f *rootFS) virtualFile(name string) (string, []byte, bool) {
	f.mu.Lock()
	n := len(f.virtual)
	f.mu.Unlock()
	if n == 0 {
		return "", nil, false
	}
	real, err := resolvePath(name)
	if err != nil {
		return "", nil, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.virtual[real]
	return real, b, ok
}

// Refusal returns the first read that was refused, or nil.
func (f *rootFS) Refusal() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refusal
}

func (f *rootFS) refuse(err error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.refusal == nil {
		f.refusal = err
	}
	return err
}

// resolve returns the absolute path of name with its symbolic links
// resolved, and an error wrapping ErrOutsideRoot when that path is not root
// or under it. A path that does not exist is resolved as far as it exists.
func (f *rootFS) resolve(name string) (string, error) {
	real, err := resolvePath(name)
	if err != nil {
		return "", err
	}
	if !within(f.root, real) {
		return "", &outsideRootError{path: real, root: f.root}
	}
	return real, nil
}

// check is resolve that records a refusal.
func (f *rootFS) check(name string) (string, error) {
	real, err := f.resolve(name)
	if errors.Is(err, ErrOutsideRoot) {
		return "", f.refuse(err)
	}
	return real, err
}

// Open opens a file under root for reading.
func (f *rootFS) Open(name string) (filesys.File, error) {
	real, err := f.check(name)
	if err != nil {
		return nil, err
	}
	return f.disk.Open(real)
}

// ReadFile reads a file under root.
func (f *rootFS) ReadFile(name string) ([]byte, error) {
	if _, b, ok := f.virtualFile(name); ok {
		return b, nil
	}
	real, err := f.check(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(real)
	if err != nil {
		return nil, err
	}
	if f.onRead != nil {
		b, err = f.onRead(real, b)
		if err != nil {
			return nil, f.refuse(err)
		}
	}
	return b, nil
}

// IsDir reports whether name is a directory under root.
func (f *rootFS) IsDir(name string) bool {
	if _, _, ok := f.virtualFile(name); ok {
		return false
	}
	real, err := f.resolve(name)
	return err == nil && f.disk.IsDir(real)
}

// Exists reports whether name exists under root.
func (f *rootFS) Exists(name string) bool {
	if _, _, ok := f.virtualFile(name); ok {
		return true
	}
	real, err := f.resolve(name)
	return err == nil && f.disk.Exists(real)
}

// ReadDir lists a directory under root.
func (f *rootFS) ReadDir(name string) ([]string, error) {
	real, err := f.check(name)
	if err != nil {
		return nil, err
	}
	return f.disk.ReadDir(real)
}

// CleanedAbs splits name into a directory under root and a file name (empty
// when name is a directory), as kustomize's on-disk file system does, but
// without its log.Fatal calls.
func (f *rootFS) CleanedAbs(name string) (filesys.ConfirmedDir, string, error) {
	if real, _, ok := f.virtualFile(name); ok {
		return filesys.ConfirmedDir(filepath.Dir(real)), filepath.Base(real), nil
	}
	real, err := f.check(name)
	if err != nil {
		return "", "", err
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", "", err
	}
	if info.IsDir() {
		return filesys.ConfirmedDir(real), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(real)), filepath.Base(real), nil
}

// Glob returns the files under root that match pattern; hidden files only
// when the pattern names them, as kustomize does.
func (f *rootFS) Glob(pattern string) ([]string, error) {
	matches, err := f.disk.Glob(pattern)
	if err != nil {
		return nil, err
	}
	kept := matches[:0]
	for _, m := range matches {
		if _, err := f.resolve(m); err == nil {
			kept = append(kept, m)
		}
	}
	return kept, nil
}

// Walk walks a directory under root, leaving out what resolves outside it.
func (f *rootFS) Walk(name string, walkFn filepath.WalkFunc) error {
	if _, err := f.check(name); err != nil {
		return err
	}
	return filepath.Walk(name, func(p string, info fs.FileInfo, err error) error {
		if _, rerr := f.resolve(p); errors.Is(rerr, ErrOutsideRoot) {
			return nil
		}
		return walkFn(p, info, err)
	})
}

// Create refuses: rendering never writes.
func (f *rootFS) Create(string) (filesys.File, error) { return nil, errReadOnly }

// Mkdir refuses: rendering never writes.
func (f *rootFS) Mkdir(string) error { return errReadOnly }

// MkdirAll refuses: rendering never writes.
func (f *rootFS) MkdirAll(string) error { return errReadOnly }

// RemoveAll refuses: rendering never writes.
func (f *rootFS) RemoveAll(string) error { return errReadOnly }

// WriteFile refuses: rendering never writes.
func (f *rootFS) WriteFile(string, []byte) error { return errReadOnly }

// outsideRootError is a path that resolves outside the root.
type outsideRootError struct{ path, root string }

func (e *outsideRootError) Error() string {
	rel, err := filepath.Rel(e.root, e.path)
	if err != nil {
		rel = e.path
	}
	return fmt.Sprintf("%s %s %s", filepath.ToSlash(rel), ErrOutsideRoot, e.root)
}

func (e *outsideRootError) Is(target error) bool { return target == ErrOutsideRoot }

// resolvePath returns the absolute form of name with symbolic links
// resolved; the part of the path that does not exist is kept as written.
func resolvePath(name string) (string, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs, nil
	}
	realParent, err := resolvePath(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(realParent, filepath.Base(abs)), nil
}

// within reports whether path is root or under it; both are clean and
// absolute.
func within(root, path string) bool {
	if path == root {
		return true
	}
	if !strings.HasSuffix(root, string(filepath.Separator)) {
		root += string(filepath.Separator)
	}
	return strings.HasPrefix(path, root)
}
