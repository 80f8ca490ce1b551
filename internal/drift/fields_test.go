package drift

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

const snapplyFields = `
    - manager: snapply
      operation: Apply
      time: "2026-11-20T10:00:00Z"
      fieldsV1:
        f:spec:
          f:replicas: {}
          f:template:
            f:spec:
              f:containers:
                k:{"name":"web"}:
                  .: {}
                  f:image: {}
                  f:name: {}`

func TestCompareFields(t *testing.T) {
	// git (the dry run): snapply owns replicas and the image of web.
	after := obj(t, `
metadata:
  managedFields:`+snapplyFields+`
spec:
  replicas: 3
  template:
    spec:
      containers:
      - {name: sidecar, image: envoy:1}
      - {name: web, image: web:1.2}
`)
	// live: kubectl-edit changed replicas; a force-apply of hotfix took the
	// image with another value.
	live := obj(t, `
metadata:
  managedFields:
    - manager: snapply
      operation: Apply
      time: "2026-11-20T10:00:00Z"
      fieldsV1:
        f:spec:
          f:template:
            f:spec:
              f:containers:
                k:{"name":"web"}:
                  .: {}
                  f:name: {}
    - manager: kubectl-edit
      operation: Update
      time: "2026-11-20T14:02:05Z"
      fieldsV1:
        f:spec:
          f:replicas: {}
    - manager: hotfix
      operation: Apply
      time: "2026-11-21T09:00:00Z"
      fieldsV1:
        f:spec:
          f:template:
            f:spec:
              f:containers:
                k:{"name":"web"}:
                  f:image: {}
spec:
  replicas: 5
  template:
    spec:
      containers:
      - {name: sidecar, image: envoy:1}
      - {name: web, image: web:1.3-hotfix}
`)
	fields, owned, paths := compareFields(live, after)
	wantFields := []Field{
		{Path: "spec.replicas", Git: "3", Live: "5", Manager: "kubectl-edit", Operation: "Update", Time: "2026-11-20T14:02:05Z"},
		{Path: `spec.template.spec.containers[name=web].image`, Git: "web:1.2", Live: "web:1.3-hotfix", Manager: "hotfix", Operation: "Apply", Time: "2026-11-21T09:00:00Z"},
	}
	if diff := cmp.Diff(wantFields, fields); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	wantOwned := []Ownership{{Path: `spec.template.spec.containers[name=web].image`, Manager: "hotfix", Operation: "Apply", Time: "2026-11-21T09:00:00Z"}}
	if diff := cmp.Diff(wantOwned, owned); diff != "" {
		t.Errorf("ownership (-want +got):\n%s", diff)
	}

	// In sync: nothing.
	live.SetAPIVersion("apps/v1")
	live.SetKind("Deployment")
	live.SetName("web")
	live.SetNamespace("prod")
	wantAdopt := `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: prod
spec:
  replicas: 5
  template:
    spec:
      containers:
      - image: web:1.3-hotfix
        name: web
`
	if diff := cmp.Diff(wantAdopt, adoptPatch(live, paths)); diff != "" {
		t.Errorf("adopt patch (-want +got):\n%s", diff)
	}

	fields, owned, paths = compareFields(after, after)
	if len(fields) != 0 || len(owned) != 0 || len(paths) != 0 {
		t.Errorf("in sync: %+v %+v", fields, owned)
	}
}

// TestAdoptPatchRemovals: a field live does not set is null in the
// patch, and a list item live does not have is "$patch: delete".
func TestAdoptPatchRemovals(t *testing.T) {
	fields := `
    - manager: snapply
      operation: Apply
      fieldsV1:
        f:metadata:
          f:labels:
            f:team: {}
        f:spec:
          f:template:
            f:spec:
              f:containers:
                k:{"name":"debug"}:
                  .: {}
                  f:image: {}
                  f:name: {}
                k:{"name":"web"}:
                  .: {}
                  f:image: {}
                  f:name: {}`
	after := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {team: a}
  managedFields:`+fields+`
spec:
  template:
    spec:
      containers:
      - {name: web, image: web:1}
      - {name: debug, image: busybox}
`)
	live := obj(t, `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {}
  managedFields:`+fields+`
spec:
  template:
    spec:
      containers:
      - {name: web, image: web:1}
`)
	_, _, paths := compareFields(live, after)
	want := `apiVersion: apps/v1
kind: Deployment
metadata:
  labels:
    team: null
  name: web
spec:
  template:
    spec:
      containers:
      - $patch: delete
        name: debug
`
	if diff := cmp.Diff(want, adoptPatch(live, paths)); diff != "" {
		t.Errorf("adopt patch (-want +got):\n%s", diff)
	}
}

func TestShow(t *testing.T) {
	for _, c := range []struct {
		v    any
		ok   bool
		want string
	}{
		{"web:1.2", true, "web:1.2"},
		{int64(3), true, "3"},
		{map[string]any{"a": "b"}, true, `{"a":"b"}`},
		{nil, false, "(absent)"},
		{string(make([]byte, 200)), true, string(make([]byte, 117)) + "..."},
	} {
		if got := show(c.v, c.ok); got != c.want {
			t.Errorf("show(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
