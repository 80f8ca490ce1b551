package render

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/api/types"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/snapply/snapply/internal/object"
)

// kustomizeMu serialises kustomize runs: kustomize keeps global state (the
// OpenAPI schema in use, for one).
var kustomizeMu sync.Mutex

// trackingAnnotations are the annotations kustomize adds to trace where an
// object came from. Render removes them from every object.
var trackingAnnotations = []string{"config.kubernetes.io/origin", "alpha.config.kubernetes.io/transformations", helmSourceAnnotation}

// kustomizationFile returns the kustomization file in dir, or "".
func kustomizationFile(dir string) string {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := filepath.Join(dir, name)
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return p
		}
	}
	return ""
}

// isKustomizationFileName reports whether name is one kustomize reads as a
// kustomization.
func isKustomizationFileName(name string) bool {
	return slices.Contains(konfig.RecognizedKustomizationFileNames(), name)
}

// kustomize builds the kustomization in dir (resolved, under r.root) with
// krusty: no plugins, no helm, no remote bases, no file outside the root.
// Objects come in kustomize's input order, with the file they came from
// when origin tracking can tell it.
func (r *renderer) kustomize(dir string) ([]object.Object, error) {
	kustFile := kustomizationFile(dir)
	kustRel := r.rel(kustFile)

	fsys := newRootFS(r.root)
	rootNamespace := kustomizationNamespace(kustFile)
	fsys.onRead = func(path string, content []byte) ([]byte, error) {
		if !isKustomizationFileName(filepath.Base(path)) {
			if err := checkRemoteBuiltin(content); err != nil {
				return nil, &remoteError{file: r.rel(path), err: err}
			}
			return content, nil
		}
		if err := checkRemote(content); err != nil {
			return nil, &remoteError{file: r.rel(path), err: err}
		}
		content, err := r.expandHelmCharts(path, content, fsys, rootNamespace)
		if err != nil {
			return nil, err
		}
		if path == kustFile {
			return withOriginAnnotations(content), nil
		}
		return content, nil
	}

	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone // fsys keeps reads under the root
	opts.PluginConfig = types.DisabledPluginConfig()
	opts.AddManagedbyLabel = false
	opts.Reorder = krusty.ReorderOptionNone
	if hasSortOptions(kustFile) {
		// Let the kustomization's sortOptions decide, without the warning
		// kustomize logs when a reorder option is given as well.
		opts.Reorder = krusty.ReorderOptionUnspecified
	}

	objs, err := r.runKrusty(fsys, dir, opts)
	if err != nil {
		var remote *remoteError
		var rerr *Error
		switch refusal := fsys.Refusal(); {
		case errors.As(refusal, &remote):
			return nil, fileError(remote.file, 0, remote.err)
		case errors.As(refusal, &rerr):
			return nil, rerr
		case refusal != nil:
			return nil, fileError(kustRel, 0, refusal)
		}
		return nil, fileError(kustRel, 0, &rewordedError{msg: r.relativize(err.Error()), err: err})
	}
	return objs, nil
}

// runKrusty runs kustomize under kustomizeMu, turning a panic into an error.
func (r *renderer) runKrusty(fsys *rootFS, dir string, opts *krusty.Options) (objs []object.Object, err error) {
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			objs, err = nil, fmt.Errorf("kustomize panicked: %v", p)
		}
	}()
	m, err := krusty.MakeKustomizer(opts).Run(fsys, dir)
	if err != nil {
		return nil, err
	}
	return r.objectsOf(m, dir, r.rel(kustomizationFile(dir)))
}

