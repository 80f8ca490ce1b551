package policy_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/policy"
)

const examples = "../../examples/policies"

func load(t testing.TB, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return obj
}

// TestExamplePolicies checks every shipped rule on its own pair of
// objects: pass.yaml gets no verdict of the rule, fail.yaml at least one,
// at the rule's level.
func TestExamplePolicies(t *testing.T) {
	ctx := context.Background()
	set, err := policy.Load(ctx, examples)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(examples, "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 4 || len(dirs) > 6 {
		t.Fatalf("%d example rules, want 4 to 6", len(dirs))
	}
	for _, d := range dirs {
		rule := d.Name()
		t.Run(rule, func(t *testing.T) {
			want := plan.PolicyDeny
			if strings.HasPrefix(rule, "warn_") {
				want = plan.PolicyWarn
			}
			for _, c := range []struct {
				file string
				fail bool
			}{{"pass.yaml", false}, {"fail.yaml", true}} {
				res, err := set.Eval(ctx, policy.Input{Object: load(t, filepath.Join(examples, "testdata", rule, c.file)), Action: plan.Create})
				if err != nil {
					t.Fatal(err)
				}
				var got []plan.PolicyResult
				for _, r := range res {
					if r.Rule == rule {
						got = append(got, r)
					}
				}
				switch {
				case c.fail && len(got) == 0:
					t.Errorf("%s: no verdict of %s; all verdicts: %+v", c.file, rule, res)
				case !c.fail && len(got) > 0:
					t.Errorf("%s: unexpected verdicts %+v", c.file, got)
				}
				for _, r := range got {
					if r.Level != want || !strings.HasPrefix(r.Message, "Deployment/web: ") {
						t.Errorf("%s: verdict %+v, want level %s and a message naming the object", c.file, r, want)
					}
				}
			}
		})
	}
}

func write(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSyntaxErrorNamesFileAndLine(t *testing.T) {
	dir := write(t, map[string]string{
		"ok.rego":  "package main\n\ndeny contains \"x\" if false\n",
		"bad.rego": "package main\n\ndeny contains msg if {\n\tmsg := \n}\n",
	})
	_, err := policy.Load(context.Background(), dir)
	if err == nil {
		t.Fatal("no error")
	}
	want := "policy " + filepath.Join(dir, "bad.rego") + ":5: rego_parse_error: "
	if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q, want one line starting %q", err, want)
	}
}

func TestWrongPackageIsRefused(t *testing.T) {
	dir := write(t, map[string]string{"k8s.rego": "package kubernetes\n\ndeny contains \"x\" if true\n"})
	_, err := policy.Load(context.Background(), dir)
	if err == nil || !strings.Contains(err.Error(), "k8s.rego:1: package kubernetes: snapply reads package main") {
		t.Errorf("error %v", err)
	}
}

// TestConftestForms: v0 syntax, violation objects with msg, warn, and the
// plan's action and live object under data.snapply.
func TestConftestForms(t *testing.T) {
	dir := write(t, map[string]string{
		"v0.rego": "package main\n\ndeny[msg] {\n\tinput.kind == \"ConfigMap\"\n\tmsg := \"v0 deny\"\n}\n",
		"v1.rego": `package main

violation contains {"msg": "a violation", "details": {}} if input.kind == "ConfigMap"

warn_scale contains msg if {
	data.snapply.action == "update"
	data.snapply.live.data.k != input.data.k
	msg := sprintf("k changes from %s to %s", [data.snapply.live.data.k, input.data.k])
}
`,
		"v1_test.rego": "package main\n\nthis is not parsed\n",
	})
	set, err := policy.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "2"}}
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "1"}}
	res, err := set.Eval(context.Background(), policy.Input{Object: obj, Action: plan.Update, Live: live})
	if err != nil {
		t.Fatal(err)
	}
	want := []plan.PolicyResult{
		{Rule: "deny", Level: plan.PolicyDeny, Message: "v0 deny"},
		{Rule: "violation", Level: plan.PolicyDeny, Message: "a violation"},
		{Rule: "warn_scale", Level: plan.PolicyWarn, Message: "k changes from 1 to 2"},
	}
	if len(res) != len(want) {
		t.Fatalf("verdicts %+v, want %+v", res, want)
	}
	for i := range want {
		if res[i] != want[i] {
			t.Errorf("verdict %d: %+v, want %+v", i, res[i], want[i])
		}
	}
	// A create has no live object: the warn rule does not fire.
	res, err = set.Eval(context.Background(), policy.Input{Object: obj, Action: plan.Create})
	if err != nil || len(res) != 2 {
		t.Errorf("create: %+v, %v", res, err)
	}
}

// TestDeleteRules: an object the plan deletes is judged by the delete
// rules only, and those rules judge nothing else.
func TestDeleteRules(t *testing.T) {
	dir := write(t, map[string]string{"p.rego": `package main

deny contains msg if {
	input.kind == "PersistentVolumeClaim"
	not input.metadata.labels.owner
	msg := "no owner label"
}

deny_delete contains msg if {
	input.kind == "PersistentVolumeClaim"
	msg := sprintf("%s: deleting it deletes its volume", [input.metadata.name])
}

warn_delete_config contains msg if {
	input.kind == "ConfigMap"
	data.snapply.action == "delete"
	msg := "a ConfigMap goes"
}
`})
	set, err := policy.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	pvc := map[string]any{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": map[string]any{"name": "data"}}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c"}}
	for _, c := range []struct {
		obj    map[string]any
		action plan.Action
		want   []plan.PolicyResult
	}{
		{pvc, plan.Create, []plan.PolicyResult{{Rule: "deny", Level: plan.PolicyDeny, Message: "no owner label"}}},
		{pvc, plan.Unchanged, []plan.PolicyResult{{Rule: "deny", Level: plan.PolicyDeny, Message: "no owner label"}}},
		{pvc, plan.Delete, []plan.PolicyResult{{Rule: "deny_delete", Level: plan.PolicyDeny, Message: "data: deleting it deletes its volume"}}},
		{cm, plan.Delete, []plan.PolicyResult{{Rule: "warn_delete_config", Level: plan.PolicyWarn, Message: "a ConfigMap goes"}}},
		{cm, plan.Update, nil},
	} {
		res, err := set.Eval(context.Background(), policy.Input{Object: c.obj, Action: c.action, Live: c.obj})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(c.want) || (len(res) > 0 && res[0] != c.want[0]) {
			t.Errorf("%s %s: verdicts %+v, want %+v", c.action, c.obj["kind"], res, c.want)
		}
	}
	for rule, want := range map[string]bool{"deny_delete": true, "warn_delete_pvc": true, "violation_delete": true, "deny_deleted": false, "deny": false, "warn_no_delete": false} {
		if got := policy.IsDeleteRule(rule); got != want {
			t.Errorf("IsDeleteRule(%q) = %v", rule, got)
		}
	}
}

// BenchmarkExamplePolicies evaluates the shipped policies on one
// Deployment: the cost per object of --policy examples/policies.
func BenchmarkExamplePolicies(b *testing.B) {
	ctx := context.Background()
	set, err := policy.Load(ctx, examples)
	if err != nil {
		b.Fatal(err)
	}
	obj := load(b, filepath.Join(examples, "testdata", "deny_registry", "fail.yaml"))
	b.ResetTimer()
	for range b.N {
		if _, err := set.Eval(ctx, policy.Input{Object: obj, Action: plan.Update, Live: obj}); err != nil {
			b.Fatal(err)
		}
	}
}
