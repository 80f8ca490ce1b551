package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name.golden, or rewrites the file with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// samplePlan returns a plan with one object of every kind a report must
// show: creates (one holding a markdown code fence), an update with an
// image change and a warning, two unchanged objects, a destructive
// Namespace delete, a conflict on two fields, an invalid object and a
// pending custom resource.
func samplePlan() *plan.Plan {
	changes := []plan.Change{
		{
			Ref:         object.Ref{Version: "v1", Kind: "Namespace", Name: "legacy"},
			Action:      plan.Delete,
			Destructive: true,
			Risks:       []plan.Risk{{Kind: plan.RiskDataLoss, Message: "deleting a Namespace deletes every object in it"}},
			Diff: `--- namespace/legacy (live)
+++ namespace/legacy (after apply)
@@ -1,6 +0,0 @@
-apiVersion: v1
-kind: Namespace
-metadata:
-  labels:
-    applyset.kubernetes.io/part-of: applyset-3xkq7v0dq5lw4nrn-v1
-  name: legacy
`,
			LiveResourceVersion: "1187",
		},
		{
			Ref:      object.Ref{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", Name: "widgets.example.com"},
			Action:   plan.Create,
			Verified: plan.VerifiedDryRun,
			Source:   object.Source{File: "crds/widget.yaml", Line: 1},
			Diff: `--- customresourcedefinition.apiextensions.k8s.io/widgets.example.com (live)
+++ customresourcedefinition.apiextensions.k8s.io/widgets.example.com (after apply)
@@ -0,0 +1,9 @@
+apiVersion: apiextensions.k8s.io/v1
+kind: CustomResourceDefinition
+metadata:
+  name: widgets.example.com
+spec:
+  group: example.com
+  names:
+    kind: Widget
+  scope: Namespaced
`,
		},
		{
			Ref:      object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "web-docs"},
			Action:   plan.Create,
			Verified: plan.VerifiedDryRun,
			Source:   object.Source{File: "apps/prod/docs.yaml", Line: 1},
			Diff: "--- configmap/web-docs -n prod (live)\n" +
				"+++ configmap/web-docs -n prod (after apply)\n" +
				"@@ -0,0 +1,12 @@\n" +
				"+apiVersion: v1\n" +
				"+data:\n" +
				"+  README.md: |\n" +
				"+    # Web\n" +
				"+    Run it with:\n" +
				"+    ```sh\n" +
				"+    make run\n" +
				"+    ```\n" +
				"+kind: ConfigMap\n" +
				"+metadata:\n" +
				"+  name: web-docs\n" +
				"+  namespace: prod\n",
		},
		{
			Ref:                 object.Ref{Version: "v1", Kind: "Service", Namespace: "prod", Name: "web"},
			Action:              plan.Unchanged,
			Verified:            plan.VerifiedRecord,
			Source:              object.Source{File: "apps/prod/all.yaml", Line: 1},
			LiveResourceVersion: "2044",
		},
		{
			Ref:                 object.Ref{Version: "v1", Kind: "ServiceAccount", Namespace: "prod", Name: "web"},
			Action:              plan.Unchanged,
			Verified:            plan.VerifiedDryRun,
			Source:              object.Source{File: "apps/prod/all.yaml", Line: 19},
			LiveResourceVersion: "2045",
		},
		{
			Ref:      object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "api"},
			Action:   plan.Conflict,
			Verified: plan.VerifiedDryRun,
			Source:   object.Source{File: "apps/prod/api.yaml", Line: 1},
			Conflicts: []plan.FieldConflict{
				{Field: ".spec.replicas", Manager: "kubectl-edit"},
				{Field: `.spec.template.spec.containers[name="api"].resources.limits.memory`, Manager: "helm"},
			},
			Message: "Apply failed with 2 conflicts: conflicts with \"kubectl-edit\" using apps/v1:\n" +
				"- .spec.replicas\n" +
				"conflicts with \"helm\" using apps/v1:\n" +
				"- .spec.template.spec.containers[name=\"api\"].resources.limits.memory",
			LiveResourceVersion: "2101",
		},
		{
			Ref:      object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"},
			Action:   plan.Update,
			Verified: plan.VerifiedDryRun,
			Source:   object.Source{File: "apps/prod/all.yaml", Line: 27},
			Diff: `--- deployment.apps/web -n prod (live)
+++ deployment.apps/web -n prod (after apply)
@@ -6,7 +6,7 @@
   name: web
   namespace: prod
 spec:
-  replicas: 2
+  replicas: 3
   selector:
     matchLabels:
       app: web
@@ -18,7 +18,7 @@
     spec:
       containers:
       - name: web
-        image: nginx:1.27.0
+        image: nginx:1.27.3
         ports:
         - containerPort: 80
`,
			Images:              []plan.ImageChange{{Container: "web", Old: "nginx:1.27.0", New: "nginx:1.27.3"}},
			Warnings:            []string{`spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`},
			LiveResourceVersion: "2102",
			Fields: []plan.FieldDiff{
				{Path: "spec.replicas", Op: plan.FieldChange, Before: "2", After: "3"},
				{Path: "spec.template.spec.containers[name=web].env[name=LOG_LEVEL]", Op: plan.FieldAdd, After: `{"name":"LOG_LEVEL","value":"debug"}`},
				{Path: "spec.template.spec.containers[name=web].image", Op: plan.FieldChange, Before: "nginx:1.27.0", After: "nginx:1.27.3"},
				{Path: "spec.template.spec.containers[name=web].ports[containerPort=8080,protocol=TCP]", Op: plan.FieldRemove, Before: `{"containerPort":8080,"protocol":"TCP"}`},
			},
			Risks: []plan.Risk{
				{Kind: plan.RiskBrokenRef, Message: `deployment.apps/web -n prod (containers[name=web].env[name=LOG_LEVEL]) -> configmap/web-settings -n prod: key "level" does not exist`},
				{Kind: plan.RiskWarning, Message: `spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since v1.14; use "kubernetes.io/os" instead`},
			},
		},
		{
			Ref:    object.Ref{Group: "example.com", Version: "v1alpha1", Kind: "Widget", Namespace: "prod", Name: "w1"},
			Action: plan.Pending,
			Source: object.Source{File: "apps/prod/widget.yaml", Line: 1},
			Message: "not validated by the server: its CustomResourceDefinition " +
				"widgets.example.com is created by this plan",
			Diff: `--- widget.example.com/w1 -n prod (live)
+++ widget.example.com/w1 -n prod (after apply)
@@ -0,0 +1,7 @@
+apiVersion: example.com/v1alpha1
+kind: Widget
+metadata:
+  name: w1
+  namespace: prod
+spec:
+  size: 3
`,
		},
		{
			Ref:      object.Ref{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress", Namespace: "prod", Name: "web"},
			Action:   plan.Invalid,
			Verified: plan.VerifiedDryRun,
			Source:   object.Source{File: "apps/prod/all.yaml", Line: 61},
			Message:  `Ingress.networking.k8s.io "web" is invalid: spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified`,
		},
	}
	web := object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"}
	api := object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "api"}
	return &plan.Plan{
		Snapshot: "20261121T093015Z-7f3c9a1e",
		Summary:  plan.Summarize(changes),
		Changes:  changes,
		Images: []plan.ImageUse{
			{Ref: api, Container: "api", Before: "ghcr.io/acme/api:2.4.1", After: "ghcr.io/acme/api:2.4.1", Status: plan.ImageUnchanged},
			{Ref: web, Container: "init:migrate", After: "ghcr.io/acme/migrate:1.0.0", Status: plan.ImageNew},
			{Ref: web, Container: "web", Before: "nginx:1.27.0", After: "nginx:1.27.3", Status: plan.ImageChanged},
		},
	}
}

// planOf returns a plan of changes with its summary.
func planOf(changes ...plan.Change) *plan.Plan {
	return &plan.Plan{Snapshot: "snap-1", Summary: plan.Summarize(changes), Changes: changes}
}

// unanalysed returns p without what plan.Analyze adds: risks, field diffs
// and the image inventory.
func unanalysed(p *plan.Plan) *plan.Plan {
	p.Images = nil
	for i := range p.Changes {
		p.Changes[i].Risks, p.Changes[i].Fields = nil, nil
	}
	return p
}
