package engine

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/kube"
	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/plan"
	"github.com/snapply/snapply/internal/secret"
	"github.com/snapply/snapply/internal/store"
)

// RunRecords is what the known test reads of a store (*store.DB): the
// record of the run whose after snapshot an inventory names, and that
// run's desired snapshot.
type RunRecords interface {
	// RunWithAfter returns the run whose after snapshot is after; nil and
	// no error when the store holds none.
	RunWithAfter(after string) (*store.Run, error)
	// Snapshot returns the snapshot id with its entries.
	Snapshot(id string) (*store.Snapshot, error)
	// Redactor returns the redactor the store's object IDs are made with.
	Redactor() *secret.Redactor
	// Path names the store in messages.
	Path() string
}

var _ RunRecords = (*store.DB)(nil)

// Known is the outcome of the known test (docs/design.md, "Known
// objects"): the desired objects whose dry run the record of the last
// apply makes unnecessary, as long as their live managedFields agree.
type Known struct {
	// Fields maps each candidate to the digest of snapply's managedFields
	// entry that the last apply left (plan.Input.Known).
	Fields map[object.Key]string
	// Records are the last apply's records of the candidates, by identity.
	Records map[object.Key]store.Record
	// Line says, for people, where the record came from, or why there is
	// none.
	Line string
	// missing is set when the store does not hold the last apply's run.
	missing bool
}

// CRDGenerations maps each kind that a CustomResourceDefinition defines
// to the CRD's generation. A nil map means the CRDs could not be read:
// no custom resource can then be known.
type CRDGenerations map[schema.GroupKind]int64

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// ReadCRDGenerations lists the metadata of every CustomResourceDefinition
// (one paginated LIST, metadata only) when a desired object's kind could
// be a custom resource (its group has a dot); it returns an empty map when
// none could, and nil when the CRDs cannot be listed.
func ReadCRDGenerations(ctx context.Context, c *kube.Client, desired []object.Object) CRDGenerations {
	gens := CRDGenerations{}
	if !anyCustom(desired) {
		return gens
	}
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := c.Metadata.Resource(crdGVR).List(ctx, opts)
		if err != nil {
			return nil
		}
		for _, item := range l.Items {
			// A CRD is named <plural>.<group>; its kind is not in its
			// metadata, so map the plural through discovery's cache.
			plural, group, ok := strings.Cut(item.Name, ".")
			if !ok {
				continue
			}
			kinds, err := c.Mapper.KindsFor(schema.GroupVersionResource{Group: group, Resource: plural})
			if err != nil || len(kinds) == 0 {
				continue // not served (yet): nothing of it can be known
			}
			gens[kinds[0].GroupKind()] = item.Generation
		}
		if l.Continue == "" {
			return gens
		}
		opts.Continue = l.Continue
	}
}

func anyCustom(desired []object.Object) bool {
	for _, d := range desired {
		if strings.Contains(d.Ref.Group, ".") {
			return true
		}
	}
	return false
}

// generation returns the generation of the CRD of gk: 0 for a kind no CRD
// defines, and ok false when it cannot be told.
func (g CRDGenerations) generation(gk schema.GroupKind) (gen int64, ok bool) {
	if g == nil {
		return 0, !strings.Contains(gk.Group, ".")
	}
	return g[gk], true
}

