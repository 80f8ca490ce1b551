package render

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/Masterminds/semver/v3"
	"go.yaml.in/yaml/v3"
	ci "helm.sh/helm/v4/pkg/chart"
	"helm.sh/helm/v4/pkg/chart/common"
	chartvalues "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/kustomize/kyaml/yaml/merge2"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/chartrepo"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/text"
)

// helmSourceAnnotation marks every object rendered from a chart with the
// index of its source in renderer.charts while kustomize builds; Render
// removes it.
const helmSourceAnnotation = "internal.snapply.dev/helm-source"

// helmFilePrefix starts the name of the in-memory file that holds a
// chart's output, next to the kustomization that lists the chart.
const helmFilePrefix = ".snapply-helm-"

// The valuesMerge options of a helmCharts entry, as kustomize reads them.
const (
	valuesMergeMerge    = "merge"
	valuesMergeOverride = "override"
	valuesMergeReplace  = "replace"
)

// helmLogMu serialises the silencing of the standard logger while a chart
// renders: Helm logs warnings through it that may quote values.
var helmLogMu sync.Mutex

// helmSource is where the objects of one chart document came from.
type helmSource struct {
	src       object.Source
	unstable  []string
	namespace string // the release namespace
}

// helmDoc is one document of a chart's output: its template, relative to
// the chart, and its YAML.
type helmDoc struct {
	template string
	content  string
}

// expandHelmCharts renders the helmCharts of the kustomization at kustPath
// (resolved, its content as read) and returns the kustomization with them
// replaced by resources: one in-memory file per chart, added to fsys. A
// kustomization without helmCharts is returned as is. rootNamespace is the
// namespace of the kustomization being built, which a chart in a base
// inherits, as kustomize does.
func (r *renderer) expandHelmCharts(kustPath string, content []byte, fsys *rootFS, rootNamespace string) ([]byte, error) {
	var k types.Kustomization
	if k.Unmarshal(content) != nil {
		return content, nil // for kustomize to report
	}
	kustRel := r.rel(kustPath)
	if len(k.HelmChartInflationGenerator) > 0 {
		return nil, fileError(kustRel, 0, errors.New("helmChartInflationGenerator is not supported: use helmCharts"))
	}
	if len(k.HelmCharts) == 0 {
		return content, nil
	}
	// Per file system: the in-memory files live in fsys.
	cacheKey := fmt.Sprintf("%p\x00%s\x00%s", fsys, kustPath, content)
	if done, ok := r.expanded[cacheKey]; ok {
		return done, nil // kustomize read it before: its files are in place
	}
	lines := helmChartLines(content)
	var globals types.HelmGlobals
	if k.HelmGlobals != nil {
		globals = *k.HelmGlobals
	}
	dir := filepath.Dir(kustPath)
	var files []string
	for i, h := range k.HelmCharts {
		line := 0
		if i < len(lines) {
			line = lines[i]
		}
		if h.Namespace == "" {
			h.Namespace = k.Namespace
		}
		if h.Namespace == "" {
			h.Namespace = rootNamespace
		}
		out, err := r.helmChart(dir, globals, h, object.Source{File: kustRel, Line: line})
		if err != nil {
			return nil, err
		}
		if len(out) == 0 {
			continue
		}
		name := fmt.Sprintf("%s%d-%s.yaml", helmFilePrefix, i, h.Name)
		fsys.addVirtual(filepath.Join(dir, name), out)
		files = append(files, name)
	}
	rewritten, err := replaceHelmCharts(content, files)
	if err != nil {
		return nil, fileError(kustRel, 0, err)
	}
	if r.expanded == nil {
		r.expanded = map[string][]byte{}
	}
	r.expanded[cacheKey] = rewritten
	return rewritten, nil
}

