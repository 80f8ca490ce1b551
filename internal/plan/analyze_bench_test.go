package plan_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/snapshot"
)

// benchSet returns namespaces of 100 objects each, shaped like the fixture
// of `make bench`: per block of ten, four ConfigMaps, three Deployments
// that read one each and three Services that select them. changed changes
// every tenth object (a ConfigMap value, an image, a Service port).
func benchSet(t testing.TB, prefix string, namespaces int, changed bool) []object.Object {
	var b strings.Builder
	for n := range namespaces {
		ns := fmt.Sprintf("%s-%02d", prefix, n)
		for k := range 100 {
			block, slot := k/10, k%10
			change := changed && slot == block%10
			if b.Len() > 0 {
				b.WriteString("\n---\n")
			}
			switch {
			case slot < 4:
				level := "info"
				if change {
					level = "debug"
				}
				fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config-%03d, namespace: %s}\ndata: {LOG_LEVEL: %s, app.properties: \"a=1\\nb=2\\n\"}", 4*block+slot, ns, level)
			case slot < 7:
				i := 3*block + slot - 4
				image := "registry.k8s.io/pause:3.10"
				if change {
					image = "registry.k8s.io/pause:3.9"
				}
				fmt.Fprintf(&b, `apiVersion: apps/v1
kind: Deployment
metadata: {name: app-%03d, namespace: %s}
spec:
  replicas: 1
  selector: {matchLabels: {app: app-%03d}}
  template:
    metadata: {labels: {app: app-%03d}}
    spec:
      containers:
      - name: app
        image: %s
        envFrom: [{configMapRef: {name: config-%03d}}]
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: 10m, memory: 16Mi}}`, i, ns, i, i, image, i)
			default:
				i := 3*block + slot - 7
				port := 80
				if change {
					port = 8080
				}
				fmt.Fprintf(&b, "apiVersion: v1\nkind: Service\nmetadata: {name: app-%03d, namespace: %s}\nspec:\n  selector: {app: app-%03d}\n  ports: [{port: %d, targetPort: 80}]", i, ns, i, port)
			}
		}
	}
	return objects(t, "", b.String())
}

// BenchmarkAnalyze measures the analysis pass (field diffs with the
// server's schemas, read by a new client each time; risks; broken
// references; images) over a plan of 1,000 objects, 100 of them changed,
// and reports it as a share of that plan's Compute.
func BenchmarkAnalyze(b *testing.B) {
	c := client(b)
	ctx := context.Background()
	prefix := "bench-analyze"
	for n := range 10 {
		ns := fmt.Sprintf("%s-%02d", prefix, n)
		apply(b, c, kube.FieldManager, objects(b, "", "apiVersion: v1\nkind: Namespace\nmetadata: {name: "+ns+"}"))
	}
	base := benchSet(b, prefix, 10, false)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	for _, o := range base {
		g.Go(func() error {
			m, err := c.Mapping(o.Ref.GroupVersionKind())
			if err != nil {
				return err
			}
			_, err = c.Apply(gctx, o.Obj, m, kube.ApplyOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		b.Fatal(err)
	}
	desired := benchSet(b, prefix, 10, true)
	refs := make([]object.Ref, len(desired))
	for i, d := range desired {
		refs[i] = d.Ref
	}
	live, err := snapshot.Capture(ctx, c, refs, snapshot.DefaultOptions())
	if err != nil {
		b.Fatal(err)
	}
	opts := plan.DefaultOptions()
	opts.Redact = secret.NewRedactor([]byte("k")).Redact
	start := time.Now()
	p, err := plan.Compute(ctx, c, plan.Input{Desired: desired, Live: live.Index()}, opts)
	if err != nil {
		b.Fatal(err)
	}
	computed := time.Since(start)
	if p.Summary.Update == 0 {
		b.Fatalf("no updates: %+v", p.Summary)
	}

	b.ResetTimer()
	start = time.Now()
	for b.Loop() {
		fresh, err := kube.NewForConfig(env.Config)
		if err != nil {
			b.Fatal(err)
		}
		plan.Analyze(p, plan.AnalyzeOptions{Schemas: fresh, Live: live.Index(), Redact: opts.Redact,
			Covered: snapshot.Covered(snapshot.ScopeNamespaces, refs, live.Skipped)})
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(computed.Milliseconds()), "compute-ms")
	b.ReportMetric(100*float64(per)/float64(computed), "%-of-compute")
}
