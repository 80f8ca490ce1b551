package action

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGroup(t *testing.T) {
	r := newRunner(t, pushMain)
	a := r.action()
	boom := errors.New("boom")
	err := Group(a, "Render overlays/prod", func() error {
		a.Infof("rendered 12 objects")
		return boom
	})
	if !errors.Is(err, boom) {
		t.Errorf("Group returned %v, want fn's error", err)
	}
	want := []string{"::group::Render overlays/prod", "rendered 12 objects", "::endgroup::"}
	if diff := cmp.Diff(want, r.lines()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestGroupEndsOnPanic(t *testing.T) {
	r := newRunner(t, pushMain)
	func() {
		defer func() { _ = recover() }()
		_ = Group(r.action(), "apply", func() error { panic("boom") })
	}()
	if diff := cmp.Diff([]string{"::group::apply", "::endgroup::"}, r.lines()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
