package plan

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/graph"
	"github.com/snapply/snapply/internal/object"
)

// AnalyzeOptions controls Analyze.
type AnalyzeOptions struct {
	// Schemas gives the server's types for structural diffs; nil compares
	// with types deduced from the objects (lists compared whole).
	Schemas Schemas
	// Live is the snapshot the plan was computed against.
	Live map[object.Key]*unstructured.Unstructured
	// Covered reports whether the snapshot holds every object of kind gk
	// in namespace ns ("" for cluster-scoped kinds): only references into
	// covered kinds and namespaces are checked. Nil covers everything.
	Covered func(gk schema.GroupKind, ns string) bool
	// Redact replaces Secret values before fields are compared; nil
	// leaves every Secret field value out of Fields.
	Redact func(*unstructured.Unstructured) *unstructured.Unstructured
}

// Analyze adds to a computed plan what a reviewer needs first: the field
// diff of every update (list items matched by key), the risks of every
// change, and the image inventory. It is a pass over the plan, separate
// from the dry runs: it reads the objects Compute left in Change.Before and
// Change.After, and the snapshot, and asks the server for nothing but its
// schemas.
func Analyze(p *Plan, opts AnalyzeOptions) {
	a := &analysis{p: p, opts: opts, byKey: make(map[object.Key]int, len(p.Changes))}
	for i, c := range p.Changes {
		a.byKey[c.Ref.Key()] = i
	}
	a.after = a.afterState()
	a.g = graph.New(a.after)
	a.g.Covered = opts.Covered
	for i := range p.Changes {
		c := &p.Changes[i]
		c.Fields, c.Risks = nil, nil // analysing twice gives the same plan
		if c.Action == Update {
			c.Fields = a.fields(c)
		}
		a.risks(c)
	}
	a.brokenRefs()
	for i := range p.Changes {
		p.Changes[i].Risks = sortRisks(p.Changes[i].Risks)
	}
	p.Images = Inventory(p.Changes)
}

type analysis struct {
	p     *Plan
	opts  AnalyzeOptions
	byKey map[object.Key]int
	after []*unstructured.Unstructured
	g     *graph.Graph
}

// afterState returns the snapshot with the plan applied: creates, updates
// and pending objects as apply leaves them, deletes gone; conflicts and
// invalid objects are not written, so they stay as they are.
func (a *analysis) afterState() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, 0, len(a.opts.Live)+len(a.p.Changes))
	for k, u := range a.opts.Live {
		if _, planned := a.byKey[k]; !planned {
			out = append(out, u)
		}
	}
	for _, c := range a.p.Changes {
		switch {
		case c.Action == Delete:
		case c.Action.IsError():
			if c.Before != nil {
				out = append(out, c.Before)
			}
		case c.After != nil:
			out = append(out, c.After)
		case c.Before != nil:
			out = append(out, c.Before)
		}
	}
	return out
}

// fields returns the field diff of an update, Secret values redacted.
func (a *analysis) fields(c *Change) []FieldDiff {
	before, after := c.Before, c.After
	secret := c.Ref.Group == "" && c.Ref.Kind == "Secret"
	if a.opts.Redact != nil {
		before, after = a.opts.Redact(before), a.opts.Redact(after)
	}
	fs := FieldDiffs(a.opts.Schemas, before, after)
	if secret && a.opts.Redact == nil {
		for i := range fs {
			if strings.HasPrefix(fs[i].Path, "data") || strings.HasPrefix(fs[i].Path, "stringData") || strings.HasPrefix(fs[i].Path, "metadata.annotations") {
				fs[i].Before, fs[i].After = "", ""
			}
		}
	}
	return fs
}

func (c *Change) flag(kind RiskKind, format string, args ...any) {
	c.Risks = append(c.Risks, Risk{Kind: kind, Message: fmt.Sprintf(format, args...)})
}

