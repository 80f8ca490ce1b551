package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMDCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"deployment.apps/web -n prod", "`deployment.apps/web -n prod`"},
		{"a|b", "`a\\|b`"},
		{"a`b", "``a`b``"},
		{"`a``", "``` `a`` ```"},
		{"two\nlines", "`two lines`"},
	} {
		if got := mdCode(tc.in); got != tc.want {
			t.Errorf("mdCode(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMDText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words: 1.27", "plain words: 1.27"},
		{"a | b", `a \| b`},
		{"<script>&amp;", `\<script\>\&amp;`},
		{"*x* _y_ [z] ~w~ `v` \\", "\\*x\\* \\_y\\_ \\[z\\] \\~w\\~ \\`v\\` \\\\"},
		{"line\nbreak\r\nhere", "line break here"},
		{"bell\x07", `bell\\x07`},
	} {
		if got := mdText(tc.in); got != tc.want {
			t.Errorf("mdText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMDFence(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"+a\n", "```diff\n+a\n```\n"},
		{" ```\n", "````diff\n ```\n````\n"},
		{"+``````", "```````diff\n+``````\n```````\n"},
	} {
		if diff := cmp.Diff(tc.want, mdFence("diff", tc.in)); diff != "" {
			t.Errorf("mdFence(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"one two three", 8, "one two…"},
		{"ünïcödé", 3, "ünï…"},
	} {
		if got := truncate(tc.in, tc.n); got != tc.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}
