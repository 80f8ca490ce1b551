package render

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"

	"github.com/snapply/snapply/internal/chartrepo"
	"github.com/snapply/snapply/internal/object"
)

// Options controls rendering.
type Options struct {
	// Root bounds the files kustomize may read (kustomize's load
	// restrictor): a `../` that leaves Root is refused, and so is a
	// symbolic link that points outside it. Source files are named
	// relative to Root. Default: the root of the git repository that
	// contains the path (the nearest directory with a .git), else the
	// path's own directory.
	Root string
	// AllowEmpty: a path that renders no object is an error unless set
	// (rendering nothing would prune everything later).
	AllowEmpty bool
	// Cluster, when set, is the cluster Helm charts are rendered for: it
	// answers .Capabilities and lookup, read-only. Without it charts
	// render as `helm template` does (Helm's default capabilities, lookup
	// finds nothing). It is used only when a chart is rendered.
	Cluster Cluster
	// Charts, when set, fetches remote charts (a helmCharts entry with a
	// repo, not vendored under chartHome), checked against snapply.lock.
	// Without it remote charts are refused.
	Charts *RemoteCharts
}

// RemoteCharts is where remote Helm charts come from.
type RemoteCharts struct {
	// Fetcher downloads charts into its cache.
	Fetcher *chartrepo.Fetcher
	// Lock, when set, records the digest of every remote chart in the
	// lock file next to its kustomization, instead of checking it there
	// (`snapply lock`); the caller saves it.
	Lock *chartrepo.Locks
}

// DefaultOptions returns the default Options: Root found from the path,
// empty results refused.
func DefaultOptions() Options {
	return Options{}
}

// Render renders path: a directory with a kustomization.yaml,
// kustomization.yml or Kustomization (built with kustomize's krusty, reads
// restricted to Root, no helm, no plugins, no remote bases), a kustomization
// file (its directory is built), a plain YAML or JSON file, or a directory
// of them (see the package documentation). It returns the objects in input
// order: files in lexical order, documents in file order, kustomize output
// in kustomize's order. Two objects with the same identity are an error
// (*DuplicateError); any other error is an *Error.
func Render(ctx context.Context, path string, opts Options) ([]object.Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fileError(path, 0, pathErr(err))
	}
	real, err := resolvePath(path)
	if err != nil {
		return nil, fileError(path, 0, pathErr(err))
	}
	root := opts.Root
	if root == "" {
		root = findRoot(real, info.IsDir())
	}
	rootInfo, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("render: root %s: %w", root, pathErr(err))
	}
	if !rootInfo.IsDir() {
		return nil, fmt.Errorf("render: root %s: not a directory", root)
	}
	if root, err = resolvePath(root); err != nil {
		return nil, fmt.Errorf("render: root %s: %w", opts.Root, pathErr(err))
	}
	if !within(root, real) {
		return nil, fileError(path, 0, fmt.Errorf("%w %s", ErrOutsideRoot, root))
	}

	r := &renderer{root: root, ctx: ctx, cluster: opts.Cluster, remote: opts.Charts}
	var objs []object.Object
	switch {
	case !info.IsDir() && isKustomizationFileName(filepath.Base(real)):
		objs, err = r.kustomize(filepath.Dir(real))
	case !info.IsDir():
		objs, err = r.file(real)
	case kustomizationFile(real) != "":
		objs, err = r.kustomize(real)
	default:
		objs, err = r.dir(ctx, real)
	}
	if err != nil {
		return nil, err
	}
	if err := checkDuplicates(objs); err != nil {
		return nil, err
	}
	if len(objs) == 0 && !opts.AllowEmpty {
		return nil, fileError(path, 0, ErrNoObjects)
	}
	return objs, nil
}

// renderer renders the files under one root.
type renderer struct {
	root string // absolute, symbolic links resolved

	ctx     context.Context
	cluster Cluster              // nil: Helm's default capabilities, no lookup
	caps    *common.Capabilities // the cluster's, read once
	charts  []helmSource         // by the index in helmSourceAnnotation
	remote  *RemoteCharts        // nil: remote charts are refused
	locks   map[string]*chartrepo.Lock
	// expanded holds the kustomizations whose helmCharts were rendered in
	// this kustomize run, by path and content, as rewritten.
	expanded map[string][]byte
}

// rel names a file relative to the root, with slashes.
func (r *renderer) rel(path string) string {
	rel, err := filepath.Rel(r.root, path)
	if err != nil {
		return filepath.ToSlash(path)
	}
	return filepath.ToSlash(rel)
}

// file decodes one plain YAML or JSON file.
func (r *renderer) file(path string) ([]object.Object, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fileError(r.rel(path), 0, pathErr(err))
	}
	return decode(r.rel(path), b)
}

// dir walks a directory without a kustomization: plain files are decoded,
// subdirectories with a kustomization are built with kustomize, hidden
// files and directories are skipped.
func (r *renderer) dir(ctx context.Context, dir string) ([]object.Object, error) {
	var objs []object.Object
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fileError(r.rel(p), 0, pathErr(err))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if kustomizationFile(p) == "" {
				return nil
			}
			got, err := r.kustomize(p)
			if err != nil {
				return err
			}
			objs = append(objs, got...)
			return filepath.SkipDir
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		real, err := resolvePath(p)
		if err != nil {
			return fileError(r.rel(p), 0, pathErr(err))
		}
		if !within(r.root, real) {
			return fileError(r.rel(p), 0, &outsideRootError{path: real, root: r.root})
		}
		b, err := os.ReadFile(real)
		if err != nil {
			return fileError(r.rel(p), 0, pathErr(err))
		}
		got, err := decode(r.rel(p), b)
		if err != nil {
			return err
		}
		objs = append(objs, got...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return objs, nil
}

// checkDuplicates returns a *DuplicateError for the first identity defined
// twice.
func checkDuplicates(objs []object.Object) error {
	seen := make(map[object.Key]object.Source, len(objs))
	for _, o := range objs {
		k := o.Ref.Key()
		if first, ok := seen[k]; ok {
			return &DuplicateError{Key: k, First: first, Second: o.Source}
		}
		seen[k] = o.Source
	}
	return nil
}

// findRoot returns the nearest directory at or above path that holds a .git
// (a directory, or a file in a worktree), else the path's own directory.
func findRoot(path string, isDir bool) string {
	start := path
	if !isDir {
		start = filepath.Dir(path)
	}
	for d := start; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return start
		}
		d = parent
	}
}

// pathErr drops the operation and path of an *fs.PathError, which the
// caller names itself: "no such file or directory".
func pathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
