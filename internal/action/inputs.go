package action

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/plan"
)

// The names of the action's inputs, as action.yml declares them. The runner
// passes each as the environment variable INPUT_<NAME> (upper case, dashes
// kept).
const (
	InputPath               = "path"
	InputMode               = "mode"
	InputKubeconfig         = "kubeconfig"
	InputContext            = "context"
	InputName               = "name"
	InputInventoryNamespace = "inventory-namespace"
	InputGitHubToken        = "github-token"
	InputStore              = "store"
	InputUploadStore        = "upload-store"
	InputPrune              = "prune"
	InputWait               = "wait"
	InputTimeout            = "timeout"
	InputForceConflicts     = "force-conflicts"
	InputAllowDestructive   = "allow-destructive"
	InputComment            = "comment"
	InputRollbackTo         = "rollback-to"
	InputScope              = "scope"
	InputRequireReviewed    = "require-reviewed-plan"
	InputStoreKey           = "store-key"
	InputAllowPublicStore   = "allow-public-store"
	InputFailOn             = "fail-on"
	InputPolicy             = "policy"
	InputRevalidate         = "revalidate"
	InputOrphans            = "orphans"
)

// Inputs are the action's inputs, parsed. An input left empty takes its
// value from DefaultInputs.
type Inputs struct {
	// Path is what to render (input path), relative to the workspace.
	Path string
	// Mode is the mode input as given: auto, plan, apply, rollback, drift or none.
	// Config.Mode holds the mode the run resolved to.
	Mode string
	// Kubeconfig is the content of a kubeconfig file (input kubeconfig),
	// not a path; empty means in-cluster config, KUBECONFIG or the default
	// file. Pass it to WriteKubeconfig.
	Kubeconfig string
	// Context is the kubeconfig context to use; empty means its current one.
	Context string
	// Name is the inventory name: the ApplySet parent Secret and its Lease,
	// one per environment. It also keys the sticky comment and the artifact.
	Name string
	// InventoryNamespace is the namespace of the inventory Secret and Lease.
	InventoryNamespace string
	// GitHubToken authenticates REST calls (input github-token, else the
	// GITHUB_TOKEN environment variable). Load masks it.
	GitHubToken string
	// Store is the store file (input store) as given, relative to the
	// workspace; it is what the store-path output reports, because an
	// artifact upload step resolves it against the workspace on the host.
	// Config.StoreFile is the file to open.
	Store string
	// UploadStore is the upload-store input: the action's upload step
	// uploads the store (and the HTML plan) as the run's artifact. When
	// false, the comment does not link an artifact that is not there.
	UploadStore bool
	// Prune deletes the inventory's objects that are no longer desired.
	Prune bool
	// Wait waits for readiness after apply.
	Wait bool
	// Timeout bounds the wait for the lock and for readiness.
	Timeout time.Duration
	// ForceConflicts takes fields other field managers own.
	ForceConflicts bool
	// AllowDestructive lets the prune delete Namespaces and
	// CustomResourceDefinitions.
	AllowDestructive bool
	// Comment posts or edits the sticky pull-request comment.
	Comment bool
	// RollbackTo names the past run to roll back to (input rollback-to,
	// else the workflow_dispatch input of the same name).
	RollbackTo string
	// Scope is what the snapshot holds: managed, namespaces or cluster.
	Scope string
	// RequireReviewedPlan refuses to apply a plan that differs from the
	// one reviewed in the merged pull request, or when there is none.
	RequireReviewedPlan bool
	// StoreKey is the store key (input store-key, passed from a secret):
	// it encrypts the store file and seals Secret values in it. Empty
	// falls back to the SNAPPLY_STORE_KEY variable. Load masks it.
	StoreKey string
	// AllowPublicStore uploads the store of a public repository even
	// without a store key, where anyone can download it.
	AllowPublicStore bool
	// FailOn lists the risk kinds that fail the run: a plan run exits 1
	// after its comment, an apply run exits 1 before applying anything.
	FailOn []plan.RiskKind
	// Policy is a directory of Rego policies relative to the workspace
	// (input policy); empty means none.
	Policy string
	// Revalidate dry-runs every object, also those the record of the last
	// apply shows to be unchanged.
	Revalidate bool
	// Orphans makes a drift run also report the objects of the managed
	// namespaces that no inventory and no owner claims (snapply drift
	// --orphans): they count as drift.
	Orphans bool
}

// DefaultInputs returns the value of every input left empty: path ".", mode
// auto, the store uploaded as an artifact, no force, no destructive
// prune, a comment, and the CLI's defaults, taken from the engine: the
// name and inventory namespace, the store file, the scope
// (engine.DefaultOptions), prune, wait and the timeout
// (engine.DefaultDeployOptions).
func DefaultInputs() Inputs {
	o, d := engine.DefaultOptions(), engine.DefaultDeployOptions()
	return Inputs{
		Path:               ".",
		Mode:               "auto",
		Name:               o.Name,
		InventoryNamespace: o.InventoryNamespace,
		Store:              o.StorePath,
		UploadStore:        true,
		Prune:              d.Prune,
		Wait:               d.Wait,
		Timeout:            d.Timeout,
		ForceConflicts:     false,
		AllowDestructive:   false,
		Comment:            true,
		Scope:              o.Scope,
	}
}

