package action

import (
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/snapply/snapply/internal/object"
	"github.com/snapply/snapply/internal/secret"
)

// Mask masks every clear value of the desired Secrets among objs (their
// data, stringData and kubectl last-applied annotation, in clear and in
// base64; see secret.Values), so that the runner prints "***" for them.
// Call it before anything about the objects is logged: a mask hides only
// what is written after it.
func Mask(a *githubactions.Action, objs []object.Object) {
	m := newMasker(a)
	for _, o := range objs {
		for _, v := range secret.Values(o.Obj) {
			m.add(v)
		}
	}
}

// minLineMask is the shortest line of a multi-line value that is masked on
// its own. The runner matches masks line by line, so each line of a
// multi-line secret needs its own mask; lines shorter than this ("{", "}",
// "---") would turn every such line of the log into "***" and give away
// nothing on their own.
const minLineMask = 4

// masker issues each mask once.
type masker struct {
	a    *githubactions.Action
	seen map[string]bool
}

func newMasker(a *githubactions.Action) *masker {
	return &masker{a: a, seen: map[string]bool{}}
}

// add masks v whole and, trimmed, each of its lines of at least
// minLineMask characters except PEM armour lines ("-----BEGIN ...-----").
func (m *masker) add(v string) {
	for _, s := range maskStrings(v) {
		if !m.seen[s] {
			m.seen[s] = true
			m.a.AddMask(s)
		}
	}
}

// maskStrings returns the strings to mask so that v shows nowhere in a log.
func maskStrings(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	out := []string{v}
	if t := strings.TrimSpace(v); t != v && !strings.ContainsAny(v, "\r\n") {
		out = append(out, t)
	}
	if !strings.ContainsAny(v, "\r\n") {
		return out
	}
	for line := range strings.Lines(strings.ReplaceAll(v, "\r", "\n")) {
		l := strings.TrimSpace(line)
		if len(l) < minLineMask || isPEMArmour(l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// isPEMArmour reports whether line is a PEM "-----BEGIN X-----" or
// "-----END X-----" line, which every key and certificate shares.
func isPEMArmour(line string) bool {
	return (strings.HasPrefix(line, "-----BEGIN ") || strings.HasPrefix(line, "-----END ")) &&
		strings.HasSuffix(line, "-----")
}
