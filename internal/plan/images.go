package plan

import (
	"sort"

	"github.com/snapply/snapply/internal/object"
)

// ImageStatus says what a plan does to one container's image.
type ImageStatus string

// The image statuses. The strings are part of the JSON contract.
const (
	ImageNew       ImageStatus = "new"
	ImageRemoved   ImageStatus = "removed"
	ImageChanged   ImageStatus = "changed"
	ImageUnchanged ImageStatus = "unchanged"
)

// ImageUse is one container of one workload in the image inventory.
type ImageUse struct {
	// Ref names the workload.
	Ref object.Ref `json:"ref"`
	// Container is the container name, prefixed "init:" for init
	// containers.
	Container string `json:"container"`
	// Before is the image running now, After the image after apply;
	// either is empty when the container is new or removed.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
	// Status is new, removed, changed or unchanged.
	Status ImageStatus `json:"status"`
}

// Inventory lists the images of every workload of changes, before and
// after, sorted by workload and container. Conflicts and invalid objects
// are not written, so their images stay as they are.
func Inventory(changes []Change) []ImageUse {
	var out []ImageUse
	for _, c := range changes {
		before := Images(c.Before)
		after := Images(c.After)
		if c.Action == Delete {
			after = nil
		}
		if c.Action.IsError() {
			after = before
		}
		names := make([]string, 0, len(before)+len(after))
		for n := range after {
			names = append(names, n)
		}
		for n := range before {
			if _, ok := after[n]; !ok {
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			u := ImageUse{Ref: c.Ref, Container: n, Before: before[n], After: after[n]}
			switch {
			case u.Before == "":
				u.Status = ImageNew
			case u.After == "":
				u.Status = ImageRemoved
			case u.Before != u.After:
				u.Status = ImageChanged
			default:
				u.Status = ImageUnchanged
			}
			out = append(out, u)
		}
	}
	return out
}
