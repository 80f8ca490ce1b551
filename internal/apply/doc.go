// Package apply executes a Plan against the cluster: it takes a Lease so
// that applies of one inventory never overlap, server-side applies the
// desired objects in waves (CRDs and Namespaces, prerequisites, everything
// else, webhook configurations), prunes the inventory members that are no
// longer desired, and waits for readiness. It returns the per-object
// outcome (Result) and does not record the run: internal/engine's record
// step writes the snapshots and records to the store, and the last applied
// commit, run and snapshot to the inventory (Inventory.Save).
//
// The inventory is a KEP-3659 ApplySet whose parent is a Secret in the
// inventory namespace (Inventory): members carry the
// applyset.kubernetes.io/part-of label, and the parent's annotations list
// the member kinds and namespaces, so that kubectl and other ApplySet-aware
// tools can find them, and the last applied commit, run and snapshot.
//
// Applies of one inventory are serialised by a coordination.k8s.io/v1 Lease
// (Acquire): a second apply waits for the first and fails, naming the
// holder, when it has waited too long.
package apply