// objectsOf converts kustomize's output, finding each object's source from
// its origin annotation, then dropping the tracking annotations.
func (r *renderer) objectsOf(m resmap.ResMap, dir, kustRel string) ([]object.Object, error) {
	lines := &lineFinder{files: map[string][]object.Object{}}
	var objs []object.Object
	for _, res := range m.Resources() {
		src := object.Source{File: kustRel}
		var unstable []string
		var defaultNS string
		byKustomize := false
		if hs, ok := r.chartSourceOf(res.GetAnnotations(helmSourceAnnotation)); ok {
			src, unstable, defaultNS = hs.src, hs.unstable, hs.namespace
		} else if origin, err := res.GetOrigin(); err == nil && origin != nil {
			src = r.sourceOf(origin, dir, res, lines)
			byKustomize = res.GetNamespace() != "" && origin.Repo == "" && origin.Path != "" &&
				lines.withoutNamespace(filepath.Join(dir, filepath.FromSlash(origin.Path)), res.GetKind(), res.GetName())
		}
		b, err := res.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", res.GetKind(), res.GetName(), err)
		}
		var v map[string]any
		if err := utiljson.Unmarshal(b, &v); err != nil {
			return nil, fmt.Errorf("%s %s: %w", res.GetKind(), res.GetName(), err)
		}
		u, err := newObject(v)
		if err != nil {
			return nil, err
		}
		removeTrackingAnnotations(u)
		objs = append(objs, object.Object{Ref: object.RefOf(u), Obj: u, Source: src, Unstable: unstable, DefaultNamespace: defaultNS, NamespaceByKustomize: byKustomize})
	}
	return objs, nil
}

// sourceOf turns a kustomize origin into a Source relative to the root. A
// resource's origin is the file it was read from; a generated object's is
// the kustomization that generated it.
func (r *renderer) sourceOf(origin *resource.Origin, dir string, res *resource.Resource, lines *lineFinder) object.Source {
	switch {
	case origin.Repo != "":
		// Remote bases are refused before they are read; keep the kustomization.
	case origin.Path != "":
		abs := filepath.Join(dir, filepath.FromSlash(origin.Path))
		return object.Source{File: r.rel(abs), Line: lines.objectLine(abs, res.GetKind(), res.GetName())}
	case origin.ConfiguredIn != "":
		abs := filepath.Join(dir, filepath.FromSlash(origin.ConfiguredIn))
		return object.Source{File: r.rel(abs), Line: generatorLine(abs, origin.ConfiguredBy.Kind, res.GetName())}
	}
	return object.Source{File: r.rel(kustomizationFile(dir))}
}

// removeTrackingAnnotations drops the annotations kustomize adds for origin
// and transformer tracking, and the annotations map if that empties it.
func removeTrackingAnnotations(u *unstructured.Unstructured) {
	ann := u.GetAnnotations()
	if ann == nil {
		return
	}
	n := len(ann)
	for _, k := range trackingAnnotations {
		delete(ann, k)
	}
	if len(ann) == n {
		return
	}
	if len(ann) == 0 {
		unstructured.RemoveNestedField(u.Object, "metadata", "annotations")
		return
	}
	u.SetAnnotations(ann)
}

// withOriginAnnotations adds originAnnotations to the buildMetadata of a
// kustomization, so that every object says which file it came from. A
// kustomization that does not parse is returned as is, for kustomize to
// report.
func withOriginAnnotations(content []byte) []byte {
	rn, err := kyaml.Parse(string(content))
	if err != nil || rn.YNode().Kind != kyaml.MappingNode {
		return content
	}
	bm := rn.Field("buildMetadata")
	switch {
	case bm == nil || bm.Value.IsNil():
		if err := rn.PipeE(kyaml.SetField("buildMetadata", kyaml.NewListRNode(types.OriginAnnotations))); err != nil {
			return content
		}
	case bm.Value.YNode().Kind == kyaml.SequenceNode:
		for _, item := range bm.Value.YNode().Content {
			if item.Value == types.OriginAnnotations {
				return content
			}
		}
		bm.Value.YNode().Content = append(bm.Value.YNode().Content, kyaml.NewStringRNode(types.OriginAnnotations).YNode())
	default:
		return content
	}
	s, err := rn.String()
	if err != nil {
		return content
	}
	return []byte(s)
}

// kustomizationNamespace returns the namespace a kustomization file sets,
// or "".
func kustomizationNamespace(kustFile string) string {
	b, err := os.ReadFile(kustFile)
	if err != nil {
		return ""
	}
	var k types.Kustomization
	if k.Unmarshal(b) != nil {
		return ""
	}
	return k.Namespace
}

