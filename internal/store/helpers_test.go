package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// openTest opens a new store in a temporary directory.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), DefaultPath), DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// reopen closes db and opens its file again with opts.
func reopen(t testing.TB, db *DB, opts Options) *DB {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db2, err := Open(db.Path(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db2.Close() })
	return db2
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func put(t testing.TB, db *DB, kind Kind, objs []*unstructured.Unstructured) Meta {
	t.Helper()
	m, err := db.PutSnapshot(context.Background(), Meta{Kind: kind}, objs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// app generates n objects shaped like a real application's live state:
// ConfigMaps, Deployments and Services in 10 namespaces, with
// managedFields, status and resourceVersions, about 1-2 KB each as JSON.
type app struct {
	rng  *rand.Rand
	objs []*unstructured.Unstructured
	rv   int
}

func newApp(n int) *app {
	a := &app{rng: rand.New(rand.NewPCG(1, 2)), rv: 100000}
	for i := range n {
		a.objs = append(a.objs, a.gen(i))
	}
	return a
}

func (a *app) uid() string {
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", a.rng.Uint32(), a.rng.Uint32()&0xffff, a.rng.Uint32()&0xffff, a.rng.Uint32()&0xffff, a.rng.Uint64()&0xffffffffffff)
}

func (a *app) nextRV() string { a.rv += 1 + a.rng.IntN(50); return fmt.Sprint(a.rv) }

func (a *app) stamp() string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(a.rng.IntN(1e6)) * time.Second).Format(time.RFC3339)
}

func (a *app) gen(i int) *unstructured.Unstructured {
	ns := fmt.Sprintf("team-%d", i%10)
	name := fmt.Sprintf("svc-%03d", i/3)
	labels := map[string]any{"app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "shop", "applyset.kubernetes.io/part-of": "applyset-0a1b2c3d4e5f"}
	md := func(extra map[string]any) map[string]any {
		m := map[string]any{
			"name": name, "namespace": ns, "uid": a.uid(), "resourceVersion": a.nextRV(),
			"creationTimestamp": a.stamp(), "labels": labels,
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	mf := func(apiVersion string, fields map[string]any, manager, op string) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "fieldsType": "FieldsV1", "fieldsV1": fields, "manager": manager, "operation": op, "time": a.stamp()}
	}
	labelFields := map[string]any{"f:metadata": map[string]any{"f:labels": map[string]any{"f:app.kubernetes.io/name": map[string]any{}, "f:app.kubernetes.io/part-of": map[string]any{}, "f:applyset.kubernetes.io/part-of": map[string]any{}}}}
	switch i % 3 {
	case 0:
		data := map[string]any{}
		fields := map[string]any{}
		for k := range 4 {
			key := fmt.Sprintf("setting_%d", k)
			data[key] = fmt.Sprintf("value-%d-%x", k, a.rng.Uint64())
			fields["f:"+key] = map[string]any{}
		}
		f := map[string]any{"f:data": fields}
		for k, v := range labelFields {
			f[k] = v
		}
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": md(map[string]any{"managedFields": []any{mf("v1", f, "snapply", "Apply")}}),
			"data":     data,
		}}
	case 1:
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": md(map[string]any{
				"generation":  int64(1 + a.rng.IntN(5)),
				"annotations": map[string]any{"deployment.kubernetes.io/revision": "1"},
				"managedFields": []any{
					mf("apps/v1", map[string]any{"f:spec": map[string]any{"f:replicas": map[string]any{}, "f:selector": map[string]any{}, "f:template": map[string]any{"f:spec": map[string]any{"f:containers": map[string]any{`k:{"name":"app"}`: map[string]any{".": map[string]any{}, "f:image": map[string]any{}, "f:name": map[string]any{}}}}}}}, "snapply", "Apply"),
					mf("apps/v1", map[string]any{"f:status": map[string]any{"f:availableReplicas": map[string]any{}, "f:readyReplicas": map[string]any{}}}, "kube-controller-manager", "Update"),
				},
			}),
			"spec": map[string]any{
				"replicas": int64(2), "revisionHistoryLimit": int64(10), "progressDeadlineSeconds": int64(600),
				"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/name": name}},
				"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": "25%", "maxUnavailable": "25%"}},
				"template": map[string]any{
					"metadata": map[string]any{"labels": map[string]any{"app.kubernetes.io/name": name}},
					"spec": map[string]any{
						"containers": []any{map[string]any{
							"name": "app", "image": fmt.Sprintf("ghcr.io/example/%s:1.%d.%d", name, a.rng.IntN(20), a.rng.IntN(20)),
							"imagePullPolicy": "IfNotPresent", "ports": []any{map[string]any{"containerPort": int64(8080), "protocol": "TCP"}},
							"resources":              map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}},
							"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
						}},
						"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
						"securityContext": map[string]any{}, "terminationGracePeriodSeconds": int64(30),
					},
				},
			},
			"status": map[string]any{
				"availableReplicas": int64(2), "readyReplicas": int64(2), "replicas": int64(2), "updatedReplicas": int64(2), "observedGeneration": int64(1),
				"conditions": []any{map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastTransitionTime": a.stamp(), "lastUpdateTime": a.stamp(), "message": "Deployment has minimum availability."}},
			},
		}}
	default:
		ip := fmt.Sprintf("10.96.%d.%d", a.rng.IntN(256), a.rng.IntN(256))
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": md(map[string]any{"managedFields": []any{mf("v1", map[string]any{"f:spec": map[string]any{"f:ports": map[string]any{`k:{"port":80,"protocol":"TCP"}`: map[string]any{".": map[string]any{}, "f:port": map[string]any{}, "f:targetPort": map[string]any{}}}, "f:selector": map[string]any{}}}, "snapply", "Apply")}}),
			"spec": map[string]any{
				"clusterIP": ip, "clusterIPs": []any{ip}, "internalTrafficPolicy": "Cluster", "ipFamilies": []any{"IPv4"}, "ipFamilyPolicy": "SingleStack",
				"ports":    []any{map[string]any{"port": int64(80), "protocol": "TCP", "targetPort": int64(8080)}},
				"selector": map[string]any{"app.kubernetes.io/name": name}, "sessionAffinity": "None", "type": "ClusterIP",
			},
			"status": map[string]any{"loadBalancer": map[string]any{}},
		}}
	}
}

// change changes n random objects the way an update does: a new
// resourceVersion, a new managedFields time and a changed field.
func (a *app) change(n int) {
	for _, i := range a.rng.Perm(len(a.objs))[:n] {
		u := a.objs[i].DeepCopy()
		u.SetResourceVersion(a.nextRV())
		mf := u.Object["metadata"].(map[string]any)["managedFields"].([]any)
		mf[0].(map[string]any)["time"] = a.stamp()
		switch u.GetKind() {
		case "ConfigMap":
			u.Object["data"].(map[string]any)["setting_0"] = fmt.Sprintf("changed-%x", a.rng.Uint64())
		case "Deployment":
			c := u.Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
			c["image"] = fmt.Sprintf("ghcr.io/example/app:2.%d", a.rng.IntN(1000))
		default:
			u.Object["spec"].(map[string]any)["selector"].(map[string]any)["rev"] = fmt.Sprint(a.rng.IntN(1000))
		}
		a.objs[i] = u
	}
}
