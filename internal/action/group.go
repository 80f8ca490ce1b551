package action

import "github.com/sethvargo/go-githubactions"

// Group runs fn inside a collapsible log group: "::group::title" before it
// and "::endgroup::" after it, even when fn fails or panics. Groups do not
// nest: the runner closes the open group at the next "::group::".
func Group(a *githubactions.Action, title string, fn func() error) error {
	a.Group(title)
	defer a.EndGroup()
	return fn()
}
