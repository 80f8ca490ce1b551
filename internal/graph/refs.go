package graph

import (
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/object"
)

// podSpecPaths are where workloads keep their pod spec.
var podSpecPaths = map[string][]string{
	"Pod":         {"spec"},
	"Deployment":  {"spec", "template", "spec"},
	"StatefulSet": {"spec", "template", "spec"},
	"DaemonSet":   {"spec", "template", "spec"},
	"ReplicaSet":  {"spec", "template", "spec"},
	"Job":         {"spec", "template", "spec"},
	"CronJob":     {"spec", "jobTemplate", "spec", "template", "spec"},
}

// PodSpecPath returns where u keeps its pod spec, or nil when u is not a
// workload.
func PodSpecPath(u *unstructured.Unstructured) []string {
	if u == nil {
		return nil
	}
	group := u.GroupVersionKind().Group
	if group != "" && group != "apps" && group != "batch" {
		return nil
	}
	return podSpecPaths[u.GetKind()]
}

// PodSpec returns the pod spec of a workload, or nil.
func PodSpec(u *unstructured.Unstructured) map[string]any {
	path := PodSpecPath(u)
	if path == nil {
		return nil
	}
	return noCopyMap(u.Object, path...)
}

// PodTemplate returns the pod template (metadata and spec) of a workload,
// or the Pod itself, or nil.
func PodTemplate(u *unstructured.Unstructured) map[string]any {
	path := PodSpecPath(u)
	if len(path) == 0 {
		return nil
	}
	if len(path) == 1 {
		return u.Object
	}
	return noCopyMap(u.Object, path[:len(path)-1]...)
}

// PodTemplateLabels returns the labels of a workload's pod template (or a
// Pod's), and whether u has a pod template at all.
func PodTemplateLabels(u *unstructured.Unstructured) (map[string]string, bool) {
	t := PodTemplate(u)
	if t == nil {
		return nil, false
	}
	lbls, _, _ := unstructured.NestedStringMap(t, "metadata", "labels")
	return lbls, true
}

// ServiceSelector returns the selector of a core Service that has one.
func ServiceSelector(u *unstructured.Unstructured) (labels.Selector, bool) {
	if u == nil || u.GetKind() != "Service" || u.GroupVersionKind().Group != "" {
		return nil, false
	}
	sel, _, _ := unstructured.NestedStringMap(u.Object, "spec", "selector")
	if len(sel) == 0 {
		return nil, false
	}
	return labels.SelectorFromSet(sel), true
}

// refsOf returns the edges from one object (Selects aside).
func refsOf(from object.Ref, u *unstructured.Unstructured) []Edge {
	// A controlled object (a Deployment's ReplicaSet, a ReplicaSet's Pod)
	// repeats its owner's template: its owner speaks for it.
	if controlled(u) {
		return nil
	}
	if spec := PodSpec(u); spec != nil {
		return podRefs(from, spec)
	}
	switch gk := from.GroupKind(); gk {
	case schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}:
		return ingressRefs(from, u)
	case schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:
		ref, _, _ := unstructured.NestedStringMap(u.Object, "spec", "scaleTargetRef")
		if ref["kind"] == "" || ref["name"] == "" {
			return nil
		}
		gv, _ := schema.ParseGroupVersion(ref["apiVersion"])
		return []Edge{{From: from, To: object.Ref{Group: gv.Group, Version: gv.Version, Kind: ref["kind"], Namespace: from.Namespace, Name: ref["name"]}, Kind: ScaleTarget, Field: "spec.scaleTargetRef"}}
	case schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"},
		schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:
		return bindingRefs(from, u)
	case schema.GroupKind{Group: gatewayGroup, Kind: "Gateway"}:
		name, _, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName")
		if name == "" {
			return nil
		}
		return []Edge{{From: from, To: object.Ref{Group: gatewayGroup, Kind: "GatewayClass", Name: name}, Kind: GatewayClass, Field: "spec.gatewayClassName"}}
	}
	if from.Group == gatewayGroup && routeKinds[from.Kind] {
		return routeRefs(from, u)
	}
	return nil
}