// risks flags the risks of one change, broken references aside.
func (a *analysis) risks(c *Change) {
	for _, w := range c.Warnings {
		c.flag(RiskWarning, "%s", w)
	}
	if c.Action == Invalid && isImmutable(c.Message) {
		c.flag(RiskReplace, "the server refuses to change an immutable field: apply will fail; delete and re-create %s (or give it a new name), knowing what that deletes", c.Ref)
	}
	if c.Action == Delete {
		a.deleteRisks(c)
		return
	}
	if c.Action.IsError() && c.Action != Invalid {
		return
	}
	after := c.After
	if after == nil {
		return
	}
	before := c.Before
	switch gk := c.Ref.GroupKind(); gk {
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		if before != nil && volumeClaimTemplatesChange(before, after, c.Action == Invalid) {
			c.flag(RiskDataLoss, "volumeClaimTemplates change: the server cannot update them in place; re-creating the StatefulSet gives new claims, and deleting the old ones loses their data")
		}
	case schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:
		if c.Action != Invalid {
			roleRisks(c, before, after)
		}
	case schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}, schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:
		if c.Action != Invalid {
			a.bindingRisks(c, before, after)
		}
	case schema.GroupKind{Kind: "Service"}:
		if c.Action != Invalid {
			serviceExposure(c, before, after)
		}
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}:
		if c.Action != Invalid {
			ingressExposure(c, before, after)
		}
	case schema.GroupKind{Kind: "ConfigMap"}, schema.GroupKind{Kind: "Secret"}:
		if c.Action == Update {
			a.noRestart(c, before, after)
		}
	}
	if c.Action == Update {
		imageRisks(c, before, after)
	}
}

// isImmutable reports whether the server's message says a field cannot
// change.
func isImmutable(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "field is immutable") || strings.Contains(m, "updates to statefulset spec for fields other than")
}

// dataLossKinds are the kinds whose delete loses data.
var dataLossKinds = map[schema.GroupKind]string{
	{Kind: "PersistentVolumeClaim"}: "deleting a PersistentVolumeClaim deletes its volume's data when the reclaim policy is Delete",
	{Kind: "Namespace"}:             "deleting a Namespace deletes every object in it",
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: "deleting a CustomResourceDefinition deletes every custom resource of its kind",
	{Group: "apps", Kind: "StatefulSet"}:                              "deleting a StatefulSet deletes its pods; its claims stay only when its retention policy retains them",
}

func (a *analysis) deleteRisks(c *Change) {
	if why, ok := dataLossKinds[c.Ref.GroupKind()]; ok {
		c.flag(RiskDataLoss, "%s", why)
	}
	switch c.Ref.GroupKind() {
	case schema.GroupKind{Kind: "PersistentVolumeClaim"}:
		for _, e := range a.g.To(c.Ref) {
			if e.Kind == graph.Volume {
				c.flag(RiskDataLoss, "%s still mounts it (%s)", e.From, e.Field)
			}
		}
	case schema.GroupKind{Kind: "Service"}:
		sel, ok := graph.ServiceSelector(c.Before)
		if !ok {
			return
		}
		for _, n := range a.templatesIn(c.Ref.Namespace) {
			lbls, _ := graph.PodTemplateLabels(n.Obj)
			if sel.Matches(labels.Set(lbls)) {
				c.flag(RiskDataLoss, "%s still serves it: its pods stop receiving the Service's traffic", n.Ref)
			}
		}
	}
}

// templatesIn returns the objects of the after state in ns that hold a pod
// template and are not controlled by another (those speak for them).
func (a *analysis) templatesIn(ns string) []*graph.Node {
	var out []*graph.Node
	for _, n := range a.g.Nodes {
		if n.Ref.Namespace != ns || controlled(n.Obj) {
			continue
		}
		if _, ok := graph.PodTemplateLabels(n.Obj); ok {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return object.Compare(out[i].Ref, out[j].Ref) < 0 })
	return out
}

func controlled(u *unstructured.Unstructured) bool {
	for _, or := range u.GetOwnerReferences() {
		if or.Controller != nil && *or.Controller {
			return true
		}
	}
	return false
}

// volumeClaimTemplatesChange reports whether the claim templates differ.
// Against a desired object (loose, for an invalid change) only the names,
// storage classes and requested sizes are compared, which the server does
// not default.
func volumeClaimTemplatesChange(before, after *unstructured.Unstructured, loose bool) bool {
	b, _, _ := unstructured.NestedSlice(before.Object, "spec", "volumeClaimTemplates")
	a, _, _ := unstructured.NestedSlice(after.Object, "spec", "volumeClaimTemplates")
	if !loose {
		return !equality.Semantic.DeepEqual(claimShape(b, false), claimShape(a, false))
	}
	return !equality.Semantic.DeepEqual(claimShape(b, true), claimShape(a, true))
}

