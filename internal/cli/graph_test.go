package cli_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/report/mermaidtest"
)

// graphV1 is applied first; graphV2 changes it: the ConfigMap is updated,
// the Secret is new, the Service becomes a LoadBalancer (a risk), the
// Deployment stays, and the old ConfigMap is pruned.
const graphV1 = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: NS}
data: {color: blue}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: old, namespace: NS}
data: {x: "1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: "nginx:1.27.0"
        envFrom: [{configMapRef: {name: settings}}, {secretRef: {name: creds, optional: true}}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec:
  selector: {app: web}
  ports: [{port: 80}]
`

const graphV2Changes = `---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: NS}
stringData: {password: graph-test-secret-value}
`

// TestGraphColoursThePlan plans a change against the real API server and
// checks the state the graph gives every node, and the edges between them.
func TestGraphColoursThePlan(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	inv := []string{"--store", db, "--name", ns, "--inventory-namespace", ns}
	v1 := manifests(t, ns, map[string]string{"app.yaml": graphV1})
	if r := snapply(t, append([]string{"apply", v1, "--wait=false", "-q"}, inv...)...); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	v2text := strings.Replace(graphV1, "{color: blue}", "{color: green}", 1)
	v2text = strings.Replace(v2text, "ports: [{port: 80}]", "type: LoadBalancer\n  ports: [{port: 80}]", 1)
	v2text = strings.Replace(v2text, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old, namespace: NS}\ndata: {x: \"1\"}\n---\n", "", 1)
	v2 := manifests(t, ns, map[string]string{"app.yaml": v2text + graphV2Changes})

	r := snapply(t, append([]string{"graph", v2, "-o", "json"}, inv...)...)
	if r.code != 0 {
		t.Fatalf("graph: exit %d\n%s", r.code, r.stderr)
	}
	var got struct {
		Nodes []struct {
			ID  string `json:"id"`
			Ref struct {
				Kind, Name, Namespace string
			} `json:"ref"`
			State string `json:"state"`
			Risk  bool   `json:"risk"`
		} `json:"nodes"`
		Edges []struct{ From, To, Kind string } `json:"edges"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, r.stdout)
	}
	states := map[string]string{}
	names := map[string]string{}
	for _, n := range got.Nodes {
		name := n.Ref.Kind + "/" + n.Ref.Name
		names[n.ID] = name
		states[name] = n.State
		if n.Risk {
			states[name] += "+risk"
		}
	}
	want := map[string]string{
		"ConfigMap/settings": "update+risk", // no-restart: the Deployment takes it by envFrom
		"ConfigMap/old":      "delete",
		"Secret/creds":       "create",
		"Deployment/web":     "unchanged",
		"Service/web":        "update+risk", // exposure
	}
	for name, s := range want {
		if states[name] != s {
			t.Errorf("%s: state %q, want %q", name, states[name], s)
		}
	}
	var edges []string
	for _, e := range got.Edges {
		edges = append(edges, names[e.From]+" "+e.Kind+" "+names[e.To])
	}
	wantEdges := []string{
		"Deployment/web env-from ConfigMap/settings",
		"Deployment/web env-from Secret/creds",
		"Service/web selects Deployment/web",
	}
	for _, e := range wantEdges {
		if !strings.Contains(strings.Join(edges, "\n"), e) {
			t.Errorf("edge %q missing from:\n%s", e, strings.Join(edges, "\n"))
		}
	}
	if strings.Contains(r.stdout, "graph-test-secret-value") {
		t.Error("the graph holds a Secret value")
	}

	// Mermaid: the same nodes, each with its class.
	r = snapply(t, append([]string{"graph", v2, "-o", "mermaid"}, inv...)...)
	if r.code != 0 {
		t.Fatalf("graph -o mermaid: exit %d\n%s", r.code, r.stderr)
	}
	for _, frag := range []string{"flowchart LR", ns + "/Secret/creds (create)\"]:::create", ns + "/ConfigMap/old (delete)\"]:::delete", ns + "/Deployment/web (unchanged)\"]:::unchanged", "(update, risk)\"]:::risk", "classDef create fill:"} {
		if !strings.Contains(r.stdout, frag) {
			t.Errorf("mermaid lacks %q:\n%s", frag, r.stdout)
		}
	}

	// Focus on the Secret, one edge away: the Secret and the Deployment.
	r = snapply(t, append([]string{"graph", v2, "-o", "text", "--focus", "Secret/" + ns + "/creds", "--depth", "1"}, inv...)...)
	if r.code != 0 {
		t.Fatalf("graph --focus: exit %d\n%s", r.code, r.stderr)
	}
	var lines []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") {
			lines = append(lines, l)
		}
	}
	wantLines := []string{"secret/creds -n " + ns + "  [create]", "deployment.apps/web -n " + ns + "  [unchanged]"}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("focus (-want +got):\n%s\n%s", diff, r.stdout)
	}
	if r := snapply(t, append([]string{"graph", v2, "--focus", "Secret/" + ns + "/nope"}, inv...)...); r.code == 0 || !strings.Contains(r.stderr, "no such object") {
		t.Errorf("focus on nothing: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestActionPlanHasGraphAndHTML: on a pull request the action writes the
// HTML plan next to the store (the plan-html output, for the artifact) and
// the comment draws the graph of the changes. The comment links the HTML
// plan in the run's artifacts only when the action uploads it: not in a
// public repository without a store key, nor with upload-store: false.
func TestActionPlanHasGraphAndHTML(t *testing.T) {
	const link = "[open the full plan](https://github.example/o/r/actions/runs/1001#artifacts) (snapply-plan.html in the run's artifacts)"
	for _, tc := range []struct {
		name     string
		inputs   map[string]string
		wantLink bool
	}{
		// The fixtures' repository is public: without a key nothing is uploaded.
		{"public without a store key", nil, false},
		{"public with a store key", map[string]string{"INPUT_STORE-KEY": testKeyA}, true},
		{"allow-public-store", map[string]string{"INPUT_ALLOW-PUBLIC-STORE": "true"}, true},
		{"upload-store false", map[string]string{"INPUT_STORE-KEY": testKeyA, "INPUT_UPLOAD-STORE": "false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := env.Namespace(t)
			r := newRunner(t, ns, map[string]string{"app.yaml": graphV1 + graphV2Changes})
			res := r.run("pull_request-opened", tc.inputs)
			if res.code != 0 {
				t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
			}
			if got := r.output("plan-html"); got != "snapply-plan.html" {
				t.Errorf("plan-html = %q, want snapply-plan.html", got)
			}
			page := string(mustRead(t, filepath.Join(r.workspace, "snapply-plan.html")))
			for _, want := range []string{`http-equiv="Content-Security-Policy"`, "deployment.apps/web -n " + ns, `<svg id="graph"`} {
				if !strings.Contains(page, want) {
					t.Errorf("the HTML plan lacks %q", want)
				}
			}
			if strings.Contains(page, "graph-test-secret-value") {
				t.Error("the HTML plan holds a Secret value")
			}
			comments := r.gh.Comments(pullRequestFixture)
			if len(comments) != 1 {
				t.Fatalf("%d comments", len(comments))
			}
			body := comments[0].Body
			for _, want := range []string{
				"<details><summary>Graph: 5 objects changed or next to a change</summary>",
				"```mermaid\nflowchart LR\n",
				ns + "/Secret/creds (create)\"]:::create",
			} {
				if !strings.Contains(body, want) {
					t.Errorf("comment lacks %q:\n%s", want, body)
				}
			}
			if got := strings.Contains(body, link); got != tc.wantLink {
				t.Errorf("the comment links the HTML plan in the artifacts: %v, want %v (upload-store output %q)\n%s", got, tc.wantLink, r.output("upload-store"), body)
			}
			if !tc.wantLink && strings.Contains(body, "#artifacts") {
				t.Errorf("the comment points to artifacts that are not uploaded:\n%s", body)
			}
		})
	}
}

func TestGraphBadFlags(t *testing.T) {
	dir := manifests(t, "x", map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n"})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"graph", dir, "-o", "svg"}, `unknown output format "svg": want mermaid, dot, json, text`},
		{[]string{"graph", dir, "--focus", "a/b/c/d/e/f"}, "--focus: object reference"},
		{[]string{"show", "latest", "-o", "pdf"}, `unknown output format "pdf": want yaml or html`},
		{[]string{"plan", dir, "-o", "svg"}, `unknown output format "svg": want text, markdown, json or html`},
	} {
		r := runRaw(t, tt.args...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 1 and one line with %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// graphEdgeKinds has an edge of most kinds the graph knows: env-from,
// env-key, volume, service-account, image-pull-secret, selects, backend,
// scale-target, disruption-budget, role-ref and subject.
const graphEdgeKinds = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      serviceAccountName: web
      imagePullSecrets: [{name: registry}]
      containers:
      - name: web
        image: nginx:1.27
        envFrom: [{secretRef: {name: web-creds}}]
        env: [{name: MODE, valueFrom: {configMapKeyRef: {name: web-config, key: mode}}}]
      volumes: [{name: cache, persistentVolumeClaim: {claimName: web-cache}}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: NS}
data: {mode: fast}
---
apiVersion: v1
kind: Secret
metadata: {name: web-creds, namespace: NS}
stringData: {password: mermaid-test-secret-value}
---
apiVersion: v1
kind: Secret
metadata: {name: registry, namespace: NS}
type: kubernetes.io/dockerconfigjson
stringData: {.dockerconfigjson: '{"auths":{}}'}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: web, namespace: NS}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: web-cache, namespace: NS}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: NS}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80}]
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: NS}
spec:
  rules: [{host: shop.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {name: http}}}}]}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: NS}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: NS}
