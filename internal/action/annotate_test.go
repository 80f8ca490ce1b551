package action

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
)

func TestAnnotate(t *testing.T) {
	deploy := object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "prod", Name: "web"}
	p := &plan.Plan{Changes: []plan.Change{
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "settings"}, Action: plan.Unchanged, Source: object.Source{File: "apps/settings.yaml", Line: 1}},
		{
			Ref: deploy, Action: plan.Conflict, Source: object.Source{File: "apps/web/deployment.yaml", Line: 1},
			Conflicts: []plan.FieldConflict{{Field: ".spec.replicas", Manager: "kubectl-scale"}, {Field: ".spec.template.spec.containers[name=\"web\"].image", Manager: "kubectl-edit"}},
			Message:   "change git to accept the live values, or force this object",
		},
		{
			Ref: object.Ref{Version: "v1", Kind: "Service", Namespace: "prod", Name: "web"}, Action: plan.Invalid,
			Source:  object.Source{File: "apps/web/service.yaml", Line: 14},
			Message: "spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive\nsecond line",
		},
		{
			Ref: object.Ref{Group: "batch", Version: "v1", Kind: "Job", Namespace: "prod", Name: "migrate"}, Action: plan.Invalid,
			Source:  object.Source{File: "./overlays/prod/kustomization.yaml"},
			Message: "spec.template: field is immutable (replace required)",
		},
		{Ref: object.Ref{Version: "v1", Kind: "Secret", Namespace: "prod", Name: "x"}, Action: plan.Invalid, Source: object.Source{File: "/tmp/elsewhere/secret.yaml", Line: 3}},
		{Ref: object.Ref{Version: "v1", Kind: "Secret", Namespace: "prod", Name: "y"}, Action: plan.Invalid, Source: object.Source{File: "../outside.yaml", Line: 3}},
		{
			Ref: object.Ref{Group: "apps", Version: "v1", Kind: "Deployment", Namespace: "dns", Name: "external-dns"}, Action: plan.Invalid,
			Source:  object.Source{File: "overlays/prod/kustomization.yaml", Line: 4, Chart: "external-dns@1.15.1", Template: "templates/deployment.yaml"},
			Message: "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
		},
		{
			Ref: object.Ref{Version: "v1", Kind: "ServiceAccount", Namespace: "dns", Name: "external-dns"}, Action: plan.Conflict,
			Source:    object.Source{File: "overlays/prod/kustomization.yaml", Line: 4, Chart: "external-dns@1.15.1", Template: "templates/serviceaccount.yaml"},
			Conflicts: []plan.FieldConflict{{Field: ".metadata.labels.team", Manager: "kubectl-label"}},
		},
		{Ref: object.Ref{Version: "v1", Kind: "ConfigMap", Namespace: "prod", Name: "old"}, Action: plan.Delete},
		{Ref: deploy, Action: plan.Conflict},
	}}
	r := newRunner(t, prOpened)
	Annotate(r.action(), p)
	want := []string{
		"::error file=apps/web/service.yaml,line=14,title=service/web -n prod%3A invalid::spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive%0Asecond line",
		"::error file=overlays/prod/kustomization.yaml,title=job.batch/migrate -n prod%3A invalid::spec.template: field is immutable (replace required)",
		"::error title=secret/x -n prod%3A invalid::the API server refused the object",
		"::error title=secret/y -n prod%3A invalid::the API server refused the object",
		"::error file=overlays/prod/kustomization.yaml,line=4,title=deployment.apps/external-dns -n dns%3A invalid (external-dns@1.15.1 templates/deployment.yaml)::spec.replicas: Invalid value: -1: must be greater than or equal to 0",
		"::warning file=apps/web/deployment.yaml,line=1,title=deployment.apps/web -n prod%3A conflict::fields owned by another field manager: .spec.replicas (kubectl-scale), .spec.template.spec.containers[name=\"web\"].image (kubectl-edit). change git to accept the live values, or force this object",
		"::warning file=overlays/prod/kustomization.yaml,line=4,title=serviceaccount/external-dns -n dns%3A conflict (external-dns@1.15.1 templates/serviceaccount.yaml)::fields owned by another field manager: .metadata.labels.team (kubectl-label)",
		"::warning title=deployment.apps/web -n prod%3A conflict::fields owned by another field manager",
	}
	if diff := cmp.Diff(want, r.lines()); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}

	r = newRunner(t, prOpened)
	Annotate(r.action(), nil)
	Annotate(r.action(), &plan.Plan{})
	if r.out.Len() != 0 {
		t.Errorf("annotated an empty plan: %q", r.out.String())
	}
}
