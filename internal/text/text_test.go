package text

import "testing"

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"one line":                         "one line",
		"  padded\t and  spaced ":          "padded and spaced",
		"error converting YAML:\n  line 3": "error converting YAML: line 3",
		"crlf\r\nlines\rtoo":               "crlf lines too",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
