package render

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func TestRootFS(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.yaml": "x: 1\n"})
	write(t, dir, map[string]string{
		"root/a.yaml":        "a: 1\n",
		"root/sub/b.yaml":    "b: 1\n",
		"root/escape.yaml":   "->" + filepath.Join(outside, "secret.yaml"),
		"root/inside.yaml":   "->a.yaml",
		"root/missing.yaml":  "->nowhere.yaml",
		"sibling/c.yaml":     "c: 1\n",
		"root/sub/.hidden.y": "h: 1\n",
	})
	root, err := resolvePath(filepath.Join(dir, "root"))
	if err != nil {
		t.Fatal(err)
	}
	f := newRootFS(root)
	in := func(p string) string { return filepath.Join(root, p) }

	t.Run("reads under the root", func(t *testing.T) {
		for _, p := range []string{in("a.yaml"), in("sub/../a.yaml"), in("inside.yaml")} {
			b, err := f.ReadFile(p)
			if err != nil || string(b) != "a: 1\n" {
				t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
			}
		}
		if !f.IsDir(in("sub")) || !f.Exists(in("sub/b.yaml")) || f.Exists(in("nope")) {
			t.Error("IsDir/Exists wrong under the root")
		}
		d, name, err := f.CleanedAbs(in("sub/b.yaml"))
		if err != nil || d != filesys.ConfirmedDir(in("sub")) || name != "b.yaml" {
			t.Errorf("CleanedAbs(sub/b.yaml) = %s, %s, %v", d, name, err)
		}
		d, name, err = f.CleanedAbs(in("sub"))
		if err != nil || d != filesys.ConfirmedDir(in("sub")) || name != "" {
			t.Errorf("CleanedAbs(sub) = %s, %s, %v", d, name, err)
		}
		names, err := f.ReadDir(in("sub"))
		if diff := cmp.Diff([]string{".hidden.y", "b.yaml"}, names); err != nil || diff != "" {
			t.Errorf("ReadDir(sub) error %v, (-want +got):\n%s", err, diff)
		}
		if _, err := f.ReadFile(in("missing.yaml")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ReadFile(dangling link) error = %v, want not exist", err)
		}
	})

	t.Run("refuses outside the root", func(t *testing.T) {
		for _, p := range []string{in("../sibling/c.yaml"), in("escape.yaml"), filepath.Join(outside, "secret.yaml"), "/"} {
			if _, err := f.ReadFile(p); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("ReadFile(%s) error = %v, want ErrOutsideRoot", p, err)
			}
			if _, err := f.Open(p); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("Open(%s) error = %v, want ErrOutsideRoot", p, err)
			}
			if _, _, err := f.CleanedAbs(p); !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("CleanedAbs(%s) error = %v, want ErrOutsideRoot", p, err)
			}
			if f.Exists(p) || f.IsDir(p) {
				t.Errorf("Exists/IsDir(%s) = true outside the root", p)
			}
		}
		if _, err := f.ReadDir(in("..")); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("ReadDir(..) error = %v, want ErrOutsideRoot", err)
		}
		want := fmt.Sprintf("../sibling/c.yaml is outside the root %s", root)
		if err := f.Refusal(); err == nil || err.Error() != want {
			t.Errorf("Refusal() = %v, want the first refusal %q", err, want)
		}
	})

	t.Run("glob leaves out what escapes", func(t *testing.T) {
		got, err := f.Glob(in("*.yaml"))
		want := []string{in("a.yaml"), in("inside.yaml"), in("missing.yaml")}
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("Glob() error %v, (-want +got):\n%s", err, diff)
		}
	})

	t.Run("walk leaves out what escapes", func(t *testing.T) {
		var got []string
		err := f.Walk(root, func(p string, _ fs.FileInfo, err error) error {
			got = append(got, p)
			return nil
		})
		want := []string{root, in("a.yaml"), in("inside.yaml"), in("missing.yaml"), in("sub"), in("sub/.hidden.y"), in("sub/b.yaml")}
		if diff := cmp.Diff(want, got); err != nil || diff != "" {
			t.Errorf("Walk() error %v, (-want +got):\n%s", err, diff)
		}
		if err := f.Walk(in(".."), func(string, fs.FileInfo, error) error { return nil }); !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("Walk(..) error = %v, want ErrOutsideRoot", err)
		}
	})

	t.Run("read-only", func(t *testing.T) {
		_, err := f.Create(in("new"))
		for _, err := range []error{err, f.Mkdir(in("d")), f.MkdirAll(in("d/e")), f.RemoveAll(in("sub")), f.WriteFile(in("a.yaml"), nil)} {
			if !errors.Is(err, errReadOnly) {
				t.Errorf("write error = %v, want errReadOnly", err)
			}
		}
		if !f.Exists(in("sub/b.yaml")) {
			t.Error("RemoveAll removed a file")
		}
	})
}