func claimShape(list []any, loose bool) []any {
	if !loose {
		out := make([]any, len(list))
		for i, item := range list {
			m, _ := item.(map[string]any)
			spec, _ := m["spec"].(map[string]any)
			name, _, _ := unstructured.NestedString(m, "metadata", "name")
			out[i] = map[string]any{"name": name, "spec": spec}
		}
		return out
	}
	out := make([]any, len(list))
	for i, item := range list {
		m, _ := item.(map[string]any)
		name, _, _ := unstructured.NestedString(m, "metadata", "name")
		size, _, _ := unstructured.NestedString(m, "spec", "resources", "requests", "storage")
		class, _, _ := unstructured.NestedString(m, "spec", "storageClassName")
		out[i] = name + "|" + size + "|" + class
	}
	return out
}

// rules returns the grants of a Role or ClusterRole as
// "verb resource.group" and "verb nonResourceURL" strings.
func rules(u *unstructured.Unstructured) map[string]bool {
	out := map[string]bool{}
	if u == nil {
		return out
	}
	rs, _, _ := unstructured.NestedSlice(u.Object, "rules")
	for _, r := range rs {
		m, _ := r.(map[string]any)
		verbs := strs(m["verbs"])
		groups := strs(m["apiGroups"])
		for _, v := range verbs {
			for _, g := range groups {
				for _, res := range strs(m["resources"]) {
					name := res
					if g != "" {
						name += "." + g
					}
					out[v+" "+name] = true
				}
			}
			for _, url := range strs(m["nonResourceURLs"]) {
				out[v+" "+url] = true
			}
		}
	}
	return out
}

