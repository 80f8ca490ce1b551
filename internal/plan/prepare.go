package plan

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/snapply/snapply/internal/object"
)

// Prepare checks and completes the namespaces of the desired objects, as the
// API server will see them: a namespaced object without a namespace gets
// its own DefaultNamespace (a Helm chart's release namespace), else
// defaultNS (from --namespace or the kubeconfig context), or is an error when
// there is none; a cluster-scoped object with a namespace is an error (kubectl
// would silently drop it; a deployer must not guess), unless a kustomization
// set it (NamespaceByKustomize: kustomize cannot know the scope of a custom
// kind), in which case it is dropped. Kinds the server does
// not serve take their scope from a CRD of the same set; kinds nobody defines
// are left as they are and planned as invalid. Objects are changed in place.
func Prepare(desired []object.Object, cl Cluster, defaultNS string) error {
	crdScopes := map[string]bool{} // group/kind -> namespaced
	for _, d := range desired {
		if isCRD(d.Ref) {
			if gk, ok := crdGroupKind(d.Obj); ok {
				scope, _, _ := unstructured.NestedString(d.Obj.Object, "spec", "scope")
				crdScopes[gk.String()] = scope != "Cluster"
			}
		}
	}
	for i := range desired {
		d := &desired[i]
		served, namespaced, err := cl.Scope(d.Ref.GroupVersionKind())
		if err != nil {
			return fmt.Errorf("%s (%s): %w", d.Ref, d.Source, err)
		}
		if !served {
			ns, ok := crdScopes[d.Ref.GroupKind().String()]
			if !ok {
				continue
			}
			namespaced = ns
		}
		def := defaultNS
		if d.DefaultNamespace != "" {
			def = d.DefaultNamespace
		}
		switch {
		case namespaced && d.Ref.Namespace == "" && def == "":
			return fmt.Errorf("%s (%s): namespaced object has no metadata.namespace and no default namespace is set (set it in the manifest, in the kustomization, or with --namespace)", d.Ref, d.Source)
		case namespaced && d.Ref.Namespace == "":
			d.Obj.SetNamespace(def)
			d.Ref.Namespace = def
		case !namespaced && d.Ref.Namespace != "" && d.NamespaceByKustomize:
			d.Obj.SetNamespace("")
			d.Ref.Namespace = ""
		case !namespaced && d.Ref.Namespace != "":
			return fmt.Errorf("%s (%s): cluster-scoped object has metadata.namespace %q", d.Ref, d.Source, d.Ref.Namespace)
		}
	}
	return checkDuplicates(desired)
}

// checkDuplicates refuses two objects that name the same identity once
// namespaces are filled in.
func checkDuplicates(desired []object.Object) error {
	seen := make(map[object.Key]object.Source, len(desired))
	for _, d := range desired {
		if prev, ok := seen[d.Ref.Key()]; ok {
			return fmt.Errorf("%s is defined twice: %s and %s", d.Ref, prev, d.Source)
		}
		seen[d.Ref.Key()] = d.Source
	}
	return nil
}