// hasSortOptions reports whether the kustomization file sets sortOptions.
func hasSortOptions(kustFile string) bool {
	b, err := os.ReadFile(kustFile)
	if err != nil {
		return false
	}
	var k types.Kustomization
	return k.Unmarshal(b) == nil && k.SortOptions != nil
}

// remoteError is a kustomization that refers to a remote base or file.
type remoteError struct {
	file string // the kustomization, relative to the root
	err  error
}

func (e *remoteError) Error() string { return e.file + ": " + e.err.Error() }
func (e *remoteError) Unwrap() error { return e.err }

// checkRemote returns an error wrapping ErrRemote when a kustomization
// refers to a git repository or a URL. It runs before kustomize reads the
// kustomization, so that nothing is cloned or fetched. A kustomization that
// does not parse passes, for kustomize to report.
func checkRemote(content []byte) error {
	var k types.Kustomization
	if k.Unmarshal(content) != nil {
		return nil
	}
	type ref struct{ field, value string }
	var refs []ref
	add := func(field string, values ...string) {
		for _, v := range values {
			refs = append(refs, ref{field, v})
		}
	}
	add("resources", k.Resources...)
	add("bases", k.Bases...)
	add("components", k.Components...)
	add("crds", k.Crds...)
	add("configurations", k.Configurations...)
	add("generators", k.Generators...)
	add("transformers", k.Transformers...)
	add("validators", k.Validators...)
	add("openapi", k.OpenAPI["path"])
	for _, p := range k.Patches {
		add("patches", p.Path)
	}
	for _, p := range k.PatchesJson6902 {
		add("patchesJson6902", p.Path)
	}
	for _, p := range k.PatchesStrategicMerge {
		add("patchesStrategicMerge", string(p))
	}
	for _, p := range k.Replacements {
		add("replacements", p.Path)
	}
	kv := func(field string, s types.KvPairSources) {
		for _, f := range s.FileSources {
			if _, path, ok := strings.Cut(f, "="); ok {
				f = path
			}
			add(field, f)
		}
		add(field, s.EnvSources...)
		add(field, s.EnvSource)
	}
	for _, g := range k.ConfigMapGenerator {
		kv("configMapGenerator", g.KvPairSources)
	}
	for _, g := range k.SecretGenerator {
		kv("secretGenerator", g.KvPairSources)
	}
	for _, r := range refs {
		if isRemote(r.value) {
			return fmt.Errorf("%s entry %q %w", r.field, r.value, ErrRemote)
		}
	}
	// Generators, transformers and validators may be written inline.
	for _, inline := range slices.Concat(k.Generators, k.Transformers, k.Validators) {
		if strings.Contains(inline, "\n") {
			if err := checkRemoteBuiltin([]byte(inline)); err != nil {
				return err
			}
		}
	}
	return nil
}

// builtinFileFields are the fields of kustomize's builtin plugin configs
// that name files to load.
var builtinFileFields = []string{"files", "envs", "env", "path"}

// checkRemoteBuiltin returns an error wrapping ErrRemote when a builtin
// generator or transformer config (apiVersion: builtin, listed under
// generators or transformers) names a URL to load. Any other content
// passes.
func checkRemoteBuiltin(content []byte) error {
	if !bytes.Contains(content, []byte("builtin")) {
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(content))
	for {
		var doc yaml.Node
		if dec.Decode(&doc) != nil {
			return nil // the end, or not YAML: for kustomize to report
		}
		if len(doc.Content) == 0 || scalarValue(mappingValue(doc.Content[0], "apiVersion")) != "builtin" {
			continue
		}
		kind := scalarValue(mappingValue(doc.Content[0], "kind"))
		for _, field := range builtinFileFields {
			v := mappingValue(doc.Content[0], field)
			values := []*yaml.Node{v}
			if v != nil && v.Kind == yaml.SequenceNode {
				values = v.Content
			}
			for _, n := range values {
				s := scalarValue(deref(n))
				if _, path, ok := strings.Cut(s, "="); ok && field == "files" {
					s = path
				}
				if isRemote(s) {
					return fmt.Errorf("%s %s entry %q %w", kind, field, s, ErrRemote)
				}
			}
		}
	}
}