spec:
  minAvailable: 1
  selector: {matchExpressions: [{key: tier, operator: In, values: [front]}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: NS}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: web-reader, namespace: NS}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: web}, {kind: User, name: alice}]
`

// TestGraphMermaidParses runs `snapply graph DIR -o mermaid` against the
// real API server, on objects with edges of many kinds, before and after an
// apply (plan states, a risk), and feeds its stdout to Mermaid's own parser.
func TestGraphMermaidParses(t *testing.T) {
	ns := env.Namespace(t)
	db := filepath.Join(t.TempDir(), "s.db")
	inv := []string{"--store", db, "--name", ns, "--inventory-namespace", ns}
	v1 := manifests(t, ns, map[string]string{"app.yaml": graphEdgeKinds})
	var diagrams []string
	graph := func(dir string) {
		t.Helper()
		r := snapply(t, append([]string{"graph", dir, "-o", "mermaid"}, inv...)...)
		if r.code != 0 {
			t.Fatalf("graph -o mermaid: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, kind := range []string{"env-from", "env-key", "volume", "service-account", "image-pull-secret", "selects", "backend", "scale-target", "disruption-budget", "role-ref", "subject"} {
			if !strings.Contains(r.stdout, kind) {
				t.Errorf("no %s edge in:\n%s", kind, r.stdout)
			}
		}
		if strings.Contains(r.stdout, "mermaid-test-secret-value") {
			t.Error("the graph holds a Secret value")
		}
		diagrams = append(diagrams, r.stdout)
	}
	graph(v1) // every object to create
	if r := snapply(t, append([]string{"apply", v1, "--wait=false", "-q"}, inv...)...); r.code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	v2 := strings.Replace(graphEdgeKinds, "{mode: fast}", "{mode: slow}", 1)
	v2 = strings.Replace(v2, "ports: [{name: http, port: 80}]", "type: NodePort\n  ports: [{name: http, port: 80}]", 1)
	graph(manifests(t, ns, map[string]string{"app.yaml": v2})) // updates with risks, unchanged objects
	for i, r := range mermaidtest.Parse(t, diagrams) {
		if !r.OK || r.Type != "flowchart-v2" {
			t.Errorf("diagram %d does not parse: %+v\n%s", i, r, diagrams[i])
		}
	}
}
