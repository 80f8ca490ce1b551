package engine

import (
	"cmp"
	"context"
	"slices"

	"github.com/snapply/snapply/internal/apply"
	"github.com/snapply/snapply/internal/object"
)

// Render returns the objects that Plan and PrepareApply would send to the
// API server for t, and nothing else happens: no store, no snapshot, no
// lock, no write. They are rendered, given the namespace of the kubeconfig
// context or --namespace when they have none, checked against the
// cluster's discovery (plan.Prepare), and labelled as members of the
// inventory o.Name in o.InventoryNamespace, in the order apply sends them:
// by wave, then by identity.
//
// With offline, no cluster is read: objects are only rendered and labelled,
// and a namespaced object without a namespace keeps none.
func (e *Engine) Render(ctx context.Context, t Target, o Options, offline bool) ([]object.Object, error) {
	var desired []object.Object
	var err error
	if offline {
		desired, err = e.render(ctx, t, o, nil)
	} else {
		desired, _, err = e.desired(ctx, t, o)
	}
	if err != nil {
		return nil, err
	}
	inv := &apply.Inventory{Name: o.Name, Namespace: o.InventoryNamespace, ID: apply.ApplySetID(o.Name, o.InventoryNamespace)}
	for _, d := range desired {
		inv.Label(d.Obj)
	}
	slices.SortStableFunc(desired, func(a, b object.Object) int {
		return cmp.Or(cmp.Compare(apply.WaveOf(a.Ref), apply.WaveOf(b.Ref)), object.Compare(a.Ref, b.Ref))
	})
	return desired, nil
}
