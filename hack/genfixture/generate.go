package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// Variant says which of the two fixtures to write.
type Variant string

// The variants.
const (
	// Base is the fixture applied to the cluster before the benchmark.
	Base Variant = "base"
	// Changed is Base with ~10% of its objects changed and a few added.
	Changed Variant = "changed"
	// Changed1 is Base with ~1% of its objects changed (one per hundred
	// members of a namespace, at least one) and none added: a typical pull
	// request.
	Changed1 Variant = "changed1"
)

// Options says what to generate.
type Options struct {
	// Prefix names the namespaces and their files: PREFIX-00, PREFIX-01,
	// ... Fixtures with different prefixes can be applied side by side to
	// one cluster: they share no namespace.
	Prefix string
	// Namespaces is the number of namespaces.
	Namespaces int
	// PerNamespace is the number of objects in each namespace, not
	// counting the Namespace object.
	PerNamespace int
	// Variant is Base or Changed.
	Variant Variant
	// Seed seeds the content; the same Options give the same bytes.
	Seed uint64
}

// DefaultOptions returns the options of the benchmark: 10 namespaces
// bench-00 to bench-09 of 100 objects (1,010 objects), the base variant,
// seed 1.
func DefaultOptions() Options {
	return Options{Prefix: "bench", Namespaces: 10, PerNamespace: 100, Variant: Base, Seed: 1}
}

// addedPerNamespace is the number of objects the changed variant adds to
// each namespace (see added).
const addedPerNamespace = 2

// Fixture is a generated fixture: one multi-document YAML file per
// namespace.
type Fixture struct {
	// Files are in namespace order.
	Files []File
	// Stats counts the objects.
	Stats Stats
}

// File is one file of a fixture.
type File struct {
	// Name is the base name, PREFIX-NN.yaml.
	Name string
	// Data is the YAML stream: the Namespace first, then its objects.
	Data []byte
}

// Stats counts the objects of a fixture.
type Stats struct {
	// Objects is the number of objects, Namespaces included.
	Objects int
	// Changed is the number of base objects the changed variant changes.
	Changed int
	// Added is the number of objects the changed variant adds.
	Added int
}

// changedCount is the number of objects changed in a namespace of n
// objects: 10%, rounded, and at least one when there are any.
func changedCount(n int) int {
	if n == 0 {
		return 0
	}
	return max(1, (n+5)/10)
}

// changedCount1 is the number of objects the changed1 variant changes in a
// namespace of n objects: 1%, rounded, and at least one when there are any.
func changedCount1(n int) int {
	if n == 0 {
		return 0
	}
	return max(1, (n+50)/100)
}

// Generate returns the fixture o describes. The base content comes from one
// random stream and the changes from another, so that the changed variant
// leaves every object it does not pick identical to the base. The prefix
// changes only the namespace names: the same options with another prefix
// give the same objects in other namespaces.
func Generate(o Options) (*Fixture, error) {
	if o.Namespaces < 1 {
		return nil, fmt.Errorf("namespaces: %d: want at least 1", o.Namespaces)
	}
	// Every name must be a DNS label; the last is the longest.
	last := namespaceName(o.Prefix, o.Namespaces-1)
	if errs := validation.IsDNS1123Label(last); len(errs) > 0 {
		return nil, fmt.Errorf("prefix: %q: namespace %s: %s", o.Prefix, last, strings.Join(errs, "; "))
	}
	if o.PerNamespace < 0 {
		return nil, fmt.Errorf("per-namespace: %d: want 0 or more", o.PerNamespace)
	}
	if o.Variant != Base && o.Variant != Changed && o.Variant != Changed1 {
		return nil, fmt.Errorf("variant: %q: want %q, %q or %q", o.Variant, Base, Changed, Changed1)
	}
	base := rand.New(rand.NewPCG(o.Seed, 0))
	edit := rand.New(rand.NewPCG(o.Seed, 1))
	fx := &Fixture{}
	for n := range o.Namespaces {
		ns := namespaceName(o.Prefix, n)
		objs := []any{namespace(ns)}
		for k := range o.PerNamespace {
			objs = append(objs, member(base, ns, k))
		}
		if o.Variant == Changed1 {
			// The same stream of edits as Changed, fewer of them.
			picks := edit.Perm(o.PerNamespace)[:changedCount1(o.PerNamespace)]
			for _, i := range picks {
				change(edit, objs[1+i])
			}
			fx.Stats.Changed += len(picks)
		}
		if o.Variant == Changed {
			// Pick among the members, never the Namespace (objs[0]).
			picks := edit.Perm(o.PerNamespace)[:changedCount(o.PerNamespace)]
			for _, i := range picks {
				change(edit, objs[1+i])
			}
			add := added(edit, ns)
			objs = append(objs, add...)
			fx.Stats.Changed += len(picks)
			fx.Stats.Added += len(add)
		}
		data, err := encode(objs)
		if err != nil {
			return nil, fmt.Errorf("namespace %s: %w", ns, err)
		}
		fx.Files = append(fx.Files, File{Name: ns + ".yaml", Data: data})
		fx.Stats.Objects += len(objs)
	}
	return fx, nil
}

// namespaceName returns the name of the n-th namespace of a fixture.
func namespaceName(prefix string, n int) string {
	return fmt.Sprintf("%s-%02d", prefix, n)
}

// encode writes objs as one YAML stream, without the status and empty spec
// that the typed structs print.
func encode(objs []any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# Generated by hack/genfixture for `make bench`; do not edit.\n")
	for i, obj := range objs {
		j, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(j, &m); err != nil {
			return nil, err
		}
		delete(m, "status")
		if spec, ok := m["spec"].(map[string]any); ok && len(spec) == 0 {
			delete(m, "spec") // a Namespace's
		}
		y, err := yaml.Marshal(m)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(y)
	}
	return buf.Bytes(), nil
}

// Write writes the files of fx into dir, which is created if missing and
// must be empty, so that a smaller fixture does not leave files of a larger
// one behind.
func (fx *Fixture) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return fmt.Errorf("%s: %w", dir, errNotEmpty)
	}
	for _, f := range fx.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// errNotEmpty is returned by Write for a directory that holds files.
var errNotEmpty = errors.New("directory is not empty: write a fixture into a new or empty directory")