// replaceHelmCharts removes helmCharts and helmGlobals from a
// kustomization and appends files to its resources.
func replaceHelmCharts(content []byte, files []string) ([]byte, error) {
	rn, err := kyaml.Parse(string(content))
	if err != nil {
		return nil, err
	}
	for _, f := range []string{"helmCharts", "helmGlobals", "helmChartInflationGenerator"} {
		if _, err := rn.Pipe(kyaml.Clear(f)); err != nil {
			return nil, err
		}
	}
	if len(files) > 0 {
		res, err := rn.Pipe(kyaml.LookupCreate(kyaml.SequenceNode, "resources"))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			res.YNode().Content = append(res.YNode().Content, kyaml.NewStringRNode(f).YNode())
		}
	}
	s, err := rn.String()
	if err != nil {
		return nil, err
	}
	return []byte(s), nil
}

// helmChartLines returns the line of each helmCharts entry of a
// kustomization.
func helmChartLines(content []byte) []int {
	var doc yaml.Node
	if yaml.Unmarshal(content, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	seq := mappingValue(doc.Content[0], "helmCharts")
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	lines := make([]int, 0, len(seq.Content))
	for _, item := range seq.Content {
		lines = append(lines, deref(item).Line)
	}
	return lines
}

// chartError is an error about the helmCharts entry at src.
func chartError(src object.Source, name string, err error) error {
	return fileError(src.File, src.Line, fmt.Errorf("helm chart %s: %w", name, err))
}

// helmChart renders one helmCharts entry of the kustomization in dir into
// a stream of YAML documents, each annotated with its source.
func (r *renderer) helmChart(dir string, g types.HelmGlobals, h types.HelmChart, src object.Source) ([]byte, error) {
	if h.Name == "" {
		return nil, fileError(src.File, src.Line, errors.New("helm chart: name is empty"))
	}
	if err := checkHelmEntry(h); err != nil {
		return nil, chartError(src, h.Name, err)
	}
	c, err := r.loadChart(dir, g, h)
	if err != nil {
		return nil, chartError(src, h.Name, err)
	}
	src.Chart = c.Name() + "@" + c.Metadata.Version
	if h.Version != "" && h.Version != c.Metadata.Version {
		return nil, chartError(src, src.Chart, fmt.Errorf("the kustomization asks for version %s, the chart is %s", h.Version, c.Metadata.Version))
	}
	vals, err := r.chartValues(dir, c, h)
	if err != nil {
		return nil, chartError(src, src.Chart, err)
	}
	caps, err := r.helmCapabilities(h)
	if err != nil {
		return nil, chartError(src, src.Chart, err)
	}
	first, second, err := r.renderTwice(c, vals, h, caps)
	if err != nil {
		return nil, chartError(src, src.Chart, err)
	}
	unstable := unstableFields(first, second)
	var out strings.Builder
	for i, d := range first {
		nodes, err := kio.FromBytes([]byte(d.content))
		if err != nil {
			return nil, chartError(src, src.Chart, fmt.Errorf("%s: %w", d.template, err))
		}
		s := src
		s.Template = d.template
		id := len(r.charts)
		r.charts = append(r.charts, helmSource{src: s, unstable: unstable[i], namespace: releaseNamespace(h)})
		for _, n := range nodes {
			if n.IsNilOrEmpty() {
				continue
			}
			if err := n.PipeE(kyaml.SetAnnotation(helmSourceAnnotation, strconv.Itoa(id))); err != nil {
				return nil, chartError(src, src.Chart, fmt.Errorf("%s: %w", d.template, err))
			}
			// As kustomize does: the kustomization's namespace does not
			// override what the chart sets (kustomize removes this
			// annotation from its output).
			if err := n.PipeE(kyaml.SetAnnotation(konfig.HelmGeneratedAnnotation, "true")); err != nil {
				return nil, chartError(src, src.Chart, fmt.Errorf("%s: %w", d.template, err))
			}
			y, err := n.String()
			if err != nil {
				return nil, chartError(src, src.Chart, fmt.Errorf("%s: %w", d.template, err))
			}
			out.WriteString("---\n")
			out.WriteString(y)
		}
	}
	return []byte(out.String()), nil
}

// checkHelmEntry refuses the fields of a helmCharts entry that snapply does
// not support.
func checkHelmEntry(h types.HelmChart) error {
	switch h.ValuesMerge {
	case "", valuesMergeMerge, valuesMergeOverride, valuesMergeReplace:
	default:
		return fmt.Errorf("valuesMerge must be one of %s, %s or %s", valuesMergeMerge, valuesMergeOverride, valuesMergeReplace)
	}
	if h.NameTemplate != "" {
		return errors.New("nameTemplate is not supported: set releaseName")
	}
	if strings.HasPrefix(h.ReleaseName, "-") {
		return fmt.Errorf("releaseName must not start with '-', got %q", h.ReleaseName)
	}
	return nil
}

// loadChart finds and loads the chart of h, as kustomize finds it: the
// directory NAME under chartHome (default charts, relative to the
// kustomization), or under chartHome/NAME-VERSION when the entry names a
// repo and a version. A packaged chart, NAME-VERSION.tgz or NAME.tgz in the
// same place, is read as well. Everything must be under the root.
func (r *renderer) loadChart(dir string, g types.HelmGlobals, h types.HelmChart) (*chart.Chart, error) {
	home := g.ChartHome
	if home == "" {
		home = types.HelmDefaultHome
	}
	if !filepath.IsAbs(home) {
		home = filepath.Join(dir, home)
	}
	if h.Version != "" && h.Repo != "" {
		home = filepath.Join(home, h.Name+"-"+h.Version)
	}
	p := filepath.Join(home, h.Name)
	candidates := []string{p}
	if h.Version != "" {
		candidates = append(candidates, p+"-"+h.Version+".tgz")
	}
	candidates = append(candidates, p+".tgz")
	for _, cand := range candidates {
		real, err := resolvePath(cand)
		if err != nil {
			return nil, err
		}
		info, err := os.Stat(real)
		if err != nil {
			continue
		}
		if !within(r.root, real) {
			return nil, &outsideRootError{path: real, root: r.root}
		}
		if info.IsDir() {
			if err := r.checkTree(real); err != nil {
				return nil, err
			}
			c, err := loader.LoadDir(real)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.rel(real), err)
			}
			return c, nil
		}
		c, err := loader.LoadFile(real)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.rel(real), err)
		}
		return c, nil
	}
	if h.Repo != "" && r.remote != nil {
		return r.remoteChart(dir, h)
	}
	if h.Repo != "" {
		return nil, fmt.Errorf("not found at %s: charts from a repository (%s) must be in the repository, for example with `helm pull --untar --untardir %s %s --repo %s --version %s`",
			r.rel(p), h.Repo, r.rel(home), h.Name, h.Repo, h.Version)
	}
	return nil, fmt.Errorf("no chart found at %s (a directory, or a .tgz)", r.rel(p))
}

