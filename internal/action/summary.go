package action

import (
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/sethvargo/go-githubactions"
)

// MaxSummaryBytes is GitHub's limit on the job summary of one step: 1 MiB.
// A larger summary is not shown at all.
const MaxSummaryBytes = 1 << 20

// SummaryCutNote ends a job summary that WriteSummary had to cut.
const SummaryCutNote = "… summary cut at 1 MiB: the full plan is in the store artifact (snapply show)"

// WriteSummary appends markdown to the job summary (the GITHUB_STEP_SUMMARY
// file). When the file would grow past MaxSummaryBytes, markdown is cut at
// the last line that fits, a code fence or <details> block left open is
// closed, and SummaryCutNote follows. Without GITHUB_STEP_SUMMARY (outside
// GitHub Actions) it does nothing.
func WriteSummary(a *githubactions.Action, markdown string) error {
	file := a.Getenv("GITHUB_STEP_SUMMARY")
	if file == "" {
		return nil
	}
	var used int64
	if fi, err := os.Stat(file); err == nil {
		used = fi.Size()
	} else if !os.IsNotExist(err) {
		return fmt.Errorf("job summary %s: %w", file, err)
	}
	// go-githubactions ends what it appends with a line break.
	budget := MaxSummaryBytes - used - int64(len(githubactions.EOF))
	text, ok := cutSummary(markdown, int(max(budget, 0)))
	if !ok {
		return fmt.Errorf("job summary %s: %d bytes already written, no room for more under 1 MiB", file, used)
	}
	return guard("GITHUB_STEP_SUMMARY", func() { a.AddStepSummary(text) })
}

// cutSummary returns md when it fits in budget bytes, else its longest
// prefix of whole lines (of whole characters when there is no line break)
// that, with the blocks it leaves open closed and SummaryCutNote after it,
// fits. It reports false when not even the note fits.
func cutSummary(md string, budget int) (string, bool) {
	if len(md) <= budget {
		return md, true
	}
	tail := "\n" + SummaryCutNote
	maxBody := budget - len(tail)
	for cut := maxBody; cut >= 0; {
		keep := cutAt(md, cut)
		body := keep + closeBlocks(keep)
		if !strings.HasSuffix(body, "\n") {
			body += "\n"
		}
		if len(body) <= maxBody {
			return body + tail, true
		}
		// Cut shorter: by the overflow, and by one line at least.
		cut = min(cut-(len(body)-maxBody), len(keep)-1)
	}
	return "", false
}

// cutAt returns the longest prefix of md, at most limit bytes, that ends
// with a line break, else that ends between two characters. limit is less
// than len(md).
func cutAt(md string, limit int) string {
	s := md[:limit]
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[:i+1]
	}
	for limit > 0 && !utf8.RuneStart(md[limit]) {
		limit--
	}
	return md[:limit]
}

// closeBlocks returns the lines that close the code fence and the
// <details> blocks that md leaves open.
func closeBlocks(md string) string {
	var fence string
	details := 0
	for line := range strings.Lines(md) {
		t := strings.TrimSpace(line)
		run := fenceRun(t)
		if fence != "" {
			if run != "" && run[0] == fence[0] && len(run) >= len(fence) && len(run) == len(t) {
				fence = ""
			}
			continue
		}
		if run != "" {
			fence = run
			continue
		}
		details += strings.Count(t, "<details") - strings.Count(t, "</details>")
	}
	var b strings.Builder
	if !strings.HasSuffix(md, "\n") && (fence != "" || details > 0) {
		b.WriteString("\n")
	}
	if fence != "" {
		b.WriteString(fence + "\n")
	}
	for range max(details, 0) {
		b.WriteString("</details>\n")
	}
	return b.String()
}

// fenceRun returns the run of three or more backticks or tildes that opens
// line t as a code fence, or "".
func fenceRun(t string) string {
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := len(t) - len(strings.TrimLeft(t, t[:1]))
	if n < 3 {
		return ""
	}
	return t[:n]
}
