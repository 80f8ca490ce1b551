// Package object holds the identity of a Kubernetes object as snapply sees
// it, and the rendered object with the place in git it came from. Every
// other package speaks in these types.
package object

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Ref names an object. Its identity is (Group, Kind, Namespace, Name); the
// Version says which API version the object was read or written with and is
// not part of the identity (see Key).
type Ref struct {
	Group     string `json:"group"`
	Version   string `json:"version"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Key is the identity of an object: a Ref without its version. Use it as a
// map key.
type Key struct {
	Group     string
	Kind      string
	Namespace string
	Name      string
}

// RefOf returns the Ref of u.
func RefOf(u *unstructured.Unstructured) Ref {
	gvk := u.GroupVersionKind()
	return Ref{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
}

// Key returns the identity of r.
func (r Ref) Key() Key {
	return Key{Group: r.Group, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
}

// GroupKind returns the group and kind of r.
func (r Ref) GroupKind() schema.GroupKind { return schema.GroupKind{Group: r.Group, Kind: r.Kind} }

// GroupVersionKind returns the group, version and kind of r.
func (r Ref) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: r.Group, Version: r.Version, Kind: r.Kind}
}

// APIVersion returns "group/version", or "version" for the core group.
func (r Ref) APIVersion() string {
	return r.GroupVersionKind().GroupVersion().String()
}

// String prints r the way kubectl does: "deployment.apps/web -n prod",
// "configmap/settings -n prod", "namespace/prod".
func (r Ref) String() string {
	return r.Key().String()
}

// String prints k the way kubectl does: "deployment.apps/web -n prod".
func (k Key) String() string {
	var b strings.Builder
	b.WriteString(strings.ToLower(k.Kind))
	if k.Group != "" {
		b.WriteByte('.')
		b.WriteString(k.Group)
	}
	b.WriteByte('/')
	b.WriteString(k.Name)
	if k.Namespace != "" {
		b.WriteString(" -n ")
		b.WriteString(k.Namespace)
	}
	return b.String()
}

// Compare orders refs by namespace, group, kind and name, so that listings
// group the objects of one namespace together and cluster-scoped objects
// come first.
func Compare(a, b Ref) int {
	return cmp.Or(
		cmp.Compare(a.Namespace, b.Namespace),
		cmp.Compare(a.Group, b.Group),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Name, b.Name),
	)
}

// Selector picks objects out of a set by a user-typed reference. An empty
// Group matches any group when the kind was typed without one; Kind matches
// case-insensitively, as kubectl does.
type Selector struct {
	Group     string
	AnyGroup  bool
	Kind      string
	Namespace string
	Name      string
}

// ParseSelector parses the forms a user types:
//
//	deployment.apps/web -n prod   kubectl style, group after the first dot
//	deployment/web -n prod        kind without group: any group
//	Deployment/prod/web           Kind/namespace/name
//	Namespace/prod                Kind/name (cluster-scoped)
//	apps/v1/Deployment/prod/web   the same with group/version in front
//	v1/ConfigMap/prod/settings    core group: the version alone
//	v1/Namespace/prod             core, cluster-scoped
func ParseSelector(s string) (Selector, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Selector{}, fmt.Errorf("empty object reference")
	}
	fields := strings.Fields(s)
	var ns string
	switch {
	case len(fields) == 3 && (fields[1] == "-n" || fields[1] == "--namespace"):
		ns = fields[2]
	case len(fields) == 1:
	default:
		return Selector{}, fmt.Errorf("object reference %q: want KIND[.GROUP]/NAME [-n NAMESPACE] or Kind/namespace/name", s)
	}
	parts := strings.Split(fields[0], "/")
	for _, p := range parts {
		if p == "" {
			return Selector{}, fmt.Errorf("object reference %q: empty part", s)
		}
	}
	var sel Selector
	withVersion := false
	switch {
	case len(parts) == 2: // kind[.group]/name
		sel.Kind, sel.Name = parts[0], parts[1]
	case len(parts) == 3 && isVersion(parts[0]): // v1/Kind/name (core, cluster-scoped)
		sel.Kind, sel.Name, withVersion = parts[1], parts[2], true
	case len(parts) == 3: // Kind/namespace/name
		if ns != "" {
			return Selector{}, fmt.Errorf("object reference %q: namespace given twice", s)
		}
		sel.Kind, ns, sel.Name = parts[0], parts[1], parts[2]
	case len(parts) == 4 && isVersion(parts[1]): // group/version/Kind/name
		sel.Group, sel.Kind, sel.Name, withVersion = parts[0], parts[2], parts[3], true
	case len(parts) == 4 && isVersion(parts[0]): // v1/Kind/namespace/name (core)
		if ns != "" {
			return Selector{}, fmt.Errorf("object reference %q: namespace given twice", s)
		}
		sel.Kind, ns, sel.Name, withVersion = parts[1], parts[2], parts[3], true
	case len(parts) == 5 && isVersion(parts[1]): // group/version/Kind/namespace/name
		if ns != "" {
			return Selector{}, fmt.Errorf("object reference %q: namespace given twice", s)
		}
		sel.Group, sel.Kind, ns, sel.Name, withVersion = parts[0], parts[2], parts[3], parts[4], true
	default:
		return Selector{}, fmt.Errorf("object reference %q: want KIND[.GROUP]/NAME [-n NAMESPACE] or Kind/namespace/name", s)
	}
	if !withVersion {
		if kind, group, ok := strings.Cut(sel.Kind, "."); ok {
			sel.Kind, sel.Group = kind, group
		} else {
			sel.AnyGroup = true
		}
	}
	sel.Namespace = ns
	return sel, nil
}

// isVersion reports whether s looks like an API version: v1, v2beta1.
func isVersion(s string) bool {
	return versionPattern.MatchString(s)
}

var versionPattern = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)

// Matches reports whether r is the object s names.
func (s Selector) Matches(r Ref) bool {
	return strings.EqualFold(s.Kind, r.Kind) &&
		(s.AnyGroup || s.Group == r.Group) &&
		s.Namespace == r.Namespace &&
		s.Name == r.Name
}

// Source is where a rendered object came from: a file relative to the
// rendered root (or the kustomization that produced it) and, for plain YAML,
// the 1-based line its document starts on. An object rendered from a Helm
// chart names the kustomization and the line of its helmCharts entry in
// File and Line, and the chart and template in Chart and Template.
type Source struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	// Chart is "name@version" of the Helm chart the object was rendered
	// from; empty for anything else.
	Chart string `json:"chart,omitempty"`
	// Template is the chart's file the object came from, relative to the
	// chart ("templates/deployment.yaml", "crds/crd.yaml"; a subchart's as
	// "charts/sub/templates/x.yaml").
	Template string `json:"template,omitempty"`
}

// String prints "file:line", or "file" when the line is unknown; for an
// object from a chart, "chart@version template (file:line)".
func (s Source) String() string {
	loc := s.File
	if s.Line > 0 {
		loc = fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	if s.Chart == "" {
		return loc
	}
	chart := s.Chart
	if s.Template != "" {
		chart += " " + s.Template
	}
	if loc == "" {
		return chart
	}
	return chart + " (" + loc + ")"
}

// Object is one rendered, desired object.
type Object struct {
	Ref    Ref
	Source Source
	Obj    *unstructured.Unstructured
	// Unstable lists the fields (".data.password") whose value differs
	// between two renders of the same input: a Helm chart that uses
	// randAlphaNum or genCA. Applying such an object changes them every
	// time.
	Unstable []string
	// DefaultNamespace, when set, is the namespace this object goes to
	// if it is namespaced and names none: a Helm chart's release
	// namespace, as `helm install` does. Otherwise the run's default
	// namespace applies.
	DefaultNamespace string
	// NamespaceByKustomize is set when a kustomization gave the object
	// its namespace (its `namespace:` field; the source document names
	// none). Kustomize sets it on every kind it does not know to be
	// cluster-scoped, custom kinds such as a GatewayClass included; the
	// plan drops it from an object the server says is cluster-scoped, as
	// kubectl and the API server do, where a namespace written in the
	// source is an error.
	NamespaceByKustomize bool
}
