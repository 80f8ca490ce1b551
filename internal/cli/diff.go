package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/report"
	"github.com/snapply/snapply/internal/snapshot"
	"github.com/snapply/snapply/internal/store"
)

// diffOptions are the flags of `snapply diff`.
type diffOptions struct {
	storePath string
	output    string
	live      bool
	exitCode  bool
}

func newDiffCommand(g *globals) *cobra.Command {
	var o diffOptions
	cmd := &cobra.Command{
		Use:   "diff A [B | --live]",
		Short: "Show what changed between two snapshots, or between a snapshot and the live cluster",
		Long: `diff compares the objects of snapshot A with those of snapshot B, or with
the live cluster (--live), by identity (group, kind, namespace, name). A and
B are snapshot IDs, unique prefixes of one, or "latest".

Every object added, removed or changed is listed with a unified YAML diff in
the plan's format: status and server-managed metadata (managedFields,
resourceVersion, generation, uid, creationTimestamp) are left out, so an
object whose only differences are there counts as unchanged. Unchanged
objects are only counted.

With --live, diff reads the objects that A holds from the cluster (the
kubectl-style flags pick it) and shows the drift since A, and for each
changed object the field managers that changed it: those whose
managedFields entry is new since A, or later than in A (their times have
a resolution of one second). Compare against a before or after snapshot:
a desired snapshot holds no server defaults.

Each diff marks its sides with the snapshot IDs, A's first, and
"(live)" for the cluster's side.

Secret values are never shown: the store holds keyed digests, and live
Secrets are digested with the store's key before they are compared, so a
diff still says which keys changed.

Exit codes: 0; with --exit-code, 1 when there are differences (as git diff).`,
		Example: `  snapply diff --store snapply.db 20261121T1430 latest
  snapply diff --store snapply.db latest --live --exit-code
  snapply diff --store snapply.db latest --live --context prod -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.live && len(args) != 1:
				return fmt.Errorf("diff --live takes one snapshot, got %d arguments", len(args))
			case !o.live && len(args) != 2:
				return fmt.Errorf("diff takes two snapshots (A B), or one with --live; got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.output != "text" && o.output != "json" {
				return fmt.Errorf("unknown output format %q: want text or json", o.output)
			}
			return g.runDiff(cmd.Context(), args, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.storePath, "store", "snapply.db", "store file")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	f.BoolVar(&o.live, "live", false, "compare snapshot A with the live cluster (drift)")
	f.BoolVar(&o.exitCode, "exit-code", false, "exit 1 when there are differences")
	return cmd
}

// diffItem is one object of a side of a diff: its ID, and the object once
// loaded (a live object comes loaded, a stored one is read when needed).
type diffItem struct {
	ref object.Ref
	id  store.ID
	obj *unstructured.Unstructured
}

func (g *globals) runDiff(ctx context.Context, args []string, o diffOptions) (err error) {
	db, err := openExisting(o.storePath)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	from, err := db.Snapshot(args[0])
	if err != nil {
		return err
	}
	res := report.SnapshotDiff{From: from.Meta.ID}
	var to []diffItem
	var unknown map[object.Key]bool
	if o.live {
		res.To = report.LiveTarget
		if from.Meta.Kind == store.Desired {
			g.progress("note: snapshot %s holds desired objects, not live ones: fields the server defaults show as differences", from.Meta.ID)
		}
		if to, unknown, err = g.liveItems(ctx, db, from); err != nil {
			return err
		}
	} else {
		snap, err := db.Snapshot(args[1])
		if err != nil {
			return err
		}
		res.To = snap.Meta.ID
		to = entryItems(snap.Entries)
	}
	fromItems := entryItems(from.Entries)
	if len(unknown) > 0 {
		fromItems = slices.DeleteFunc(fromItems, func(it diffItem) bool { return unknown[it.ref.Key()] })
	}
	res.Summary, res.Changes, err = compareItems(fromItems, to, res.From, res.To, db.Object)
	if err != nil {
		return err
	}
	if err := g.renderDiff(g.io.Out, res, o.output); err != nil {
		return err
	}
	if o.exitCode && res.Summary.Differs() {
		return &ExitError{Code: 1}
	}
	return nil
}

func entryItems(entries []store.Entry) []diffItem {
	items := make([]diffItem, len(entries))
	for i, e := range entries {
		items[i] = diffItem{ref: e.Ref, id: e.ID}
	}
	return items
}

// liveItems captures the live state of the objects of snap, normalised and
// redacted as the store would keep them. unknown holds the objects of snap
// whose type the identity could not list: their drift is unknown.
func (g *globals) liveItems(ctx context.Context, db *store.DB, snap *store.Snapshot) (items []diffItem, unknown map[object.Key]bool, err error) {
	start := time.Now()
	client, err := kube.NewClient(g.kube, kube.DefaultOptions())
	if err != nil {
		return nil, nil, err
	}
	if err := client.Ping(ctx); err != nil {
		return nil, nil, err
	}
	refs := make([]object.Ref, len(snap.Entries))
	for i, e := range snap.Entries {
		refs[i] = e.Ref
	}
	opts := snapshot.DefaultOptions()
	opts.Scope = snapshot.ScopeManaged
	live, err := snapshot.Capture(ctx, client, refs, opts)
	if err != nil {
		return nil, nil, err
	}
	g.progress("live: %d of the %d objects of snapshot %s (%d list requests) in %s", len(live.Objects), len(refs), snap.Meta.ID, live.Lists, since(start))
	if len(live.Skipped) > 0 {
		unknown = skippedKeys(client, refs, live.Skipped)
		for _, s := range live.Skipped {
			g.progress("warning: skipped %s: its objects are not compared", s)
		}
	}
	r := db.Redactor()
	items = make([]diffItem, 0, len(live.Objects))
	for _, u := range live.Objects {
		// The same form as the store's: resourceVersion dropped, Secret
		// values replaced by digests under the store's key.
		n, _ := store.Normalize(r, u)
		items = append(items, diffItem{ref: object.RefOf(u), id: store.Hash(n.Object), obj: n})
	}
	return items, unknown, nil
}

// skippedKeys returns the refs whose type is among the skipped resources.
func skippedKeys(c *kube.Client, refs []object.Ref, skipped []snapshot.Skipped) map[object.Key]bool {
	names := map[string]bool{}
	for _, s := range skipped {
		names[s.Resource] = true
	}
	out := map[object.Key]bool{}
	for _, r := range refs {
		m, err := c.Mapping(r.GroupKind().WithVersion(""))
		if err != nil {
			continue // not served: not listed, so not skipped either
		}
		if names[resourceName(m.Resource)] {
			out[r.Key()] = true
		}
	}
	return out
}

// resourceName prints a resource as snapshot.Skipped names it:
// "resource.group/version", "resource/version" for the core group.
func resourceName(gvr schema.GroupVersionResource) string {
	if gvr.Group == "" {
		return gvr.Resource + "/" + gvr.Version
	}
	return gvr.Resource + "." + gvr.Group + "/" + gvr.Version
}

// compareItems compares two sides by identity. Objects with the same ID
// are unchanged without being read; others are read with load when not
// loaded, and count as changed only when they differ outside status and
// server-managed metadata. Diffs mark their sides fromName and toName.
// Changes are sorted by object.Compare.
func compareItems(from, to []diffItem, fromName, toName string, load func(store.ID) (*unstructured.Unstructured, error)) (report.SnapshotDiffSummary, []report.ObjectChange, error) {
	diff := func(k object.Key, a, b *unstructured.Unstructured) string {
		return plan.DiffSides(k.String(), fromName, toName, a, b, 3)
	}
	get := func(it *diffItem) (*unstructured.Unstructured, error) {
		if it.obj == nil {
			u, err := load(it.id)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.ref, err)
			}
			it.obj = u
		}
		return it.obj, nil
	}
	index := make(map[object.Key]*diffItem, len(from))
	for i := range from {
		index[from[i].ref.Key()] = &from[i]
	}
	var sum report.SnapshotDiffSummary
	changes := []report.ObjectChange{}
	seen := make(map[object.Key]bool, len(to))
	for i := range to {
		b := &to[i]
		k := b.ref.Key()
		seen[k] = true
		a := index[k]
		switch {
		case a == nil:
			ub, err := get(b)
			if err != nil {
				return sum, nil, err
			}
			sum.Added++
			changes = append(changes, report.ObjectChange{Ref: b.ref, Change: report.ChangeAdded, Diff: diff(k, nil, ub), Managers: newerWrites(nil, ub)})
		case a.id == b.id:
			sum.Unchanged++
		default:
			ua, err := get(a)
			if err != nil {
				return sum, nil, err
			}
			ub, err := get(b)
			if err != nil {
				return sum, nil, err
			}
			d := diff(k, ua, ub)
			if d == "" {
				sum.Unchanged++
				continue
			}
			sum.Changed++
			changes = append(changes, report.ObjectChange{Ref: b.ref, Change: report.ChangeChanged, Diff: d, Managers: newerWrites(ua, ub)})
		}
	}
	for i := range from {
		a := &from[i]
		k := a.ref.Key()
		if seen[k] {
			continue
		}
		ua, err := get(a)
		if err != nil {
			return sum, nil, err
		}
		sum.Removed++
		changes = append(changes, report.ObjectChange{Ref: a.ref, Change: report.ChangeRemoved, Diff: diff(k, ua, nil), Managers: []report.ManagerWrite{}})
	}
	slices.SortStableFunc(changes, func(x, y report.ObjectChange) int { return object.Compare(x.Ref, y.Ref) })
	return sum, changes, nil
}

// newerWrites returns the managedFields entries of after that are not in
// before, or are later than there, oldest first. An entry is identified
// as the API server does: by manager, operation and subresource, and, for
// an Update, the API version.
func newerWrites(before, after *unstructured.Unstructured) []report.ManagerWrite {
	type id struct{ manager, operation, subresource, apiVersion string }
	key := func(e map[string]any) id {
		k := id{manager: str(e, "manager"), operation: str(e, "operation"), subresource: str(e, "subresource")}
		if k.operation != "Apply" {
			k.apiVersion = str(e, "apiVersion")
		}
		return k
	}
	old := map[id]string{}
	for _, e := range managedFields(before) {
		old[key(e)] = str(e, "time")
	}
	out := []report.ManagerWrite{}
	for _, e := range managedFields(after) {
		t := str(e, "time")
		if prev, ok := old[key(e)]; ok && !later(t, prev) {
			continue
		}
		out = append(out, report.ManagerWrite{Manager: str(e, "manager"), Operation: str(e, "operation"), Subresource: str(e, "subresource"), Time: t})
	}
	slices.SortStableFunc(out, func(a, b report.ManagerWrite) int {
		if c := parseTime(a.Time).Compare(parseTime(b.Time)); c != 0 {
			return c
		}
		return strings.Compare(a.Manager, b.Manager)
	})
	return out
}

// managedFields returns the entries of u's metadata.managedFields.
func managedFields(u *unstructured.Unstructured) []map[string]any {
	if u == nil {
		return nil
	}
	list, _, _ := unstructured.NestedSlice(u.Object, "metadata", "managedFields")
	out := make([]map[string]any, 0, len(list))
	for _, e := range list {
		if m, ok := e.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// later reports whether the managedFields time a is after b. Times that
// do not parse compare as strings: a differing one counts as later.
func later(a, b string) bool {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	if errA != nil || errB != nil {
		return a != b
	}
	return ta.After(tb)
}

// parseTime parses a managedFields time; one that does not parse is zero.
func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

// renderDiff writes res in the chosen format.
func (g *globals) renderDiff(w io.Writer, res report.SnapshotDiff, output string) error {
	if output == "json" {
		return report.SnapshotDiffJSON(w, res)
	}
	opts := report.DefaultTextOptions()
	opts.Color = g.useColor(w)
	return report.SnapshotDiffText(w, res, opts)
}
