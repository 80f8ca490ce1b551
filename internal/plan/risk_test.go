package plan_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

// risksOf returns the risks of kind on the change of ref.
func risksOf(t *testing.T, p *plan.Plan, ref string, kind plan.RiskKind) []string {
	t.Helper()
	var out []string
	for _, r := range find(t, p, ref).Risks {
		if r.Kind == kind {
			out = append(out, r.Message)
		}
	}
	return out
}

// riskCase is a live state, a desired state and a prune set, and what the
// plan must (or must not) flag.
type riskCase struct {
	name    string
	live    string   // applied first, as snapply; may be empty
	desired string   // planned
	prune   []string // "kind name" of live objects to prune, in NS
	ref     string   // the change to look at ("NS" is the namespace)
	kind    plan.RiskKind
	want    string // a part of the message; "" means no risk of kind
}

func pruneRefs(ns string, prune []string) []object.Ref {
	var out []object.Ref
	for _, p := range prune {
		kind, name, _ := strings.Cut(p, " ")
		ref := object.Ref{Version: "v1", Kind: kind, Namespace: ns, Name: name}
		if kind == "StatefulSet" || kind == "Deployment" {
			ref.Group = "apps"
		}
		out = append(out, ref)
	}
	return out
}

func runRiskCases(t *testing.T, cases []riskCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := client(t)
			ns := env.Namespace(t)
			if tc.live != "" {
				apply(t, c, kube.FieldManager, objects(t, ns, tc.live))
			}
			var desired []object.Object
			if tc.desired != "" {
				desired = objects(t, ns, tc.desired)
			}
			p := analyzedPrune(t, c, desired, pruneRefs(ns, tc.prune))
			ref := strings.ReplaceAll(tc.ref, "NS", ns)
			got := risksOf(t, p, ref, tc.kind)
			want := strings.ReplaceAll(tc.want, "NS", ns)
			switch {
			case want == "" && len(got) > 0:
				t.Errorf("%s: unexpected %s risk: %q", ref, tc.kind, got)
			case want != "" && !strings.Contains(strings.Join(got, "\n"), want):
				t.Errorf("%s: %s risks %q, want one containing %q (all risks: %+v)", ref, tc.kind, got, want, find(t, p, ref).Risks)
			}
		})
	}
}

const deploy = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}ANNOT}
    spec:
      containers:
      - name: web
        image: IMAGE
        ENV
      VOLUMES`

// workload returns the Deployment web with an image, env lines, volume
// lines and a pod template annotation.
func workload(image, env, volumes, annot string) string {
	r := strings.NewReplacer("IMAGE", image, "ENV", env, "VOLUMES", volumes, "ANNOT", annot)
	return r.Replace(deploy)
}

const settings = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {level: LEVEL}`

func cm(level string) string { return strings.ReplaceAll(settings, "LEVEL", level) }

const envFromSettings = "env: [{name: LEVEL, valueFrom: {configMapKeyRef: {name: settings, key: KEY}}}]"

func TestRiskReplace(t *testing.T) {
	changedSelector := strings.ReplaceAll(workload("nginx:1.27.0", "", "", ""), "app: web", "app: web2")
	runRiskCases(t, []riskCase{
		{name: "immutable selector", live: workload("nginx:1.27.0", "", "", ""), desired: changedSelector,
			ref: "deployment.apps/web -n NS", kind: plan.RiskReplace, want: "immutable field"},
		{name: "mutable image", live: workload("nginx:1.27.0", "", "", ""), desired: workload("nginx:1.27.3", "", "", ""),
			ref: "deployment.apps/web -n NS", kind: plan.RiskReplace},
	})
}

const pvc = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: NS}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}`

const service = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec:
  TYPE
  selector: {app: web}
  ports: [{name: http, port: 80}]`

func svc(typ string) string { return strings.ReplaceAll(service, "TYPE", typ) }

const statefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: NS}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: IMAGE}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: SIZE}}}`

func sts(image, size string) string {
	return strings.NewReplacer("IMAGE", image, "SIZE", size).Replace(statefulSet)
}

func TestRiskDataLoss(t *testing.T) {
	web := workload("nginx:1.27.0", "", "", "")
	mounted := workload("nginx:1.27.0", "", "volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]", "")
	runRiskCases(t, []riskCase{
		{name: "pvc pruned", live: pvc, prune: []string{"PersistentVolumeClaim data"},
			ref: "persistentvolumeclaim/data -n NS", kind: plan.RiskDataLoss, want: "deletes its volume's data"},
		{name: "pvc pruned while mounted", live: pvc + "\n---\n" + mounted, desired: mounted, prune: []string{"PersistentVolumeClaim data"},
			ref: "persistentvolumeclaim/data -n NS", kind: plan.RiskDataLoss, want: "deployment.apps/web -n NS still mounts it"},
		{name: "volumeClaimTemplates change", live: sts("postgres:17.1", "1Gi"), desired: sts("postgres:17.1", "5Gi"),
			ref: "statefulset.apps/db -n NS", kind: plan.RiskDataLoss, want: "volumeClaimTemplates change"},
		{name: "statefulset image change", live: sts("postgres:17.1", "1Gi"), desired: sts("postgres:17.2", "1Gi"),
			ref: "statefulset.apps/db -n NS", kind: plan.RiskDataLoss},
		{name: "statefulset pruned", live: sts("postgres:17.1", "1Gi"), prune: []string{"StatefulSet db"},
			ref: "statefulset.apps/db -n NS", kind: plan.RiskDataLoss, want: "deleting a StatefulSet"},
		{name: "configmap pruned", live: cm("info"), prune: []string{"ConfigMap settings"},
			ref: "configmap/settings -n NS", kind: plan.RiskDataLoss},
		{name: "service pruned while it serves", live: svc("type: ClusterIP") + "\n---\n" + web, desired: web, prune: []string{"Service web"},
			ref: "service/web -n NS", kind: plan.RiskDataLoss, want: "deployment.apps/web -n NS still serves it"},
		{name: "service pruned that serves nothing", live: strings.ReplaceAll(svc("type: ClusterIP"), "app: web", "app: gone"), prune: []string{"Service web"},
			ref: "service/web -n NS", kind: plan.RiskDataLoss},
	})
}

func TestRiskBrokenRef(t *testing.T) {
	keyRef := func(key string) string {
		return workload("nginx:1.27.0", strings.ReplaceAll(envFromSettings, "KEY", key), "", "")
	}
	ingress := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: NS}
spec:
  rules:
  - host: web.example.com
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {PORT}}}}`
	binding := `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: web, namespace: NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: SA, namespace: NS}]`
	role := `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: NS}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]`
	sa := `apiVersion: v1
kind: ServiceAccount
metadata: {name: web, namespace: NS}`
	hpa := `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: NS}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: TARGET}
  minReplicas: 1
  maxReplicas: 3`
	runRiskCases(t, []riskCase{
		{name: "missing configmap key", desired: cm("info") + "\n---\n" + keyRef("missing"),
			ref: "deployment.apps/web -n NS", kind: plan.RiskBrokenRef, want: `-> configmap/settings -n NS: key "missing" does not exist`},
		{name: "present configmap key", desired: cm("info") + "\n---\n" + keyRef("level"),
			ref: "deployment.apps/web -n NS", kind: plan.RiskBrokenRef},
		{name: "optional missing configmap", desired: workload("nginx:1.27.0", "envFrom: [{configMapRef: {name: nope, optional: true}}]", "", ""),
			ref: "deployment.apps/web -n NS", kind: plan.RiskBrokenRef},
		{name: "missing secret and service account", desired: workload("nginx:1.27.0", "envFrom: [{secretRef: {name: creds}}]", "serviceAccountName: robot", ""),
			ref: "deployment.apps/web -n NS", kind: plan.RiskBrokenRef, want: "-> secret/creds -n NS: does not exist"},
		{name: "configmap pruned under a live workload", live: cm("info") + "\n---\n" + keyRef("level"), prune: []string{"ConfigMap settings"},
			ref: "configmap/settings -n NS", kind: plan.RiskBrokenRef, want: "deployment.apps/web -n NS (containers[name=web].env[name=LEVEL]) -> configmap/settings -n NS: does not exist"},
		{name: "ingress to a missing port", desired: svc("type: ClusterIP") + "\n---\n" + strings.ReplaceAll(ingress, "PORT", "number: 8080"),
			ref: "ingress.networking.k8s.io/web -n NS", kind: plan.RiskBrokenRef, want: "-> service/web -n NS: port 8080 does not exist"},
		{name: "ingress to a named port", desired: svc("type: ClusterIP") + "\n---\n" + strings.ReplaceAll(ingress, "PORT", "name: http"),
			ref: "ingress.networking.k8s.io/web -n NS", kind: plan.RiskBrokenRef},
		{name: "hpa to a missing target", desired: strings.ReplaceAll(hpa, "TARGET", "api"),
			ref: "horizontalpodautoscaler.autoscaling/web -n NS", kind: plan.RiskBrokenRef, want: "-> deployment.apps/api -n NS: does not exist"},
		{name: "hpa to its target", desired: workload("nginx:1.27.0", "", "", "") + "\n---\n" + strings.ReplaceAll(hpa, "TARGET", "web"),
			ref: "horizontalpodautoscaler.autoscaling/web -n NS", kind: plan.RiskBrokenRef},
		{name: "rolebinding to missing role and account", desired: strings.ReplaceAll(binding, "SA", "web"),
			ref: "rolebinding.rbac.authorization.k8s.io/web -n NS", kind: plan.RiskBrokenRef, want: "-> role.rbac.authorization.k8s.io/reader -n NS: does not exist"},
		{name: "rolebinding to its role and account", desired: role + "\n---\n" + sa + "\n---\n" + strings.ReplaceAll(binding, "SA", "web"),
			ref: "rolebinding.rbac.authorization.k8s.io/web -n NS", kind: plan.RiskBrokenRef},
		{name: "service selecting nothing", desired: strings.ReplaceAll(svc("type: ClusterIP"), "app: web", "app: nothing") + "\n---\n" + workload("nginx:1.27.0", "", "", ""),
			ref: "service/web -n NS", kind: plan.RiskBrokenRef, want: "its selector matches no pod template"},
		{name: "service selecting a workload", desired: svc("type: ClusterIP") + "\n---\n" + workload("nginx:1.27.0", "", "", ""),
			ref: "service/web -n NS", kind: plan.RiskBrokenRef},
	})
}