// remoteChart fetches the chart of an entry with a repo, pinned to an
// exact version, and checks its digest against the lock file next to the
// kustomization in dir (or records it there, for `snapply lock`).
func (r *renderer) remoteChart(dir string, h types.HelmChart) (*chart.Chart, error) {
	if err := chartrepo.CheckVersion(h.Version); err != nil {
		return nil, err
	}
	key := chartrepo.Key(h.Repo, h.Name)
	lockPath := filepath.Join(dir, chartrepo.LockFileName)
	want := ""
	if r.remote.Lock == nil {
		lock, err := r.lock(lockPath)
		if err != nil {
			return nil, err
		}
		if want = lock.Digest(key, h.Version); want == "" {
			return nil, fmt.Errorf("%s@%s %w", key, h.Version, chartrepo.ErrNotLocked)
		}
	}
	b, digest, err := r.remote.Fetcher.Fetch(r.ctx, h.Repo, h.Name, h.Version, want)
	if err != nil {
		return nil, err
	}
	if r.remote.Lock != nil {
		if err := r.remote.Lock.Record(lockPath, key, h.Version, digest); err != nil {
			return nil, err
		}
	}
	c, err := loader.LoadArchive(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", key, h.Version, err)
	}
	return c, nil
}

// lock reads the lock file at path (under the root) once per Render.
func (r *renderer) lock(path string) (*chartrepo.Lock, error) {
	if l, ok := r.locks[path]; ok {
		return l, nil
	}
	real, err := r.underRoot(path)
	if err != nil {
		return nil, err
	}
	l, err := chartrepo.ReadLock(real)
	if err != nil {
		return nil, err
	}
	if r.locks == nil {
		r.locks = map[string]*chartrepo.Lock{}
	}
	r.locks[path] = l
	return l, nil
}

