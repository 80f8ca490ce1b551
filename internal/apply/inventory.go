package apply

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/version"
)

// KEP-3659 (ApplySet) labels and annotations.
const (
	// PartOfLabel marks a member of an ApplySet; its value is the ID.
	PartOfLabel = "applyset.kubernetes.io/part-of"
	// IDLabel marks the ApplySet parent; its value is the ID.
	IDLabel = "applyset.kubernetes.io/id"
	// ToolingAnnotation on the parent names the tool that manages the set,
	// as "name/version".
	ToolingAnnotation = "applyset.kubernetes.io/tooling"
	// ContainsGroupKindsAnnotation on the parent lists the kinds of the
	// members, sorted, as "Kind.group" joined by ",", core kinds as "Kind".
	ContainsGroupKindsAnnotation = "applyset.kubernetes.io/contains-group-kinds"
	// AdditionalNamespacesAnnotation on the parent lists, sorted and joined
	// by ",", the namespaces of members other than the parent's own.
	AdditionalNamespacesAnnotation = "applyset.kubernetes.io/additional-namespaces"
)

// ToolingName is the name part of the parent's tooling annotation; a parent
// whose tooling names another tool is not adopted.
const ToolingName = "snapply"

// Annotations of the parent that snapply keeps for itself.
const (
	// AnnotationPrefix starts every key of Inventory.Annotations.
	AnnotationPrefix = "snapply.dev/"
	// LastCommitAnnotation is the git commit last applied.
	LastCommitAnnotation = AnnotationPrefix + "last-commit"
	// LastRunAnnotation identifies the run that applied it (a run URL in
	// GitHub Actions).
	LastRunAnnotation = AnnotationPrefix + "last-run"
	// LastSnapshotAnnotation is the ID, in the store, of the snapshot taken
	// after the last apply.
	LastSnapshotAnnotation = AnnotationPrefix + "last-snapshot"
	// LastAppliedAtAnnotation is when the last apply ended (RFC 3339).
	LastAppliedAtAnnotation = AnnotationPrefix + "last-applied-at"
	// LastRunIDAnnotation is the GitHub Actions run ID of the last apply;
	// run IDs grow, so a run with a smaller ID is a re-run of an older one.
	LastRunIDAnnotation = AnnotationPrefix + "last-run-id"
)

// membersListConcurrency bounds the LISTs Members runs at once.
const membersListConcurrency = 8

var secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

// Inventory is snapply's record, in the cluster, of which objects it manages
// for one --name: a KEP-3659 ApplySet whose parent is a Secret named Name in
// Namespace. The Secret holds no data, only labels and annotations.
type Inventory struct {
	// Name and Namespace are the parent Secret's.
	Name, Namespace string
	// ID is the ApplySet ID (ApplySetID), the value of every member's
	// PartOfLabel.
	ID string
	// Tooling is the parent's ToolingAnnotation: "snapply/<version>".
	Tooling string
	// GroupKinds are the kinds of the members, sorted.
	GroupKinds []schema.GroupKind
	// Namespaces are the namespaces of the members, sorted. As loaded, they
	// always include the parent's own namespace, which KEP-3659 puts in
	// every namespaced parent's scope.
	Namespaces []string
	// Annotations are the parent's snapply.dev/* annotations (the
	// Last*Annotation keys); never nil after LoadInventory.
	Annotations map[string]string
	// Exists says whether the parent Secret exists in the cluster.
	Exists bool
}

// ApplySetID returns the KEP-3659 ID of the ApplySet whose parent is the
// Secret name in namespace, computed as kubectl computes it:
// "applyset-" + base64url(sha256("<name>.<namespace>.<kind>.<group>")) +
// "-v1", unpadded, with kind Secret and the empty core group.
func ApplySetID(name, namespace string) string {
	sum := sha256.Sum256([]byte(strings.Join([]string{name, namespace, "Secret", ""}, ".")))
	return "applyset-" + base64.RawURLEncoding.EncodeToString(sum[:]) + "-v1"
}