func TestRiskRBAC(t *testing.T) {
	role := func(verbs string) string {
		return `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: NS}
rules: [{apiGroups: [""], resources: [pods, configmaps], verbs: [` + verbs + `]}]`
	}
	crb := `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: NS-admin}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ROLE}
subjects: [{kind: ServiceAccount, name: default, namespace: NS}]`
	runRiskCases(t, []riskCase{
		{name: "role gains verbs", live: role("get"), desired: role("get, list, delete"),
			ref: "role.rbac.authorization.k8s.io/reader -n NS", kind: plan.RiskRBAC, want: "gains delete configmaps, delete pods, list configmaps"},
		{name: "role loses verbs", live: role("get, list, delete"), desired: role("get"),
			ref: "role.rbac.authorization.k8s.io/reader -n NS", kind: plan.RiskRBAC},
		{name: "new role with wildcard", desired: role(`"*"`),
			ref: "role.rbac.authorization.k8s.io/reader -n NS", kind: plan.RiskRBAC, want: "grants wildcards: * configmaps, * pods"},
		{name: "binding to cluster-admin", desired: strings.ReplaceAll(crb, "ROLE", "cluster-admin"),
			ref: "clusterrolebinding.rbac.authorization.k8s.io/NS-admin", kind: plan.RiskRBAC, want: "binds ServiceAccount default -n NS to cluster-admin"},
		{name: "binding to a ClusterRole with wildcards", desired: `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS-all}
rules: [{apiGroups: ["*"], resources: ["*"], verbs: [get]}]
---
` + strings.ReplaceAll(crb, "ROLE", "NS-all"),
			ref: "clusterrolebinding.rbac.authorization.k8s.io/NS-admin", kind: plan.RiskRBAC, want: "to ClusterRole NS-all, which grants wildcards (get *.*)"},
		{name: "binding to view", desired: strings.ReplaceAll(crb, "ROLE", "view"),
			ref: "clusterrolebinding.rbac.authorization.k8s.io/NS-admin", kind: plan.RiskRBAC},
	})
}