// checkTree refuses a chart directory with a symbolic link that leaves the
// root.
func (r *renderer) checkTree(dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		_, err = r.underRoot(p)
		return err
	})
}

// underRoot resolves path (symbolic links included) and returns it, or an
// *outsideRootError when it leads out of the repository root.
func (r *renderer) underRoot(path string) (string, error) {
	real, err := resolvePath(path)
	if err != nil {
		return "", err
	}
	if !within(r.root, real) {
		return "", &outsideRootError{path: real, root: r.root}
	}
	return real, nil
}

// readUnderRoot reads a file named relative to dir, which must be under the
// root.
func (r *renderer) readUnderRoot(dir, name string) ([]byte, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	real, err := r.underRoot(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(real)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.rel(real), pathErr(err))
	}
	return b, nil
}

// chartValues returns the values of a helmCharts entry as `helm template
// -f` reads them from the files kustomize writes: valuesFile (default: the
// chart's own values.yaml), merged with valuesInline by valuesMerge, then
// each of additionalValuesFiles over it.
func (r *renderer) chartValues(dir string, c *chart.Chart, h types.HelmChart) (map[string]any, error) {
	var base []byte
	if h.ValuesMerge != valuesMergeReplace || len(h.ValuesInline) == 0 {
		var err error
		if base, err = r.valuesFile(dir, c, h); err != nil {
			return nil, err
		}
	}
	if len(h.ValuesInline) > 0 {
		merged, err := mergeInline(base, h.ValuesInline, h.ValuesMerge)
		if err != nil {
			return nil, err
		}
		if base, err = sigsyaml.Marshal(merged); err != nil {
			return nil, fmt.Errorf("valuesInline: %w", err)
		}
	}
	vals, err := common.ReadValues(base)
	if err != nil {
		return nil, fmt.Errorf("values: %w", oneLineErr(err))
	}
	out := mergeValues(map[string]any{}, vals)
	for _, f := range h.AdditionalValuesFiles {
		b, err := r.readUnderRoot(dir, f)
		if err != nil {
			return nil, fmt.Errorf("additionalValuesFiles: %w", err)
		}
		v, err := common.ReadValues(b)
		if err != nil {
			return nil, fmt.Errorf("additionalValuesFiles %s: %w", f, oneLineErr(err))
		}
		out = mergeValues(out, v)
	}
	return out, nil
}

// valuesFile returns the content of the entry's valuesFile, or of the
// chart's own values.yaml.
func (r *renderer) valuesFile(dir string, c *chart.Chart, h types.HelmChart) ([]byte, error) {
	if h.ValuesFile != "" {
		b, err := r.readUnderRoot(dir, h.ValuesFile)
		if err != nil {
			return nil, fmt.Errorf("valuesFile: %w", err)
		}
		return b, nil
	}
	for _, f := range c.Raw {
		if f.Name == chartutil.ValuesfileName {
			return f.Data, nil
		}
	}
	return nil, nil
}

