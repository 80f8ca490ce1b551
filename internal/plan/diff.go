package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/graph"
)

// serverManaged are the metadata fields the server owns: they change on
// every write and say nothing about the desired state.
var serverManaged = []string{"managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink"}

// Strip returns a copy of u without status and the server-managed metadata
// fields, the form in which plans compare and diff objects. A nil u gives nil.
func Strip(u *unstructured.Unstructured) *unstructured.Unstructured {
	if u == nil {
		return nil
	}
	c := u.DeepCopy()
	delete(c.Object, "status")
	if md, ok := c.Object["metadata"].(map[string]any); ok {
		for _, f := range serverManaged {
			delete(md, f)
		}
		if anns, ok := md["annotations"].(map[string]any); ok && len(anns) == 0 {
			delete(md, "annotations")
		}
	}
	return c
}

// Equal reports whether live and after are the same object once stripped.
func Equal(live, after *unstructured.Unstructured) bool {
	return equality.Semantic.DeepEqual(Strip(live).Object, Strip(after).Object)
}

// Diff returns a unified diff between the YAML of the stripped before and
// after objects (either may be nil), labelled with name. It returns "" when
// they are equal. The sides are marked "(live)" and "(after apply)"; see
// DiffSides for other sides.
func Diff(name string, before, after *unstructured.Unstructured, context int) string {
	return DiffSides(name, "live", "after apply", before, after, context)
}

// DiffSides is Diff with the sides marked "(from)" and "(to)", for diffs
// that are not plans, like two snapshots.
func DiffSides(name, from, to string, before, after *unstructured.Unstructured, context int) string {
	a, b := toYAML(Strip(before)), toYAML(Strip(after))
	if a == b {
		return ""
	}
	fromLabel, toLabel := name+" ("+from+")", name+" ("+to+")"
	edits := udiff.Strings(a, b)
	d, err := udiff.ToUnifiedDiff(fromLabel, toLabel, a, edits, context)
	if err != nil {
		// Cannot happen for edits computed from a; keep the plan whole.
		return fmt.Sprintf("--- %s\n+++ %s\n(diff unavailable: %v)\n", fromLabel, toLabel, err)
	}
	return d.String()
}

func toYAML(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	out, err := yaml.Marshal(u.Object)
	if err != nil {
		return fmt.Sprintf("# cannot encode as YAML: %v\n", err)
	}
	return string(out)
}

// Images returns the container images of a workload by container name, init
// containers prefixed "init:". Objects that hold no pod spec give nil.
func Images(u *unstructured.Unstructured) map[string]string {
	spec := graph.PodSpec(u)
	if spec == nil {
		return nil
	}
	out := map[string]string{}
	for _, list := range []struct{ field, prefix string }{{"initContainers", "init:"}, {"containers", ""}} {
		cs, _ := spec[list.field].([]any)
		for _, c := range cs {
			m, _ := c.(map[string]any)
			name, _ := m["name"].(string)
			image, _ := m["image"].(string)
			if name != "" {
				out[list.prefix+name] = image
			}
		}
	}
	return out
}

// ImageChanges lists the container images that differ between before and
// after (either may be nil), sorted by container.
func ImageChanges(before, after *unstructured.Unstructured) []ImageChange {
	old, cur := Images(before), Images(after)
	var out []ImageChange
	for name, img := range cur {
		if old[name] != img {
			out = append(out, ImageChange{Container: name, Old: old[name], New: img})
		}
	}
	for name, img := range old {
		if _, ok := cur[name]; !ok {
			out = append(out, ImageChange{Container: name, Old: img})
		}
	}
	slices.SortFunc(out, func(a, b ImageChange) int { return strings.Compare(a.Container, b.Container) })
	return out
}
