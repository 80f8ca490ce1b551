package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// partOf is the ApplySet label value snapply puts on the members.
const partOf = "applyset-In2pMFMV_T5BzCpGUKJr_IMIypnA5NNTEQe0AnyN0C8-v1"

// cluster turns desired objects into the live objects an API server would
// return after snapply applied them, and changes them the way later
// applies do. Everything comes from one seeded random stream.
type cluster struct {
	rng  *rand.Rand
	rv   int64
	now  time.Time
	objs []*unstructured.Unstructured
}

func newCluster(seed uint64, start time.Time) *cluster {
	return &cluster{rng: rand.New(rand.NewPCG(seed, 7)), rv: 4_000_000, now: start}
}

// stamp is a managedFields or condition time: second resolution, UTC.
func (c *cluster) stamp() string { return c.now.UTC().Format(time.RFC3339) }

func (c *cluster) nextRV() string { c.rv += 1 + int64(c.rng.IntN(40)); return fmt.Sprint(c.rv) }

func (c *cluster) uid() string {
	r := c.rng
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", r.Uint32(), r.Uint32()&0xffff, 0x4000|r.Uint32()&0x0fff, 0x8000|r.Uint32()&0x3fff, r.Uint64()&0xffffffffffff)
}

func (c *cluster) hash(n int) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[c.rng.IntN(len(alphabet))]
	}
	return string(b)
}

// create makes the live form of a desired object: the API server's
// metadata, defaults and status, and the managedFields of snapply's apply
// (and of the controllers that write to it).
func (c *cluster) create(desired *unstructured.Unstructured) *unstructured.Unstructured {
	u := desired.DeepCopy()
	labels := u.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	if u.GetKind() != "Namespace" {
		labels["applyset.kubernetes.io/part-of"] = partOf
	}
	u.SetLabels(labels)
	applied := fieldSet(u.Object)
	u.SetUID(types.UID(c.uid()))
	u.SetResourceVersion(c.nextRV())
	u.Object["metadata"].(map[string]any)["creationTimestamp"] = c.stamp()
	entries := []any{managedEntry("snapply", "Apply", u.GetAPIVersion(), "", c.stamp(), applied)}

	switch u.GetKind() {
	case "Namespace":
		labels["kubernetes.io/metadata.name"] = u.GetName()
		u.SetLabels(labels)
		u.Object["spec"] = map[string]any{"finalizers": []any{"kubernetes"}}
		u.Object["status"] = map[string]any{"phase": "Active"}
	case "Service":
		spec := u.Object["spec"].(map[string]any)
		ip := fmt.Sprintf("10.96.%d.%d", c.rng.IntN(256), 1+c.rng.IntN(254))
		spec["clusterIP"], spec["clusterIPs"] = ip, []any{ip}
		spec["internalTrafficPolicy"], spec["ipFamilies"], spec["ipFamilyPolicy"] = "Cluster", []any{"IPv4"}, "SingleStack"
		spec["sessionAffinity"] = "None"
		u.Object["status"] = map[string]any{"loadBalancer": map[string]any{}}
	case "Deployment":
		deploymentDefaults(u)
		u.SetGeneration(1)
		c.rollOut(u)
		entries = append(entries,
			managedEntry("kube-controller-manager", "Update", "apps/v1", "", c.stamp(),
				map[string]any{"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:deployment.kubernetes.io/revision": map[string]any{}}}}),
			managedEntry("kube-controller-manager", "Update", "apps/v1", "status", c.stamp(),
				map[string]any{"f:status": fieldSet(u.Object["status"].(map[string]any))}))
	}
	u.Object["metadata"].(map[string]any)["managedFields"] = entries
	return u
}

// change changes a live member the way an apply of a new commit does: a
// ConfigMap value, a Deployment's image tag (which the controller then
// rolls out), a Service's port. Every change gives a new resourceVersion
// and moves snapply's managedFields time.
func (c *cluster) change(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	switch u.GetKind() {
	case "ConfigMap":
		data := u.Object["data"].(map[string]any)
		data["FEATURE_FLAGS"] = fmt.Sprintf("search,checkout,rollout-%d", c.rng.IntN(1000))
	case "Deployment":
		cs := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		cs[0].(map[string]any)["image"] = fmt.Sprintf("registry.k8s.io/pause:3.%d", c.rng.IntN(100))
		u.SetGeneration(u.GetGeneration() + 1)
		anns := u.GetAnnotations()
		var rev int
		fmt.Sscan(anns["deployment.kubernetes.io/revision"], &rev)
		anns["deployment.kubernetes.io/revision"] = fmt.Sprint(rev + 1)
		u.SetAnnotations(anns)
		c.rollOut(u)
	case "Service":
		port := u.Object["spec"].(map[string]any)["ports"].([]any)[0].(map[string]any)
		port["port"] = int64(1024 + c.rng.IntN(30000))
	default:
		panic("change: unexpected " + u.GetKind())
	}
	u.SetResourceVersion(c.nextRV())
	for _, e := range u.Object["metadata"].(map[string]any)["managedFields"].([]any) {
		e := e.(map[string]any)
		if e["manager"] == "snapply" || u.GetKind() == "Deployment" {
			e["time"] = c.stamp()
		}
	}
	return u
}