// mergeInline merges valuesInline into the values file as kustomize does:
// override (the default) lets inline values win, merge lets the file win.
func mergeInline(file []byte, inline map[string]any, how string) (map[string]any, error) {
	if how == valuesMergeReplace {
		return inline, nil
	}
	fileNode, err := kyaml.Parse(string(file))
	if err != nil || fileNode.IsNilOrEmpty() {
		if err != nil && strings.TrimSpace(string(file)) != "" {
			return nil, fmt.Errorf("values file: %w", oneLineErr(err))
		}
		fileNode = kyaml.NewMapRNode(nil)
	}
	inlineNode, err := kyaml.FromMap(inline)
	if err != nil {
		return nil, fmt.Errorf("valuesInline: %w", oneLineErr(err))
	}
	var out *kyaml.RNode
	if how == valuesMergeMerge {
		out, err = merge2.Merge(fileNode, inlineNode.Copy(), kyaml.MergeOptions{})
	} else {
		out, err = merge2.Merge(inlineNode, fileNode.Copy(), kyaml.MergeOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("valuesInline: %w", oneLineErr(err))
	}
	return out.Map()
}

// mergeValues merges src into dst as `helm template -f a -f b` does: maps
// merge key by key, anything else in src replaces dst's.
func mergeValues(dst, src map[string]any) map[string]any {
	for k, v := range src {
		if m, ok := v.(map[string]any); ok {
			if d, ok := dst[k].(map[string]any); ok {
				dst[k] = mergeValues(d, m)
				continue
			}
		}
		dst[k] = v
	}
	return dst
}

// oneLineErr flattens an error's message onto one line.
func oneLineErr(err error) error {
	return &rewordedError{msg: text.OneLine(err.Error()), err: err}
}

// helmCapabilities returns the capabilities a chart renders with: the
// cluster's version and API versions (Helm's defaults without a cluster),
// with the entry's kubeVersion and apiVersions on top.
func (r *renderer) helmCapabilities(h types.HelmChart) (*common.Capabilities, error) {
	base, err := r.clusterCapabilities()
	if err != nil {
		return nil, err
	}
	caps := base.Copy()
	if h.KubeVersion != "" {
		kv, err := common.ParseKubeVersion(h.KubeVersion)
		if err != nil {
			return nil, fmt.Errorf("kubeVersion %q: %w", h.KubeVersion, err)
		}
		caps.KubeVersion = *kv
	}
	if len(h.ApiVersions) > 0 {
		caps.APIVersions = slices.Concat(caps.APIVersions, common.VersionSet(h.ApiVersions))
	}
	return caps, nil
}

// clusterCapabilities reads the cluster's version and API versions once
// per Render.
func (r *renderer) clusterCapabilities() (*common.Capabilities, error) {
	if r.caps != nil {
		return r.caps, nil
	}
	if r.cluster == nil {
		r.caps = common.DefaultCapabilities.Copy()
		return r.caps, nil
	}
	version, err := r.cluster.ServerVersion(r.ctx)
	if err != nil {
		return nil, err
	}
	kv, err := common.ParseKubeVersion(version)
	if err != nil {
		return nil, fmt.Errorf("the API server's version %q: %w", version, err)
	}
	// .Capabilities.KubeVersion.Version is the server's gitVersion, as with
	// helm install; one that is not a semantic version (a server built
	// without version stamps) is normalised, for semverCompare.
	kv.Version = version
	if _, err := semver.NewVersion(version); err != nil {
		kv.Version = kv.String()
	}
	apis, err := r.cluster.APIVersions(r.ctx)
	if err != nil {
		return nil, err
	}
	r.caps = &common.Capabilities{KubeVersion: *kv, APIVersions: apis, HelmVersion: common.DefaultCapabilities.HelmVersion}
	return r.caps, nil
}

// renderTwice prepares a chart (its dependencies, the kubeVersion it
// requires) and renders it twice, to tell non-deterministic fields.
func (r *renderer) renderTwice(c *chart.Chart, vals map[string]any, h types.HelmChart, caps *common.Capabilities) (first, second []helmDoc, err error) {
	helmLogMu.Lock()
	defer helmLogMu.Unlock()
	// Helm logs warnings through the standard logger, with values in
	// them: a library must not print, and a value may be a secret.
	w := log.Writer()
	log.SetOutput(io.Discard)
	defer log.SetOutput(w)

	if err := chartutil.ProcessDependencies(c, vals); err != nil {
		return nil, nil, fmt.Errorf("dependencies: %w", oneLineErr(err))
	}
	if c.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(c.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return nil, nil, fmt.Errorf("the chart requires kubeVersion %s, which is incompatible with Kubernetes %s", c.Metadata.KubeVersion, caps.KubeVersion.Version)
	}
	if first, err = r.renderChart(c, vals, h, caps); err != nil {
		return nil, nil, err
	}
	if second, err = r.renderChart(c, vals, h, caps); err != nil {
		return nil, nil, err
	}
	return first, second, nil
}

// renderChart renders a prepared chart as `helm template` does: CRDs (with
// includeCRDs), then the manifests in Helm's install order, then hooks
// (without skipHooks; test hooks without skipTests). lookup reads the
// cluster when there is one, else finds nothing.
func (r *renderer) renderChart(c *chart.Chart, vals map[string]any, h types.HelmChart, caps *common.Capabilities) ([]helmDoc, error) {
	opts := common.ReleaseOptions{Name: releaseName(c, h), Namespace: releaseNamespace(h), Revision: 1, IsInstall: true}
	values, err := chartvalues.ToRenderValuesWithSchemaValidation(c, vals, opts, caps, false)
	if err != nil {
		return nil, oneLineErr(err)
	}
	var files map[string]string
	if r.cluster != nil {
		files, err = engine.RenderWithClientProvider(ci.Charter(c), values, readOnlyProvider{ctx: r.ctx, cluster: r.cluster})
	} else {
		files, err = engine.Render(c, values)
	}
	if err != nil {
		return nil, oneLineErr(err)
	}
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return nil, oneLineErr(err)
	}
	prefix := c.Name() + "/"
	var docs []helmDoc
	if h.IncludeCRDs {
		for _, crd := range c.CRDObjects() {
			docs = append(docs, helmDoc{template: strings.TrimPrefix(crd.Filename, prefix), content: string(crd.File.Data)})
		}
	}
	for _, m := range manifests {
		docs = append(docs, helmDoc{template: strings.TrimPrefix(m.Name, prefix), content: m.Content})
	}
	if !h.SkipHooks {
		for _, hk := range hooks {
			if h.SkipTests && slices.Contains(hk.Events, release.HookTest) {
				continue
			}
			docs = append(docs, helmDoc{template: strings.TrimPrefix(hk.Path, prefix), content: hk.Manifest})
		}
	}
	return docs, nil
}