// gatewayGroup is the API group of the Gateway API.
const gatewayGroup = "gateway.networking.k8s.io"

// routeKinds are the Gateway API route kinds: each has spec.parentRefs
// and spec.rules[].backendRefs.
var routeKinds = map[string]bool{"HTTPRoute": true, "GRPCRoute": true, "TLSRoute": true, "TCPRoute": true, "UDPRoute": true}

// routeRefs returns the references of a Gateway API route: its parents
// (a Gateway by default) and its backends (a Service by default, in the
// route's namespace unless the reference names another).
func routeRefs(from object.Ref, u *unstructured.Unstructured) []Edge {
	var out []Edge
	target := func(m map[string]any, group, kind string) object.Ref {
		ref := object.Ref{Group: group, Kind: kind, Namespace: from.Namespace, Name: str(m, "name")}
		if g, ok := m["group"].(string); ok {
			ref.Group = g
		}
		if k := str(m, "kind"); k != "" {
			ref.Kind = k
		}
		if ns := str(m, "namespace"); ns != "" {
			ref.Namespace = ns
		}
		if ref.Group == "" && ref.Kind == "Service" {
			ref.Version = "v1"
		}
		return ref
	}
	parents, _, _ := unstructured.NestedSlice(u.Object, "spec", "parentRefs")
	for _, p := range parents {
		pm, _ := p.(map[string]any)
		if str(pm, "name") == "" {
			continue
		}
		out = append(out, Edge{From: from, To: target(pm, gatewayGroup, "Gateway"), Kind: ParentRef, Field: "spec.parentRefs[name=" + str(pm, "name") + "]"})
	}
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	for i, r := range rules {
		rm, _ := r.(map[string]any)
		backends, _, _ := unstructured.NestedSlice(rm, "backendRefs")
		for _, b := range backends {
			bm, _ := b.(map[string]any)
			if str(bm, "name") == "" {
				continue
			}
			to := target(bm, "", "Service")
			port := ""
			if n, ok := bm["port"]; ok && to.Version == "v1" {
				port = itoa(n)
			}
			out = append(out, Edge{From: from, To: to, Kind: Backend, Key: port, Field: fmt.Sprintf("spec.rules[%d].backendRefs[name=%s]", i, str(bm, "name"))})
		}
	}
	return out
}