func TestRiskExposure(t *testing.T) {
	ingress := `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: NS}
spec:
  rules:
  - host: HOST
    http:
      paths:
      - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}`
	runRiskCases(t, []riskCase{
		{name: "new nodeport", desired: svc("type: NodePort"),
			ref: "service/web -n NS", kind: plan.RiskExposure, want: "a NodePort Service exposes"},
		{name: "clusterip to loadbalancer", live: svc("type: ClusterIP"), desired: svc("type: LoadBalancer"),
			ref: "service/web -n NS", kind: plan.RiskExposure, want: "a LoadBalancer Service exposes"},
		{name: "new clusterip", desired: svc("type: ClusterIP"),
			ref: "service/web -n NS", kind: plan.RiskExposure},
		{name: "new ingress host", live: strings.ReplaceAll(ingress, "HOST", "a.example.com"), desired: strings.ReplaceAll(ingress, "HOST", "b.example.com"),
			ref: "ingress.networking.k8s.io/web -n NS", kind: plan.RiskExposure, want: "new Ingress host b.example.com"},
		{name: "same ingress host", live: strings.ReplaceAll(ingress, "HOST", "a.example.com"),
			desired: strings.ReplaceAll(strings.ReplaceAll(ingress, "HOST", "a.example.com"), "path: /", "path: /v2"),
			ref:     "ingress.networking.k8s.io/web -n NS", kind: plan.RiskExposure},
	})
}

func TestRiskImage(t *testing.T) {
	runRiskCases(t, []riskCase{
		{name: "to latest", live: workload("nginx:1.27.0", "", "", ""), desired: workload("nginx:latest", "", "", ""),
			ref: "deployment.apps/web -n NS", kind: plan.RiskImage, want: "to the latest tag"},
		{name: "to no tag", live: workload("nginx:1.27.0", "", "", ""), desired: workload("nginx", "", "", ""),
			ref: "deployment.apps/web -n NS", kind: plan.RiskImage, want: "without a tag"},
		{name: "to another registry", live: workload("nginx:1.27.0", "", "", ""), desired: workload("ghcr.io/evil/nginx:1.27.0", "", "", ""),
			ref: "deployment.apps/web -n NS", kind: plan.RiskImage, want: "another registry: docker.io -> ghcr.io"},
		{name: "to a pinned version", live: workload("nginx:1.27.0", "", "", ""), desired: workload("nginx:1.27.3", "", "", ""),
			ref: "deployment.apps/web -n NS", kind: plan.RiskImage},
	})
}

func TestRiskNoRestart(t *testing.T) {
	env := strings.ReplaceAll(envFromSettings, "KEY", "level")
	web := workload("nginx:1.27.0", env, "", "")
	bumped := workload("nginx:1.27.0", env, "", ", annotations: {config-hash: abc123}")
	mounted := workload("nginx:1.27.0", "", "volumes: [{name: cfg, configMap: {name: settings}}]", "")
	runRiskCases(t, []riskCase{
		{name: "consumed through env, template unchanged", live: cm("info") + "\n---\n" + web, desired: cm("debug") + "\n---\n" + web,
			ref: "configmap/settings -n NS", kind: plan.RiskNoRestart, want: "deployment.apps/web -n NS consumes it through env"},
		{name: "consumed through a volume, workload not in the set", live: cm("info") + "\n---\n" + mounted, desired: cm("debug"),
			ref: "configmap/settings -n NS", kind: plan.RiskNoRestart, want: "deployment.apps/web -n NS consumes it through a volume"},
		{name: "pod template hash bump", live: cm("info") + "\n---\n" + web, desired: cm("debug") + "\n---\n" + bumped,
			ref: "configmap/settings -n NS", kind: plan.RiskNoRestart},
		{name: "consumed by nobody", live: cm("info"), desired: cm("debug"),
			ref: "configmap/settings -n NS", kind: plan.RiskNoRestart},
	})
}

// TestRiskWarningDeprecatedAPI: the server warns about a deprecated API
// version (a CRD version marked deprecated) and a deprecated field; each
// shows as a warning risk on its object.
func TestRiskWarningDeprecatedAPI(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)
	apply(t, c, kube.FieldManager, objects(t, ns, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.NS.example.com}
spec:
  group: NS.example.com
  scope: Namespaced
  names: {kind: Gadget, plural: gadgets, singular: gadget, listKind: GadgetList}
  versions:
  - name: v1beta1
    served: true
    storage: false
    deprecated: true
    deprecationWarning: "NS.example.com/v1beta1 Gadget is deprecated; use NS.example.com/v1"
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}`))
	waitServed(t, c, schema.GroupVersionKind{Group: ns + ".example.com", Version: "v1beta1", Kind: "Gadget"})

	old := `apiVersion: NS.example.com/v1beta1
