// Package policy evaluates Rego policies on the objects of a plan, with
// conftest's conventions, in process with OPA's Go API; and names the
// verdicts of the cluster's admission chain (ValidatingAdmissionPolicies
// and webhooks) as policy denials. It returns data: package report
// renders it.
//
// A policy directory holds .rego files (files ending in _test.rego are
// left out) of package main. Its rules deny, violation and warn, and
// rules whose names start with deny_, violation_ or warn_, are sets of
// messages: strings, or objects with a "msg" key (conftest's violation
// form). deny and violation block; warn only reports.
//
// Each desired object is evaluated on its own, the way conftest sees a
// manifest:
//
//	input                 the desired object as rendered (Secret values
//	                      replaced by digests)
//	data.snapply.action   the plan's action: create, update, unchanged, ...
//	data.snapply.live     the live object, or null when it does not exist
//
// An object the plan deletes (prunes) is judged only by the delete rules:
// deny_delete, violation_delete and warn_delete, and the rules whose names
// start with one of them and "_". Its input is the live object, and its
// action "delete". Delete rules judge nothing else, and the other rules
// never see a delete: a rule written for manifests must not block removing
// the very objects it rejects.
//
// The modules are parsed and compiled once per Set.
package policy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"

	"github.com/snapply/snapply/internal/plan"
)

// Package is the Rego package policies are read from, as conftest's
// default namespace.
const Package = "main"

// Set is a compiled policy directory, ready to evaluate objects. It is
// safe for use by one goroutine at a time.
type Set struct {
	// Dir is the directory the policies were read from.
	Dir string
	// Files are the policy files, relative to Dir.
	Files []string

	query rego.PreparedEvalQuery
	store storage.Store
	// usesData is set when a module reads data.snapply: only then is the
	// per-object context written to the store.
	usesData bool
}

// Load reads and compiles the .rego files under dir. A syntax or
// compile error is one line naming the file and line.
func Load(ctx context.Context, dir string) (*Set, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".rego") && !strings.HasSuffix(path, "_test.rego") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("policy %s: no .rego file", dir)
	}
	sort.Strings(files)
	s := &Set{Dir: dir, store: inmem.NewFromObject(map[string]any{})}
	opts := []func(*rego.Rego){rego.Query("data." + Package), rego.Store(s.store)}
	for _, f := range files {
		mod, err := parse(f)
		if err != nil {
			return nil, err
		}
		rel, _ := filepath.Rel(dir, f)
		s.Files = append(s.Files, rel)
		if strings.Contains(mod.String(), "data.snapply") {
			s.usesData = true
		}
		opts = append(opts, rego.ParsedModule(mod))
	}
	if s.query, err = rego.New(opts...).PrepareForEval(ctx); err != nil {
		return nil, oneError(err)
	}
	return s, nil
}

// parse parses one file as Rego v1, else as Rego v0 (the syntax of
// conftest's older examples); the v1 error is the one reported.
func parse(file string) (*ast.Module, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", file, err)
	}
	mod, err := ast.ParseModuleWithOpts(file, string(b), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		if m0, err0 := ast.ParseModuleWithOpts(file, string(b), ast.ParserOptions{RegoVersion: ast.RegoV0}); err0 == nil {
			return checkPackage(file, m0)
		}
		return nil, oneError(err)
	}
	return checkPackage(file, mod)
}

func checkPackage(file string, m *ast.Module) (*ast.Module, error) {
	if got := strings.TrimPrefix(m.Package.Path.String(), "data."); got != Package {
		return nil, &Error{File: file, Line: m.Package.Location.Row, Message: fmt.Sprintf("package %s: snapply reads package %s (conftest's default)", got, Package)}
	}
	return m, nil
}

// Error is a policy that does not parse or compile, at a file and line.
type Error struct {
	// File and Line locate the first error; Line is 0 when unknown.
	File string
	Line int
	// Message is OPA's, on one line, with its code.
	Message string
}

// Error says "policy FILE:LINE: message".
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("policy %s:%d: %s", e.File, e.Line, e.Message)
	}
	return fmt.Sprintf("policy %s: %s", e.File, e.Message)
}