// LoadInventory reads the parent Secret name in namespace. A missing parent
// gives an Inventory with Exists false and no error. A Secret that is not an
// ApplySet parent, or whose tooling is not snapply, is refused: snapply never
// adopts a set that another tool manages. Only the Secret's metadata is
// read, never its data.
func LoadInventory(ctx context.Context, c *kube.Client, name, namespace string) (*Inventory, error) {
	inv := &Inventory{
		Name:        name,
		Namespace:   namespace,
		ID:          ApplySetID(name, namespace),
		Tooling:     tooling(),
		Annotations: map[string]string{},
	}
	mc, err := metadata.NewForConfig(c.Config)
	if err != nil {
		return nil, fmt.Errorf("inventory %s: %w", inv, err)
	}
	parent, err := mc.Resource(secretGVR).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return inv, nil
	}
	if err != nil {
		return nil, fmt.Errorf("inventory %s: %w", inv, kube.Unreachable(c.Config.Host, err))
	}
	labels, annotations := parent.GetLabels(), parent.GetAnnotations()
	id, ok := labels[IDLabel]
	if !ok {
		return nil, fmt.Errorf("inventory %s: secret exists and is not an ApplySet parent (no %s label), refusing to adopt it", inv, IDLabel)
	}
	tool, ok := annotations[ToolingAnnotation]
	if !ok {
		return nil, fmt.Errorf("inventory %s: ApplySet parent has no %s annotation, refusing to adopt it", inv, ToolingAnnotation)
	}
	if toolingBase(tool) != ToolingName {
		return nil, fmt.Errorf("inventory %s: owned by %s (%s), refusing to adopt it", inv, tool, ToolingAnnotation)
	}
	if id != inv.ID {
		return nil, fmt.Errorf("inventory %s: %s label is %q, want %q (a copy of another inventory?), refusing to adopt it", inv, IDLabel, id, inv.ID)
	}
	inv.Exists = true
	inv.Tooling = tool
	inv.GroupKinds = parseGroupKinds(annotations[ContainsGroupKindsAnnotation])
	inv.Namespaces = sortedSet(append(splitList(annotations[AdditionalNamespacesAnnotation]), namespace))
	for k, v := range annotations {
		if strings.HasPrefix(k, AnnotationPrefix) {
			inv.Annotations[k] = v
		}
	}
	return inv, nil
}

// String names the parent as "namespace/name".
func (inv *Inventory) String() string {
	return inv.Namespace + "/" + inv.Name
}

// Label sets the PartOfLabel on a desired object, in place, before it is
// applied; other labels are kept.
func (inv *Inventory) Label(u *unstructured.Unstructured) {
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[PartOfLabel] = inv.ID
	u.SetLabels(labels)
}

// Members lists the live objects labelled PartOfLabel=ID, for every kind in
// GroupKinds: namespaced kinds in every namespace of Namespaces and the
// parent's, cluster-scoped kinds cluster-wide. Each LIST uses the label
// selector, so unlabelled objects are never returned. Kinds the server no
// longer serves (a deleted CRD) are skipped. The result is sorted by group,
// kind, namespace and name.
func (inv *Inventory) Members(ctx context.Context, c *kube.Client) ([]*unstructured.Unstructured, error) {
	namespaces := sortedSet(append(slices.Clone(inv.Namespaces), inv.Namespace))
	selector := PartOfLabel + "=" + inv.ID

	type list struct {
		m  *meta.RESTMapping
		ns string
	}
	var lists []list
	for _, gk := range inv.GroupKinds {
		m, err := c.Mapping(gk.WithVersion(""))
		if meta.IsNoMatchError(err) {
			continue // no longer served: nothing of that kind can be live
		}
		if err != nil {
			return nil, fmt.Errorf("inventory %s: members: %s: %w", inv, gk.String(), err)
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			lists = append(lists, list{m: m})
			continue
		}
		for _, ns := range namespaces {
			lists = append(lists, list{m: m, ns: ns})
		}
	}

	found := make([][]*unstructured.Unstructured, len(lists))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(membersListConcurrency)
	for i, l := range lists {
		g.Go(func() error {
			items, err := listAll(gctx, c, l.m, l.ns, selector)
			if err != nil {
				where := l.m.GroupVersionKind.GroupKind().String()
				if l.ns != "" {
					where += " -n " + l.ns
				}
				return fmt.Errorf("inventory %s: members: list %s: %w", inv, where, err)
			}
			found[i] = items
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := slices.Concat(found...)
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		ga, gb := a.GroupVersionKind(), b.GroupVersionKind()
		return cmp.Or(
			cmp.Compare(ga.Group, gb.Group), cmp.Compare(ga.Kind, gb.Kind),
			cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()),
		)
	})
	return out, nil
}

// listAll lists, page by page, the objects of m in ns (all of them for a
// cluster-scoped kind) that match selector. A resource that has disappeared
// since discovery gives nothing.
//
// It reads metadata only (PartialObjectMetadata): members are identified,
// not read whole; the snapshot holds their content.
func listAll(ctx context.Context, c *kube.Client, m *meta.RESTMapping, ns, selector string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{LabelSelector: selector, Limit: 500}
	ri := c.Metadata.Resource(m.Resource)
	for {
		var l *metav1.PartialObjectMetadataList
		var err error
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			l, err = ri.Namespace(ns).List(ctx, opts)
		} else {
			l, err = ri.List(ctx, opts)
		}
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, kube.Unreachable(c.Config.Host, err)
		}
		for i := range l.Items {
			md := l.Items[i].ObjectMeta
			item := &unstructured.Unstructured{Object: map[string]any{}}
			item.SetGroupVersionKind(m.GroupVersionKind)
			item.SetName(md.Name)
			item.SetNamespace(md.Namespace)
			item.SetLabels(md.Labels)
			item.SetUID(md.UID)
			item.SetResourceVersion(md.ResourceVersion)
			out = append(out, item)
		}
		if l.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = l.GetContinue()
	}
}