kind: Gadget
metadata: {name: g1, namespace: NS}
spec: {size: 1}`
	current := strings.ReplaceAll(old, "v1beta1", "v1")
	nodeSelector := strings.Replace(workload("nginx:1.27.0", "", "", ""), "    spec:\n", "    spec:\n      nodeSelector: {beta.kubernetes.io/arch: amd64}\n", 1)

	p := analyzed(t, c, objects(t, ns, old+"\n---\n"+nodeSelector))
	if got := risksOf(t, p, "gadget."+ns+".example.com/g1 -n "+ns, plan.RiskWarning); len(got) != 1 || !strings.Contains(got[0], "v1beta1 Gadget is deprecated") {
		t.Errorf("deprecated version: warning risks %q", got)
	}
	if got := risksOf(t, p, "deployment.apps/web -n "+ns, plan.RiskWarning); len(got) != 1 || !strings.Contains(got[0], "beta.kubernetes.io/arch") {
		t.Errorf("deprecated node label: warning risks %q", got)
	}
	p = analyzed(t, c, objects(t, ns, current+"\n---\n"+workload("nginx:1.27.0", "", "", "")))
	for _, ch := range p.Changes {
		if got := risksOf(t, p, ch.Ref.String(), plan.RiskWarning); len(got) > 0 {
			t.Errorf("%s: current API, warning risks %q", ch.Ref, got)
		}
	}
}

// TestAdmissionPolicyWarnIsAPolicyVerdict: a ValidatingAdmissionPolicy in
// Warn mode that matches an object is a warn verdict on that object naming
// the policy (not a raw warning risk), the object is still planned as a
// create, and an object the policy accepts has no verdict. The raw warning
// is checked against the API server's own wording.
func TestAdmissionPolicyWarnIsAPolicyVerdict(t *testing.T) {
	c := client(t)
	ns := env.Namespace(t)
	apply(t, c, kube.FieldManager, objects(t, ns, `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: NS-team-label}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: [""], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [configmaps]}
  validations:
  - expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
    message: every ConfigMap needs a team label
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: NS-team-binding}
spec:
  policyName: NS-team-label
  validationActions: [Warn]
  matchResources:
    namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: NS}}`))

	desired := `apiVersion: v1
kind: ConfigMap
metadata: {name: unlabelled, namespace: NS}
data: {a: b}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: labelled, namespace: NS, labels: {team: web}}
data: {a: b}`
	want := plan.PolicyResult{Rule: "ValidatingAdmissionPolicy/" + ns + "-team-label", Level: plan.PolicyWarn, Message: "every ConfigMap needs a team label", Admission: true}
	// The server loads a new policy within a few seconds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := analyzed(t, c, objects(t, ns, desired))
		ch := find(t, p, "configmap/unlabelled -n "+ns)
		if len(ch.Policy) > 0 || len(ch.Warnings) > 0 {
			if len(ch.Policy) != 1 || ch.Policy[0] != want {
				t.Errorf("verdicts %+v (warnings %q), want [%+v]", ch.Policy, ch.Warnings, want)
			}
			if ch.Action != plan.Create {
				t.Errorf("action %s, want create: a warn verdict does not block", ch.Action)
			}
			if got := risksOf(t, p, ch.Ref.String(), plan.RiskWarning); len(got) > 0 {
				t.Errorf("the verdict is also a warning risk: %q", got)
			}
			if deny, warn := p.PolicyCounts(); deny != 0 || warn != 1 {
				t.Errorf("policy counts %d deny, %d warn; want 0, 1", deny, warn)
			}
			if err := p.PolicyError(); err != nil {
				t.Errorf("a warn verdict blocks the plan: %v", err)
			}
			if other := find(t, p, "configmap/labelled -n "+ns); len(other.Policy)+len(other.Warnings) > 0 {
				t.Errorf("object the policy accepts: verdicts %+v, warnings %q", other.Policy, other.Warnings)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no verdict from the policy in Warn mode after 30s")
		}
		time.Sleep(500 * time.Millisecond)
	}
	// The API server's own words, which kube.AdmissionWarning reads.
	_, warnings, err := c.DryRunApply(context.Background(), objects(t, ns, desired)[0].Obj, false)
	if err != nil {
		t.Fatal(err)
	}
	raw := "Validation failed for ValidatingAdmissionPolicy '" + ns + "-team-label' with binding '" + ns + "-team-binding': every ConfigMap needs a team label"
	if len(warnings) != 1 || warnings[0] != raw {
		t.Errorf("server warnings %q, want [%q]", warnings, raw)
	}
}

// waitServed waits until the server serves gvk.
func waitServed(t *testing.T, c *kube.Client, gvk schema.GroupVersionKind) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if served, _, err := c.Scope(gvk); err == nil && served {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not served after 30s", gvk)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