// podRefs returns the references of a pod spec.
func podRefs(from object.Ref, spec map[string]any) []Edge {
	var out []Edge
	to := func(kind, name string) object.Ref {
		return object.Ref{Version: "v1", Kind: kind, Namespace: from.Namespace, Name: name}
	}
	add := func(e Edge) {
		if e.To.Name != "" {
			out = append(out, e)
		}
	}
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			where := list + "[name=" + str(cm, "name") + "]"
			envs, _ := cm["env"].([]any)
			for _, env := range envs {
				em, _ := env.(map[string]any)
				for field, kind := range map[string]string{"configMapKeyRef": "ConfigMap", "secretKeyRef": "Secret"} {
					r, ok := nested(em, "valueFrom", field)
					if !ok {
						continue
					}
					add(Edge{From: from, To: to(kind, str(r, "name")), Kind: EnvKey, Key: str(r, "key"),
						Field: where + ".env[name=" + str(em, "name") + "]", Optional: flag(r, "optional")})
				}
			}
			envFrom, _ := cm["envFrom"].([]any)
			for _, ef := range envFrom {
				efm, _ := ef.(map[string]any)
				for field, kind := range map[string]string{"configMapRef": "ConfigMap", "secretRef": "Secret"} {
					r, ok := efm[field].(map[string]any)
					if !ok {
						continue
					}
					add(Edge{From: from, To: to(kind, str(r, "name")), Kind: EnvFrom, Field: where + ".envFrom", Optional: flag(r, "optional")})
				}
			}
		}
	}
	vols, _ := spec["volumes"].([]any)
	for _, v := range vols {
		vm, _ := v.(map[string]any)
		where := "volumes[name=" + str(vm, "name") + "]"
		if r, ok := vm["configMap"].(map[string]any); ok {
			out = append(out, volumeEdges(from, to("ConfigMap", str(r, "name")), where, r)...)
		}
		if r, ok := vm["secret"].(map[string]any); ok {
			out = append(out, volumeEdges(from, to("Secret", str(r, "secretName")), where, r)...)
		}
		if r, ok := vm["persistentVolumeClaim"].(map[string]any); ok {
			add(Edge{From: from, To: to("PersistentVolumeClaim", str(r, "claimName")), Kind: Volume, Field: where})
		}
		sources, _, _ := unstructured.NestedSlice(vm, "projected", "sources")
		for _, s := range sources {
			sm, _ := s.(map[string]any)
			if r, ok := sm["configMap"].(map[string]any); ok {
				out = append(out, volumeEdges(from, to("ConfigMap", str(r, "name")), where, r)...)
			}
			if r, ok := sm["secret"].(map[string]any); ok {
				out = append(out, volumeEdges(from, to("Secret", str(r, "name")), where, r)...)
			}
		}
	}
	sa := str(spec, "serviceAccountName")
	if sa == "" {
		sa = str(spec, "serviceAccount")
	}
	add(Edge{From: from, To: to("ServiceAccount", sa), Kind: ServiceAccount, Field: "serviceAccountName"})
	ips, _ := spec["imagePullSecrets"].([]any)
	for _, s := range ips {
		sm, _ := s.(map[string]any)
		add(Edge{From: from, To: to("Secret", str(sm, "name")), Kind: ImagePullSecret, Field: "imagePullSecrets"})
	}
	return out
}

// volumeEdges returns the edges of a ConfigMap or Secret volume source: one
// per listed item's key, or one for the whole object.
func volumeEdges(from, to object.Ref, where string, src map[string]any) []Edge {
	if to.Name == "" {
		return nil
	}
	optional := flag(src, "optional")
	items, _ := src["items"].([]any)
	if len(items) == 0 {
		return []Edge{{From: from, To: to, Kind: Volume, Field: where, Optional: optional}}
	}
	var out []Edge
	for _, it := range items {
		im, _ := it.(map[string]any)
		out = append(out, Edge{From: from, To: to, Kind: Volume, Key: str(im, "key"), Field: where, Optional: optional})
	}
	return out
}

func ingressRefs(from object.Ref, u *unstructured.Unstructured) []Edge {
	var out []Edge
	backend := func(b map[string]any, where string) {
		svc, ok := b["service"].(map[string]any)
		if !ok || str(svc, "name") == "" {
			return
		}
		port := ""
		if p, ok := svc["port"].(map[string]any); ok {
			if n, ok := p["number"]; ok {
				port = itoa(n)
			} else {
				port = str(p, "name")
			}
		}
		out = append(out, Edge{From: from, To: object.Ref{Version: "v1", Kind: "Service", Namespace: from.Namespace, Name: str(svc, "name")}, Kind: Backend, Key: port, Field: where})
	}
	if b, ok, _ := unstructured.NestedMap(u.Object, "spec", "defaultBackend"); ok {
		backend(b, "spec.defaultBackend")
	}
	rules, _, _ := unstructured.NestedSlice(u.Object, "spec", "rules")
	for _, r := range rules {
		rm, _ := r.(map[string]any)
		paths, _, _ := unstructured.NestedSlice(rm, "http", "paths")
		for _, p := range paths {
			pm, _ := p.(map[string]any)
			if b, ok := pm["backend"].(map[string]any); ok {
				backend(b, "spec.rules[host="+str(rm, "host")+"].http.paths[path="+str(pm, "path")+"]")
			}
		}
	}
	return out
}