// releaseName returns the entry's releaseName, else the chart's name.
// (kustomize has helm generate a new random name on every build, which
// cannot be applied the same way twice.)
func releaseName(c *chart.Chart, h types.HelmChart) string {
	if h.ReleaseName != "" {
		return h.ReleaseName
	}
	return c.Name()
}

// releaseNamespace returns the release namespace of an entry (its own,
// else its kustomization's, set by expandHelmCharts), else default, as
// `helm template` without --namespace.
func releaseNamespace(h types.HelmChart) string {
	if h.Namespace != "" {
		return h.Namespace
	}
	return "default"
}

// unstableFields compares two renders of the same chart document by
// document and returns, per document of a, the fields whose values differ.
func unstableFields(a, b []helmDoc) map[int][]string {
	out := map[int][]string{}
	if len(a) != len(b) {
		for i := range a {
			out[i] = []string{"(the whole object: the chart's output changes between renders)"}
		}
		return out
	}
	for i := range a {
		if a[i].content == b[i].content {
			continue
		}
		var va, vb any
		if sigsyaml.Unmarshal([]byte(a[i].content), &va) != nil || sigsyaml.Unmarshal([]byte(b[i].content), &vb) != nil {
			out[i] = []string{"(the whole document)"}
			continue
		}
		var paths []string
		diffPaths("", va, vb, &paths)
		if len(paths) > 0 {
			sort.Strings(paths)
			out[i] = paths
		}
	}
	return out
}

// diffPaths appends the paths of the leaves where a and b differ.
func diffPaths(prefix string, a, b any, out *[]string) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		for k := range keys {
			diffPaths(prefix+"."+k, av[k], bv[k], out)
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			break
		}
		for i := range av {
			diffPaths(fmt.Sprintf("%s[%d]", prefix, i), av[i], bv[i], out)
		}
		return
	default:
		if fmt.Sprint(a) == fmt.Sprint(b) {
			return
		}
	}
	if prefix == "" {
		prefix = "."
	}
	*out = append(*out, prefix)
}

// chartSourceOf returns the source recorded for an object rendered from a
// chart, from its annotation, and whether it has one.
func (r *renderer) chartSourceOf(ann map[string]string) (helmSource, bool) {
	v, ok := ann[helmSourceAnnotation]
	if !ok {
		return helmSource{}, false
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 || i >= len(r.charts) {
		return helmSource{}, false
	}
	return r.charts[i], true
}
