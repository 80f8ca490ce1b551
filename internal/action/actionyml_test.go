package action

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/snapply/snapply/internal/engine"
)

// actionYAML is the part of action.yml the runner reads.
type actionYAML struct {
	Inputs  map[string]struct{ Default string } `json:"inputs"`
	Outputs map[string]struct{ Value string }   `json:"outputs"`
	Runs    struct {
		Using string `json:"using"`
		Steps []struct {
			ID   string            `json:"id"`
			If   string            `json:"if"`
			Uses string            `json:"uses"`
			Run  string            `json:"run"`
			Env  map[string]string `json:"env"`
		} `json:"steps"`
	} `json:"runs"`
}

// action.yml declares what the code reads and writes, runs on the host,
// and hands every input to `snapply action` (a composite action's steps
// get no INPUT_* variables of their own).
func TestActionYAMLMatchesTheCode(t *testing.T) {
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionYAML
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Errorf("runs.using = %q, want composite", a.Runs.Using)
	}
	var run map[string]string
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Uses, "docker") || strings.Contains(s.Run, "docker build") {
			t.Errorf("step %q builds or runs a container", s.ID)
		}
		if at := strings.Index(s.Uses, "@"); at >= 0 && len(s.Uses[at+1:]) != 40 {
			t.Errorf("step uses %s: not pinned by a full commit SHA", s.Uses)
		}
		if s.ID == "run" {
			run = s.Env
		}
	}
	if run == nil {
		t.Fatal("no step with id run")
	}
	inputs := []string{InputPath, InputMode, InputKubeconfig, InputContext, InputName, InputInventoryNamespace,
		InputGitHubToken, InputStore, InputUploadStore, InputPrune, InputWait, InputTimeout, InputForceConflicts, InputAllowDestructive,
		InputComment, InputRollbackTo, InputScope, InputRequireReviewed, InputStoreKey, InputAllowPublicStore, InputFailOn, InputPolicy, InputRevalidate, InputOrphans}
	for _, in := range inputs {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("input %s is read by the code but not declared", in)
		}
		if got := run[inputEnvUnderscore(in)]; got != "${{ inputs."+in+" }}" {
			t.Errorf("the run step passes %s as %q, want ${{ inputs.%s }}", inputEnvUnderscore(in), got, in)
		}
	}
	// retention-days is read by the upload step only.
	for name := range a.Inputs {
		if !slices.Contains(inputs, name) && name != "retention-days" {
			t.Errorf("input %s is declared but nothing reads it", name)
		}
	}
	outputs := []string{OutputHasChanges, OutputSummary, OutputStorePath, OutputArtifactName, OutputSnapshotID, OutputCommentURL, OutputRollback, OutputReviewedPlan, OutputUploadStore, OutputPlanHTML, OutputDrifted, OutputDriftCount}
	for _, o := range outputs {
		if got := a.Outputs[o].Value; got != "${{ steps.run.outputs."+o+" }}" {
			t.Errorf("output %s = %q, want the run step's", o, got)
		}
	}
	// The upload step skips a store that must not leave the runner.
	for _, s := range a.Runs.Steps {
		if strings.Contains(s.Uses, "upload-artifact") && !strings.Contains(s.If, "steps.run.outputs."+OutputUploadStore+" == 'true'") {
			t.Errorf("the upload step runs if %q: it does not check the %s output", s.If, OutputUploadStore)
		}
	}
	// Go is set up only when the install step builds from source, as the
	// resolve step (scripts/install.sh resolve) decided: a release, or a
	// major or minor tag that a release covers, installs without Go.
	steps := map[string]int{}
	for i, s := range a.Runs.Steps {
		switch {
		case s.ID == "source" && strings.Contains(s.Run, "install.sh\" resolve"):
			steps["resolve"] = i
		case strings.Contains(s.Uses, "actions/setup-go@") && s.If == "steps.source.outputs.build == 'true'":
			steps["setup-go"] = i
		case s.ID == "install" && s.Env["SNAPPLY_BUILD"] == "${{ steps.source.outputs.build }}" && s.Env["SNAPPLY_TAG"] == "${{ steps.source.outputs.tag }}":
			steps["install"] = i
		}
	}
	if len(steps) != 3 || steps["resolve"] > steps["setup-go"] || steps["setup-go"] > steps["install"] {
		t.Errorf("want a resolve step, setup-go only when it says build, then an install step that follows its decision; found %v", steps)
	}
	if len(a.Outputs) != len(outputs) {
		t.Errorf("action.yml declares %d outputs, the code writes %d", len(a.Outputs), len(outputs))
	}
}

// The defaults action.yml declares are those the code applies to an empty
// input (DefaultInputs, which takes the CLI's from the engine).
func TestActionYAMLDefaultsAreTheCodes(t *testing.T) {
	b, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a actionYAML
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	d := DefaultInputs()
	want := map[string]string{
		InputPath:               d.Path,
		InputMode:               d.Mode,
		InputName:               d.Name,
		InputInventoryNamespace: d.InventoryNamespace,
		InputStore:              d.Store,
		InputPrune:              strconv.FormatBool(d.Prune),
		InputWait:               strconv.FormatBool(d.Wait),
		InputForceConflicts:     strconv.FormatBool(d.ForceConflicts),
		InputAllowDestructive:   strconv.FormatBool(d.AllowDestructive),
		InputComment:            strconv.FormatBool(d.Comment),
		InputScope:              d.Scope,
	}
	for in, v := range want {
		if got := a.Inputs[in].Default; got != v {
			t.Errorf("action.yml: input %s defaults to %q, the code to %q", in, got, v)
		}
	}
	if got, err := time.ParseDuration(a.Inputs[InputTimeout].Default); err != nil || got != d.Timeout {
		t.Errorf("action.yml: input %s defaults to %q, the code to %s", InputTimeout, a.Inputs[InputTimeout].Default, d.Timeout)
	}
	if o := engine.DefaultOptions(); d.Store != o.StorePath || d.Name != o.Name || d.Scope != o.Scope {
		t.Errorf("the action's defaults %+v differ from the CLI's %+v", d, o)
	}
}
