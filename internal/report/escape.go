package report

import (
	"html"
	"strings"

	itext "github.com/snapply/snapply/internal/text" // report's tests declare text
)

// mdSpecial holds the characters that markdown or GitHub's HTML handling
// may interpret inside a line of text.
const mdSpecial = "\\`*_[]<>|~&"

// mdText escapes s for use inside one line of markdown: newlines become
// spaces and markdown punctuation is backslash-escaped, so text from
// manifests or the API server shows as written.
func mdText(s string) string {
	s = clean(oneLine(s))
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && strings.ContainsRune(mdSpecial, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdCode renders s as an inline code span that s cannot end early, with
// pipes escaped so that it also works inside a table cell.
func mdCode(s string) string {
	s = clean(oneLine(s))
	if s == "" {
		return ""
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	s = strings.ReplaceAll(s, "|", `\|`)
	return fence + pad + s + pad + fence
}

// mdFence renders s as a fenced code block with the given info string. The
// fence is longer than any run of backticks in s, so no line of s can close
// it.
func mdFence(info, s string) string {
	s = strings.TrimRight(clean(s), "\n")
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	return fence + info + "\n" + s + "\n" + fence + "\n"
}

// htmlText escapes s for an HTML element such as <summary>.
func htmlText(s string) string {
	return html.EscapeString(clean(oneLine(s)))
}

// oneLine joins the lines of s with spaces (text.OneLine). Unlike
// text.OneLine it leaves text of one line as it is: a value the report
// quotes in a code span (a field's value, a name, an image) keeps its
// spaces, so that it shows as written.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return itext.OneLine(s)
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// truncate cuts s to at most n runes, ending it with "…" when cut.
func truncate(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return strings.TrimRight(s[:pos], " ") + "…"
		}
		i++
	}
	return s
}