// rollOut sets the status and revision a Deployment has once the
// controller rolled out its current generation.
func (c *cluster) rollOut(u *unstructured.Unstructured) {
	anns := u.GetAnnotations()
	if anns == nil {
		anns = map[string]string{}
	}
	if anns["deployment.kubernetes.io/revision"] == "" {
		anns["deployment.kubernetes.io/revision"] = "1"
	}
	u.SetAnnotations(anns)
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	rs := u.GetName() + "-" + c.hash(10)
	u.Object["status"] = map[string]any{
		"availableReplicas": replicas, "readyReplicas": replicas, "replicas": replicas, "updatedReplicas": replicas,
		"observedGeneration": u.GetGeneration(),
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability.",
				"lastTransitionTime": c.stamp(), "lastUpdateTime": c.stamp()},
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
				"message":            fmt.Sprintf("ReplicaSet %q has successfully progressed.", rs),
				"lastTransitionTime": c.stamp(), "lastUpdateTime": c.stamp()},
		},
	}
}

// deploymentDefaults adds the fields the API server defaults in a
// Deployment and its pod template.
func deploymentDefaults(u *unstructured.Unstructured) {
	spec := u.Object["spec"].(map[string]any)
	setDefault(spec, "progressDeadlineSeconds", int64(600))
	setDefault(spec, "revisionHistoryLimit", int64(10))
	pod := spec["template"].(map[string]any)["spec"].(map[string]any)
	setDefault(pod, "dnsPolicy", "ClusterFirst")
	setDefault(pod, "restartPolicy", "Always")
	setDefault(pod, "schedulerName", "default-scheduler")
	setDefault(pod, "securityContext", map[string]any{})
	setDefault(pod, "terminationGracePeriodSeconds", int64(30))
	for _, ct := range pod["containers"].([]any) {
		ct := ct.(map[string]any)
		setDefault(ct, "imagePullPolicy", "IfNotPresent")
		setDefault(ct, "terminationMessagePath", "/dev/termination-log")
		setDefault(ct, "terminationMessagePolicy", "File")
		for _, p := range []string{"readinessProbe", "livenessProbe"} {
			if probe, ok := ct[p].(map[string]any); ok {
				setDefault(probe, "successThreshold", int64(1))
				if get, ok := probe["httpGet"].(map[string]any); ok {
					setDefault(get, "scheme", "HTTP")
				}
			}
		}
	}
}

func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

func managedEntry(manager, op, apiVersion, subresource, t string, fields map[string]any) map[string]any {
	e := map[string]any{"manager": manager, "operation": op, "apiVersion": apiVersion, "time": t, "fieldsType": "FieldsV1", "fieldsV1": fields}
	if subresource != "" {
		e["subresource"] = subresource
	}
	return e
}

// fieldSet returns the FieldsV1 set of the fields of obj, as the API
// server records what an apply owns: "f:name" for a field; list items by
// their merge key, "k:{...}"; other lists as a whole. apiVersion and kind
// are not owned, and neither is the object's name or namespace.
func fieldSet(obj map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "status":
			continue
		case "metadata":
			md := map[string]any{}
			for mk, mv := range v.(map[string]any) {
				if mk == "labels" || mk == "annotations" {
					md["f:"+mk] = fieldsOf(mv)
				}
			}
			if len(md) > 0 {
				out["f:metadata"] = md
			}
			continue
		}
		out["f:"+k] = fieldsOf(v)
	}
	return out
}

func fieldsOf(v any) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{".": map[string]any{}}
		for k, v := range x {
			out["f:"+k] = fieldsOf(v)
		}
		return out
	case []any:
		out := map[string]any{}
		for _, item := range x {
			m, ok := item.(map[string]any)
			if !ok {
				return map[string]any{} // a list of scalars: owned whole
			}
			key := mergeKey(m)
			if key == "" {
				return map[string]any{}
			}
			f := fieldsOf(m)
			out["k:"+key] = f
		}
		return out
	}
	return map[string]any{}
}

// mergeKey returns the "k:" key of a list item: its name, its type (a
// condition), or its port and protocol; "" when it has none of them.
func mergeKey(m map[string]any) string {
	key := map[string]any{}
	for _, k := range []string{"name", "type"} {
		if v, ok := m[k]; ok {
			key[k] = v
			break
		}
	}
	if len(key) == 0 {
		for _, k := range []string{"containerPort", "port", "protocol"} {
			if v, ok := m[k]; ok {
				key[k] = v
			}
		}
	}
	if len(key) == 0 {
		return ""
	}
	b, _ := json.Marshal(key) // sorted keys, as the API server writes them
	return string(b)
}

// members returns the indexes of the objects a change may pick: all but
// the Namespaces.
func members(objs []*unstructured.Unstructured) []int {
	var out []int
	for i, u := range objs {
		if u.GetKind() != "Namespace" {
			out = append(out, i)
		}
	}
	return slices.Clip(out)
}