// KnownObjects runs the record side of the known test against the last
// apply of inv recorded in db: a desired object is a candidate when
//
//   - the run that applied it last (the one whose after snapshot inv
//     names) was not interrupted and ran against the same server version;
//   - its ID equals the ID it had in that run's desired snapshot (same
//     bytes, same inventory label);
//   - that run left it applied or unchanged, with a managedFields digest;
//   - for a custom resource, its CRD has the generation it was applied or
//     checked against, and a CRD of the desired set is itself known.
//
// The planner then compares each candidate's digest with the live object
// (plan.Input.Known). Without a record, Fields is empty: every object is
// dry-run.
func KnownObjects(db RunRecords, inv *apply.Inventory, desired []object.Object, serverVersion string, crds CRDGenerations) Known {
	after := inv.Annotations[apply.LastSnapshotAnnotation]
	if !inv.Exists || after == "" {
		return Known{Line: "no earlier apply of this inventory"}
	}
	run, err := db.RunWithAfter(after)
	if err != nil {
		return Known{Line: fmt.Sprintf("the record of the last apply: %v", err), missing: true}
	}
	if run == nil {
		return Known{Line: fmt.Sprintf("the record of the last apply (after snapshot %s) is not in %s", after, db.Path()), missing: true}
	}
	switch {
	case run.Interrupted:
		return Known{Line: "the last apply was interrupted"}
	case run.ServerVersion == "":
		return Known{Line: "the record of the last apply holds no managedFields (an older snapply wrote it)"}
	case run.ServerVersion != serverVersion:
		return Known{Line: fmt.Sprintf("the last apply ran against API server %q, this is %q", run.ServerVersion, serverVersion)}
	}
	applied, err := db.Snapshot(run.Desired)
	if err != nil {
		return Known{Line: fmt.Sprintf("the desired snapshot of the last apply: %v", err)}
	}
	ids := make(map[object.Key]store.ID, len(applied.Entries))
	for _, e := range applied.Entries {
		ids[e.Ref.Key()] = e.ID
	}
	records := make(map[object.Key]store.Record, len(run.Records))
	for _, r := range run.Records {
		records[r.Ref.Key()] = r
	}
	k := Known{Fields: map[object.Key]string{}, Records: map[object.Key]store.Record{}}
	for _, d := range desired {
		key := d.Ref.Key()
		rec, ok := records[key]
		id, desiredOK := ids[key]
		if !ok || !desiredOK || rec.Fields == "" || (rec.Outcome != string(apply.Applied) && rec.Outcome != string(apply.Unchanged)) {
			continue
		}
		if gen, ok := crds.generation(d.Ref.GroupKind()); !ok || gen != rec.CRDGeneration {
			continue
		}
		if store.ObjectID(db.Redactor(), d.Obj) != id {
			continue
		}
		k.Fields[key], k.Records[key] = rec.Fields, rec
	}
	// A CRD that changes makes its custom resources worth a dry run.
	for _, d := range desired {
		if isCRD(d.Ref) {
			if _, ok := k.Fields[d.Ref.Key()]; !ok {
				dropKind(k, d)
			}
		}
	}
	k.Line = fmt.Sprintf("%d of %d objects are candidates from the record of the last apply (run %s, after snapshot %s)", len(k.Fields), len(desired), orDash(run.Source.RunID), after)
	return k
}

// crdKind returns the kind a desired CRD defines.
func crdKind(crd *object.Object) (schema.GroupKind, bool) {
	group, _, _ := unstructured.NestedString(crd.Obj.Object, "spec", "group")
	kind, _, _ := unstructured.NestedString(crd.Obj.Object, "spec", "names", "kind")
	return schema.GroupKind{Group: group, Kind: kind}, group != "" && kind != ""
}

// dropKind removes the custom resources that crd defines from k.
func dropKind(k Known, crd object.Object) {
	gk, ok := crdKind(&crd)
	if !ok {
		return
	}
	for key := range k.Fields {
		if key.Group == gk.Group && key.Kind == gk.Kind {
			delete(k.Fields, key)
			delete(k.Records, key)
		}
	}
}

func isCRD(r object.Ref) bool {
	return r.Group == "apiextensions.k8s.io" && r.Kind == "CustomResourceDefinition"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// crdGenerationOf returns, for the record of an object of this run, the
// generation of its kind's CRD that it was applied or checked against:
// the earlier record's for an object known from it; the generation read
// after the apply when the run applied the kind's CRD; else the one read
// when planning.
func crdGenerationOf(c plan.Change, k Known, planned, afterApply CRDGenerations, appliedCRD map[schema.GroupKind]bool) int64 {
	gk := c.Ref.GroupKind()
	switch {
	case c.Verified == plan.VerifiedRecord:
		return k.Records[c.Ref.Key()].CRDGeneration
	case appliedCRD[gk] && afterApply != nil:
		return afterApply[gk]
	case appliedCRD[gk]:
		return -1 // unknown: never matches
	}
	gen, ok := planned.generation(gk)
	if !ok {
		return -1
	}
	return gen
}