// Save writes the parent Secret with server-side apply, as field manager
// snapply with force (the parent is snapply's): the IDLabel; the tooling
// "snapply/<version>"; the member kinds and the member namespaces other than
// the parent's, sorted; and Annotations, whose keys must start with
// AnnotationPrefix. Annotations that an earlier Save wrote and this one does
// not are removed. The Secret holds no data. The inventory namespace must
// exist: Save does not create it.
func (inv *Inventory) Save(ctx context.Context, c *kube.Client) error {
	annotations := map[string]string{}
	for k, v := range inv.Annotations {
		if !strings.HasPrefix(k, AnnotationPrefix) {
			return fmt.Errorf("inventory %s: annotation %q does not start with %s", inv, k, AnnotationPrefix)
		}
		annotations[k] = v
	}
	inv.Tooling = tooling()
	inv.ID = ApplySetID(inv.Name, inv.Namespace)
	annotations[ToolingAnnotation] = inv.Tooling
	annotations[ContainsGroupKindsAnnotation] = FormatGroupKinds(inv.GroupKinds)
	var others []string
	for _, ns := range inv.Namespaces {
		if ns != inv.Namespace {
			others = append(others, ns)
		}
	}
	annotations[AdditionalNamespacesAnnotation] = strings.Join(sortedSet(others), ",")

	parent := &unstructured.Unstructured{}
	parent.SetAPIVersion("v1")
	parent.SetKind("Secret")
	parent.SetName(inv.Name)
	parent.SetNamespace(inv.Namespace)
	parent.SetLabels(map[string]string{IDLabel: inv.ID})
	parent.SetAnnotations(annotations)

	m, err := c.Mapping(parent.GroupVersionKind())
	if err != nil {
		return fmt.Errorf("inventory %s: %w", inv, err)
	}
	_, err = c.Apply(ctx, parent, m, kube.ApplyOptions{FieldManager: kube.FieldManager, Force: true})
	if isNamespaceNotFound(err) {
		return fmt.Errorf("inventory %s: inventory namespace %q does not exist: %w", inv, inv.Namespace, err)
	}
	if err != nil {
		return fmt.Errorf("inventory %s: save: %w", inv, err)
	}
	inv.Exists = true
	return nil
}

// isNamespaceNotFound reports whether err is the API server's answer to a
// write into a namespace that does not exist. Creating a Secret by apply
// can find nothing else missing, and asking this way needs no permission on
// Namespaces.
func isNamespaceNotFound(err error) bool {
	if !apierrors.IsNotFound(err) {
		return false
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d != nil && d.Kind == "namespaces"
}

// FormatGroupKinds formats kinds as the ContainsGroupKindsAnnotation holds
// them: sorted, without duplicates, "Kind.group" joined by ",", core kinds as
// "Kind".
func FormatGroupKinds(gks []schema.GroupKind) string {
	s := make([]string, 0, len(gks))
	for _, gk := range gks {
		if gk.Kind != "" {
			s = append(s, gk.String())
		}
	}
	return strings.Join(sortedSet(s), ",")
}

// parseGroupKinds parses a ContainsGroupKindsAnnotation value.
func parseGroupKinds(s string) []schema.GroupKind {
	var out []schema.GroupKind
	for _, item := range splitList(s) {
		out = append(out, schema.ParseGroupKind(item))
	}
	slices.SortFunc(out, func(a, b schema.GroupKind) int { return cmp.Compare(a.String(), b.String()) })
	return out
}

// splitList splits a comma-separated annotation value, dropping blanks.
func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// sortedSet returns s sorted, without duplicates and empty strings.
func sortedSet(s []string) []string {
	s = slices.DeleteFunc(slices.Clone(s), func(x string) bool { return x == "" })
	slices.Sort(s)
	return slices.Compact(s)
}

// tooling is the ToolingAnnotation value this binary writes.
func tooling() string {
	return ToolingName + "/" + version.Version
}

// toolingBase returns the tool name of a ToolingAnnotation value: everything
// before its last "/" (kubectl's rule), or the whole value without one.
func toolingBase(s string) string {
	if i := strings.LastIndex(s, "/"); i >= 0 {
		return s[:i]
	}
	return s
}