func bindingRefs(from object.Ref, u *unstructured.Unstructured) []Edge {
	var out []Edge
	rr, _, _ := unstructured.NestedStringMap(u.Object, "roleRef")
	if rr["name"] != "" && (rr["kind"] == "Role" || rr["kind"] == "ClusterRole") {
		to := object.Ref{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: rr["kind"], Name: rr["name"]}
		if rr["kind"] == "Role" {
			to.Namespace = from.Namespace
		}
		out = append(out, Edge{From: from, To: to, Kind: RoleRef, Field: "roleRef"})
	}
	subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
	for _, s := range subjects {
		sm, _ := s.(map[string]any)
		if str(sm, "kind") != "ServiceAccount" || str(sm, "name") == "" {
			continue
		}
		ns := str(sm, "namespace")
		if ns == "" {
			ns = from.Namespace
		}
		out = append(out, Edge{From: from, To: object.Ref{Version: "v1", Kind: "ServiceAccount", Namespace: ns, Name: str(sm, "name")}, Kind: Subject, Field: "subjects[name=" + str(sm, "name") + "]"})
	}
	return out
}

func nested(m map[string]any, fields ...string) (map[string]any, bool) {
	r := noCopyMap(m, fields...)
	return r, r != nil
}

// noCopyMap returns the map at fields in m, not copied, or nil.
func noCopyMap(m map[string]any, fields ...string) map[string]any {
	v, _, _ := unstructured.NestedFieldNoCopy(m, fields...)
	r, _ := v.(map[string]any)
	return r
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return strings.TrimSpace(s)
}

func flag(m map[string]any, k string) bool {
	b, _ := m[k].(bool)
	return b
}

// PDBSelector returns the label selector of a PodDisruptionBudget.
func PDBSelector(u *unstructured.Unstructured) (labels.Selector, bool) {
	if u == nil || u.GetKind() != "PodDisruptionBudget" || u.GroupVersionKind().Group != "policy" {
		return nil, false
	}
	m, ok, _ := unstructured.NestedMap(u.Object, "spec", "selector")
	if !ok {
		return nil, false
	}
	var ls metav1.LabelSelector
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &ls); err != nil {
		return nil, false
	}
	sel, err := metav1.LabelSelectorAsSelector(&ls)
	if err != nil || sel.Empty() {
		return nil, false
	}
	return sel, true
}

// controlled reports whether u has a controller owner (its owner's
// template speaks for it).
func controlled(u *unstructured.Unstructured) bool {
	for _, or := range u.GetOwnerReferences() {
		if or.Controller != nil && *or.Controller {
			return true
		}
	}
	return false
}

// ownerEdges returns an edge per ownerReference of n: to the owner in n's
// namespace, or to a cluster-scoped owner when only that one is in the set.
func (g *Graph) ownerEdges(n *Node) []Edge {
	var out []Edge
	for i, or := range n.Obj.GetOwnerReferences() {
		if or.Kind == "" || or.Name == "" {
			continue
		}
		gv, _ := schema.ParseGroupVersion(or.APIVersion)
		to := object.Ref{Group: gv.Group, Version: gv.Version, Kind: or.Kind, Namespace: n.Ref.Namespace, Name: or.Name}
		if g.Node(to) == nil {
			cluster := to
			cluster.Namespace = ""
			if g.Node(cluster) != nil {
				to = cluster
			}
		}
		out = append(out, Edge{From: n.Ref, To: to, Kind: Owner, Field: "metadata.ownerReferences[" + strconv.Itoa(i) + "]"})
	}
	return out
}

// crdKinds maps the kinds that the CustomResourceDefinitions among nodes
// define to those definitions.
func crdKinds(nodes []*Node) map[schema.GroupKind]object.Ref {
	out := map[schema.GroupKind]object.Ref{}
	for _, n := range nodes {
		if n.Ref.Group != "apiextensions.k8s.io" || n.Ref.Kind != "CustomResourceDefinition" {
			continue
		}
		group, _, _ := unstructured.NestedString(n.Obj.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(n.Obj.Object, "spec", "names", "kind")
		if group != "" && kind != "" {
			out[schema.GroupKind{Group: group, Kind: kind}] = n.Ref
		}
	}
	return out
}