// gitUser matches the user of an scp-style git URL (git@host:repo).
var gitUser = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9-]*@`)

// isRemote reports whether kustomize would fetch s rather than read it from
// disk: a URL, an scp-style git address, or a github.com path. Inline
// content (several lines) is not a reference.
func isRemote(s string) bool {
	if s == "" || strings.Contains(s, "\n") {
		return false
	}
	l := strings.ToLower(strings.TrimSpace(s))
	l = strings.TrimPrefix(l, "git::")
	return strings.Contains(l, "://") ||
		gitUser.MatchString(l) ||
		strings.HasPrefix(l, "github.com/") || strings.HasPrefix(l, "github.com:")
}

// lineFinder finds the line an object starts on in a resource file, by
// decoding the file once.
type lineFinder struct {
	files map[string][]object.Object
}

// objectLine returns the line of the object of this kind in file whose
// name the rendered name was made from (kustomize may add a prefix, a
// suffix or a hash), or 0 when that is ambiguous.
func (f *lineFinder) objectLine(file, kind, name string) int {
	if o, ok := f.find(file, kind, name); ok {
		return o.Source.Line
	}
	return 0
}

// withoutNamespace reports whether the object of this kind in file that
// the rendered name was made from names no namespace: a namespace the
// rendered object has was set by a kustomization.
func (f *lineFinder) withoutNamespace(file, kind, name string) bool {
	o, ok := f.find(file, kind, name)
	return ok && o.Ref.Namespace == ""
}

// find returns the object of this kind in file whose name the rendered
// name was made from; false when there is none or that is ambiguous.
func (f *lineFinder) find(file, kind, name string) (object.Object, bool) {
	objs, ok := f.files[file]
	if !ok {
		if b, err := os.ReadFile(file); err == nil {
			objs, _ = decode(file, b)
		}
		f.files[file] = objs
	}
	var best []object.Object
	bestLen := -1
	for _, o := range objs {
		if o.Ref.Kind != kind || !strings.Contains(name, o.Ref.Name) {
			continue
		}
		switch n := len(o.Ref.Name); {
		case n > bestLen:
			best, bestLen = []object.Object{o}, n
		case n == bestLen:
			best = append(best, o)
		}
	}
	if len(best) == 1 {
		return best[0], true
	}
	return object.Object{}, false
}

// generatorLine returns the line of the configMapGenerator or
// secretGenerator entry that made the object called name (kustomize may
// have added a prefix, a suffix and a hash), or 0 when that is ambiguous.
func generatorLine(kustFile, generatorKind, name string) int {
	field := map[string]string{"ConfigMapGenerator": "configMapGenerator", "SecretGenerator": "secretGenerator"}[generatorKind]
	if field == "" {
		return 0
	}
	b, err := os.ReadFile(kustFile)
	if err != nil {
		return 0
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	gens := mappingValue(doc.Content[0], field)
	if gens == nil || gens.Kind != yaml.SequenceNode {
		return 0
	}
	line, bestLen, ties := 0, -1, 0
	for _, g := range gens.Content {
		n := scalarValue(mappingValue(g, "name"))
		if n == "" || !strings.Contains(name, n) {
			continue
		}
		switch {
		case len(n) > bestLen:
			line, bestLen, ties = deref(g).Line, len(n), 1
		case len(n) == bestLen:
			ties++
		}
	}
	if ties != 1 {
		return 0
	}
	return line
}

// relativize rewrites the absolute paths under the root in a kustomize
// message as paths relative to the root.
func (r *renderer) relativize(msg string) string {
	sep := string(filepath.Separator)
	msg = strings.ReplaceAll(msg, r.root+sep, "")
	return strings.ReplaceAll(msg, r.root, ".")
}
