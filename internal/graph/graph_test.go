package graph

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/object"
)

func parse(t *testing.T, stream string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(stream, "\n---\n") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
}

const set = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: prod}
spec:
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      imagePullSecrets: [{name: pull}]
      containers:
      - name: web
        env:
        - {name: A, valueFrom: {configMapKeyRef: {name: cfg, key: a}}}
        - {name: B, valueFrom: {secretKeyRef: {name: creds, key: b, optional: true}}}
        envFrom: [{configMapRef: {name: extra}}]
      volumes:
      - {name: data, persistentVolumeClaim: {claimName: data}}
      - {name: files, configMap: {name: cfg, items: [{key: f, path: f}]}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: prod}
data: {a: "1"}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: prod}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: old, namespace: prod}
spec:
  selector: {app: old}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: prod}
spec:
  defaultBackend: {service: {name: web, port: {name: http}}}
  rules:
  - host: a.example.com
    http: {paths: [{path: /, backend: {service: {name: web, port: {number: 8080}}}}]}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-1
  namespace: prod
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: x, controller: true}]
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, envFrom: [{configMapRef: {name: gone}}]}]}`

func TestEdgesAndBroken(t *testing.T) {
	g := New(parse(t, set))
	var edges []string
	for _, e := range g.From(g.Nodes[object.Key{Group: "apps", Kind: "Deployment", Namespace: "prod", Name: "web"}].Ref) {
		edges = append(edges, string(e.Kind)+" "+e.To.String()+" "+e.Key)
	}
	want := []string{
		"env-from configmap/extra -n prod ",
		"env-key configmap/cfg -n prod a",
		"env-key secret/creds -n prod b",
		"image-pull-secret secret/pull -n prod ",
		"service-account serviceaccount/web -n prod ",
		"volume configmap/cfg -n prod f",
		"volume persistentvolumeclaim/data -n prod ",
	}
	if diff := cmp.Diff(want, edges); diff != "" {
		t.Errorf("edges of the Deployment (-want +got):\n%s", diff)
	}

	var broken []string
	for _, b := range g.Broken() {
		broken = append(broken, b.Message())
	}
	wantBroken := []string{
		"deployment.apps/web -n prod (containers[name=web].envFrom) -> configmap/extra -n prod: does not exist",
		"deployment.apps/web -n prod (imagePullSecrets) -> secret/pull -n prod: does not exist",
		"deployment.apps/web -n prod (serviceAccountName) -> serviceaccount/web -n prod: does not exist",
		`deployment.apps/web -n prod (volumes[name=files]) -> configmap/cfg -n prod: key "f" does not exist`,
		"deployment.apps/web -n prod (volumes[name=data]) -> persistentvolumeclaim/data -n prod: does not exist",
		"ingress.networking.k8s.io/web -n prod (spec.rules[host=a.example.com].http.paths[path=/]) -> service/web -n prod: port 8080 does not exist",
		"service/old -n prod: its selector matches no pod template",
	}
	if diff := cmp.Diff(wantBroken, broken); diff != "" {
		t.Errorf("broken (-want +got):\n%s", diff)
	}

	// Outside what the set covers, nothing can be said.
	g.Covered = func(gk schema.GroupKind, ns string) bool { return gk.Kind == "Service" }
	for _, b := range g.Broken() {
		if b.Kind != Backend && b.Kind != Selects && b.Resolution == Missing {
			t.Errorf("uncovered target reported broken: %s", b.Message())
		}
	}
}