func strs(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func hasWildcard(grants map[string]bool) bool {
	for g := range grants {
		if strings.Contains(g, "*") {
			return true
		}
	}
	return false
}

func roleRisks(c *Change, before, after *unstructured.Unstructured) {
	ga := rules(after)
	if before == nil {
		if hasWildcard(ga) {
			c.flag(RiskRBAC, "new %s grants wildcards: %s", c.Ref.Kind, wildcards(ga))
		}
		return
	}
	gb := rules(before)
	var gained []string
	for g := range ga {
		if !gb[g] {
			gained = append(gained, g)
		}
	}
	if len(gained) == 0 {
		return
	}
	sort.Strings(gained)
	const maxShown = 8
	shown := gained
	more := ""
	if len(shown) > maxShown {
		shown, more = shown[:maxShown], fmt.Sprintf(" and %d more", len(gained)-maxShown)
	}
	c.flag(RiskRBAC, "gains %s%s", strings.Join(shown, ", "), more)
}

func wildcards(grants map[string]bool) string {
	var out []string
	for g := range grants {
		if strings.Contains(g, "*") {
			out = append(out, g)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

func (a *analysis) bindingRisks(c *Change, before, after *unstructured.Unstructured) {
	role, _, _ := unstructured.NestedString(after.Object, "roleRef", "name")
	kind, _, _ := unstructured.NestedString(after.Object, "roleRef", "kind")
	if kind != "ClusterRole" {
		return
	}
	newSubjects := subjects(after)
	if before != nil {
		oldRole, _, _ := unstructured.NestedString(before.Object, "roleRef", "name")
		if oldRole == role {
			old := subjects(before)
			newSubjects = slices.DeleteFunc(newSubjects, func(s string) bool { return slices.Contains(old, s) })
		}
	}
	if len(newSubjects) == 0 {
		return
	}
	why := ""
	if role == "cluster-admin" {
		why = "cluster-admin"
	} else if n := a.g.Node(object.Ref{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role}); n != nil && hasWildcard(rules(n.Obj)) {
		why = "ClusterRole " + role + ", which grants wildcards (" + wildcards(rules(n.Obj)) + ")"
	}
	if why != "" {
		c.flag(RiskRBAC, "binds %s to %s", strings.Join(newSubjects, ", "), why)
	}
}

func subjects(u *unstructured.Unstructured) []string {
	ss, _, _ := unstructured.NestedSlice(u.Object, "subjects")
	var out []string
	for _, s := range ss {
		m, _ := s.(map[string]any)
		kind, _ := m["kind"].(string)
		name, _ := m["name"].(string)
		ns, _ := m["namespace"].(string)
		id := kind + " " + name
		if ns != "" {
			id += " -n " + ns
		}
		out = append(out, id)
	}
	return out
}

func serviceExposure(c *Change, before, after *unstructured.Unstructured) {
	t, _, _ := unstructured.NestedString(after.Object, "spec", "type")
	if t != "LoadBalancer" && t != "NodePort" {
		return
	}
	if before != nil {
		old, _, _ := unstructured.NestedString(before.Object, "spec", "type")
		if old == "LoadBalancer" || (old == "NodePort" && t == "NodePort") {
			return
		}
	}
	where := "on a port of every node"
	if t == "LoadBalancer" {
		where = "through a load balancer, often on the internet"
	}
	c.flag(RiskExposure, "a %s Service exposes its pods outside the cluster, %s", t, where)
}

func hosts(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	rs, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	var out []string
	for _, r := range rs {
		m, _ := r.(map[string]any)
		h, _ := m["host"].(string)
		if h == "" {
			h = "*"
		}
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "defaultBackend"); ok && !slices.Contains(out, "*") {
		out = append(out, "*")
	}
	return out
}

func ingressExposure(c *Change, before, after *unstructured.Unstructured) {
	old := hosts(before)
	var added []string
	for _, h := range hosts(after) {
		if !slices.Contains(old, h) {
			added = append(added, h)
		}
	}
	if len(added) > 0 {
		sort.Strings(added)
		c.flag(RiskExposure, "new Ingress host %s (\"*\" is every host)", strings.Join(added, ", "))
	}
}

// imageRisks flags images that move to latest, to no tag, or to another
// registry.
func imageRisks(c *Change, before, after *unstructured.Unstructured) {
	old, cur := Images(before), Images(after)
	names := make([]string, 0, len(cur))
	for n := range cur {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		from, to := old[n], cur[n]
		if from == "" || from == to {
			continue
		}
		fr, _, _ := splitImage(from)
		tr, tt, td := splitImage(to)
		switch {
		case td == "" && tt == "latest":
			c.flag(RiskImage, "container %s moves from %s to the latest tag, which changes under it: pin a version or digest", n, from)
		case td == "" && tt == "":
			c.flag(RiskImage, "container %s moves from %s to %s, without a tag (latest): pin a version or digest", n, from, to)
		}
		if fr != tr {
			c.flag(RiskImage, "container %s moves to another registry: %s -> %s", n, fr, tr)
		}
	}
}

// splitImage splits an image reference into its registry (docker.io when
// none is named), tag and digest.
func splitImage(ref string) (registry, tag, digest string) {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref, digest = ref[:i], ref[i+1:]
	}
	name := ref
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		name, tag = ref[:i], ref[i+1:]
	}
	registry = "docker.io"
	if i := strings.Index(name, "/"); i >= 0 {
		first := name[:i]
		if strings.ContainsAny(first, ".:") || first == "localhost" {
			registry = first
		}
	}
	return registry, tag, digest
}

// consumerKinds are the edges through which a workload takes a
// ConfigMap's or Secret's values.
var consumerKinds = []graph.EdgeKind{graph.EnvFrom, graph.EnvKey, graph.Volume}

// noRestart flags a ConfigMap or Secret whose data changes while the pod
// templates of the workloads that consume it do not.
func (a *analysis) noRestart(c *Change, before, after *unstructured.Unstructured) {
	same := true
	for _, f := range []string{"data", "binaryData", "stringData"} {
		if !equality.Semantic.DeepEqual(before.Object[f], after.Object[f]) {
			same = false
		}
	}
	if same {
		return
	}
	seen := map[object.Key]bool{}
	for _, e := range a.g.To(c.Ref) {
		if !slices.Contains(consumerKinds, e.Kind) || seen[e.From.Key()] {
			continue
		}
		seen[e.From.Key()] = true
		if i, ok := a.byKey[e.From.Key()]; ok {
			w := a.p.Changes[i]
			if w.Before == nil || w.After == nil || !equality.Semantic.DeepEqual(graph.PodTemplate(w.Before), graph.PodTemplate(w.After)) {
				continue // created, or restarted by its template change
			}
		}
		how := "env"
		if e.Kind == graph.Volume {
			how = "a volume"
		}
		c.flag(RiskNoRestart, "%s consumes it through %s and its pod template does not change: its pods keep the old values until they restart (kubectl rollout restart, or put a hash of the data in a pod template annotation)", e.From, how)
	}
}

// brokenRefs flags the references that point at nothing once the plan is
// applied: on the change of the object that refers, when the plan holds
// it; else on the delete that breaks it.
func (a *analysis) brokenRefs() {
	for _, b := range a.g.Broken() {
		if i, ok := a.byKey[b.From.Key()]; ok && a.p.Changes[i].Action != Delete {
			a.p.Changes[i].flag(RiskBrokenRef, "%s", b.Message())
			continue
		}
		if b.Kind == graph.Selects {
			continue
		}
		if i, ok := a.byKey[b.To.Key()]; ok && a.p.Changes[i].Action == Delete {
			a.p.Changes[i].flag(RiskBrokenRef, "%s", b.Message())
		}
	}
}