// scopes are the values the scope input takes.
var scopes = []string{"managed", "namespaces", "cluster"}

// readInputs parses the inputs. Every bad value is reported, one line each,
// naming the input.
func readInputs(a *githubactions.Action) (Inputs, error) {
	in := DefaultInputs()
	var errs []error
	str := func(name string, dst *string) {
		if v := getInput(a, name); v != "" {
			*dst = v
		}
	}
	boolean := func(name string, dst *bool) {
		v := getInput(a, name)
		if v == "" {
			return
		}
		b, err := parseBool(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("input %s: %w", name, err))
			return
		}
		*dst = b
	}

	str(InputPath, &in.Path)
	str(InputMode, &in.Mode)
	in.Mode = strings.ToLower(in.Mode)
	if !validMode(in.Mode) {
		errs = append(errs, fmt.Errorf("input %s: %q is not a mode: want auto, plan, apply, rollback, drift or none", InputMode, in.Mode))
	}
	// The kubeconfig is a file's content: keep it byte for byte, not trimmed
	// the way GetInput trims.
	in.Kubeconfig = a.Getenv(inputEnv(InputKubeconfig))
	if in.Kubeconfig == "" {
		in.Kubeconfig = a.Getenv(inputEnvUnderscore(InputKubeconfig))
	}
	if strings.TrimSpace(in.Kubeconfig) == "" {
		in.Kubeconfig = ""
	}
	str(InputContext, &in.Context)
	str(InputName, &in.Name)
	if msgs := validation.IsDNS1123Subdomain(in.Name); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("input %s: %q is not a valid Secret name: %s", InputName, in.Name, strings.Join(msgs, "; ")))
	}
	str(InputInventoryNamespace, &in.InventoryNamespace)
	if msgs := validation.IsDNS1123Label(in.InventoryNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("input %s: %q is not a valid namespace name: %s", InputInventoryNamespace, in.InventoryNamespace, strings.Join(msgs, "; ")))
	}
	str(InputGitHubToken, &in.GitHubToken)
	if in.GitHubToken == "" {
		in.GitHubToken = strings.TrimSpace(a.Getenv("GITHUB_TOKEN"))
	}
	str(InputStore, &in.Store)
	boolean(InputUploadStore, &in.UploadStore)
	boolean(InputPrune, &in.Prune)
	boolean(InputWait, &in.Wait)
	if v := getInput(a, InputTimeout); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("input %s: %q is not a duration: want a number with a unit, like 90s or 5m", InputTimeout, v))
		case d <= 0:
			errs = append(errs, fmt.Errorf("input %s: %q is not positive", InputTimeout, v))
		default:
			in.Timeout = d
		}
	}
	boolean(InputForceConflicts, &in.ForceConflicts)
	boolean(InputAllowDestructive, &in.AllowDestructive)
	boolean(InputComment, &in.Comment)
	boolean(InputRequireReviewed, &in.RequireReviewedPlan)
	str(InputStoreKey, &in.StoreKey)
	boolean(InputAllowPublicStore, &in.AllowPublicStore)
	boolean(InputRevalidate, &in.Revalidate)
	boolean(InputOrphans, &in.Orphans)
	str(InputRollbackTo, &in.RollbackTo)
	str(InputPolicy, &in.Policy)
	str(InputScope, &in.Scope)
	if kinds, err := plan.ParseRiskKinds(getInput(a, InputFailOn)); err != nil {
		errs = append(errs, fmt.Errorf("input %s: %w", InputFailOn, err))
	} else {
		in.FailOn = kinds
	}
	in.Scope = strings.ToLower(in.Scope)
	if !slices.Contains(scopes, in.Scope) {
		errs = append(errs, fmt.Errorf("input %s: %q is not a scope: want managed, namespaces or cluster", InputScope, in.Scope))
	}
	return in, errors.Join(errs...)
}

// getInput reads input name as the runner passes it to a container or
// JavaScript action (INPUT_INVENTORY-NAMESPACE), else as a composite
// action's step may (INPUT_INVENTORY_NAMESPACE), trimmed.
func getInput(a *githubactions.Action, name string) string {
	if v := a.GetInput(name); v != "" {
		return v
	}
	return strings.TrimSpace(a.Getenv(inputEnvUnderscore(name)))
}

// inputEnvUnderscore is inputEnv with dashes as underscores.
func inputEnvUnderscore(name string) string {
	return strings.ReplaceAll(inputEnv(name), "-", "_")
}

// inputEnv is the environment variable the runner passes input name in, as
// go-githubactions' GetInput computes it.
func inputEnv(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
}

// parseBool accepts the booleans of the YAML 1.2 core schema, as the
// actions toolkit's getBooleanInput does.
func parseBool(v string) (bool, error) {
	switch v {
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean: want true or false", v)
}