// oneError turns OPA's errors into one line: "policy FILE:LINE: message",
// with the count of further errors.
func oneError(err error) error {
	var errs ast.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return fmt.Errorf("policy: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	e := errs[0]
	out := &Error{Message: fmt.Sprintf("%s: %s", e.Code, strings.Join(strings.Fields(e.Message), " "))}
	if e.Location != nil {
		out.File, out.Line = e.Location.File, e.Location.Row
	}
	if len(errs) > 1 {
		out.Message += fmt.Sprintf(" (and %d more errors)", len(errs)-1)
	}
	return out
}

// Input is one object to evaluate.
type Input struct {
	// Object is the desired object (input); for a delete, the live one.
	Object map[string]any
	// Action is the plan's action for it (data.snapply.action).
	Action plan.Action
	// Live is the live object, nil when there is none (data.snapply.live).
	Live map[string]any
}

// Eval evaluates the policies on one object and returns their verdicts,
// deny first, then by rule and message.
func (s *Set) Eval(ctx context.Context, in Input) ([]plan.PolicyResult, error) {
	evalOpts := []rego.EvalOption{rego.EvalInput(in.Object)}
	if s.usesData {
		txn, err := s.store.NewTransaction(ctx, storage.WriteParams)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		defer s.store.Abort(ctx, txn)
		var live any
		if in.Live != nil {
			live = in.Live
		}
		if err := s.store.Write(ctx, txn, storage.AddOp, storage.Path{"snapply"}, map[string]any{"action": string(in.Action), "live": live}); err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		evalOpts = append(evalOpts, rego.EvalTransaction(txn))
	}
	rs, err := s.query.Eval(ctx, evalOpts...)
	if err != nil {
		return nil, oneError(err)
	}
	var out []plan.PolicyResult
	for _, r := range rs {
		for _, ex := range r.Expressions {
			doc, ok := ex.Value.(map[string]any)
			if !ok {
				continue
			}
			for rule, v := range doc {
				level, ok := levelOf(rule)
				if !ok || IsDeleteRule(rule) != (in.Action == plan.Delete) {
					continue
				}
				for _, msg := range messages(v) {
					out = append(out, plan.PolicyResult{Rule: rule, Level: level, Message: msg})
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b plan.PolicyResult) int {
		if a.Level != b.Level {
			if a.Level == plan.PolicyDeny {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.Rule, b.Rule); c != 0 {
			return c
		}
		return strings.Compare(a.Message, b.Message)
	})
	return out, nil
}

// IsDeleteRule reports whether rule judges the objects a plan deletes:
// deny_delete, violation_delete, warn_delete, or one of them followed by
// "_" and more.
func IsDeleteRule(rule string) bool {
	for _, p := range []string{"deny_delete", "violation_delete", "warn_delete"} {
		if rule == p || strings.HasPrefix(rule, p+"_") {
			return true
		}
	}
	return false
}

// levelOf maps a rule name to its level, as conftest does.
func levelOf(rule string) (plan.PolicyLevel, bool) {
	for _, p := range []struct {
		name  string
		level plan.PolicyLevel
	}{{"deny", plan.PolicyDeny}, {"violation", plan.PolicyDeny}, {"warn", plan.PolicyWarn}} {
		if rule == p.name || strings.HasPrefix(rule, p.name+"_") {
			return p.level, true
		}
	}
	return "", false
}

// messages returns the messages of a rule's value: a set of strings, or
// of objects with "msg"; a single string or true counts as one message.
func messages(v any) []string {
	switch t := v.(type) {
	case []any:
		var out []string
		for _, item := range t {
			out = append(out, message(item))
		}
		return out
	case string:
		return []string{t}
	case bool:
		if t {
			return []string{"(the rule holds, without a message)"}
		}
	}
	return nil
}

func message(item any) string {
	switch t := item.(type) {
	case string:
		return t
	case map[string]any:
		if m, ok := t["msg"].(string); ok {
			return m
		}
	}
	b, _ := json.Marshal(item)
	return string(b)
}
