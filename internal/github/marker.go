package github

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxCommentBytes is the most GitHub takes in a comment body (65,536
// characters; counted here in bytes, which is never fewer).
const MaxCommentBytes = 65536

// budgetParts is the number of parts that Budget leaves room for.
const budgetParts = 999

// markerPrefix starts the hidden marker line of every comment the package
// posts.
const markerPrefix = "<!-- snapply:comment key="

// marker returns the hidden marker line of part (from 1) of key's comments,
// without its newline:
//
//	<!-- snapply:comment key=KEY part=N -->
//
// KEY is key with every byte other than letters, digits and "-_.:/@+"
// percent-encoded, so that no key can close the HTML comment.
func marker(key string, part int) string {
	return markerPrefix + escapeKey(key) + " part=" + strconv.Itoa(part) + " -->"
}

// MarkerLen returns how many bytes UpsertComment adds to part (from 1) of
// key's comments: the marker line and its newline.
func MarkerLen(key string, part int) int {
	return len(marker(key, part)) + 1
}

// Budget returns the most bytes that any part of key's comments may hold,
// for comments of fewer than 1,000 parts: MaxCommentBytes less the marker
// of part 999. Give it to the splitter of a long report.
func Budget(key string) int {
	return MaxCommentBytes - MarkerLen(key, budgetParts)
}

// commentBody returns the body that UpsertComment posts as part of key's
// comments.
func commentBody(key string, part int, text string) string {
	return marker(key, part) + "\n" + text
}

// parsePart returns the part number of a comment body that starts with the
// marker line of one of key's comments, and false for any other body (a
// comment of another key, or a person's comment that mentions a marker
// anywhere but on its first line).
func parsePart(key, body string) (int, bool) {
	line, _, _ := strings.Cut(body, "\n")
	line = strings.TrimSuffix(line, "\r")
	rest, ok := strings.CutPrefix(line, markerPrefix+escapeKey(key)+" part=")
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, " -->")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	if err != nil || n < 1 || strconv.Itoa(n) != digits {
		return 0, false
	}
	return n, true
}

// escapeKey percent-encodes the bytes of key that are not letters, digits
// or one of "-_.:/@+".
func escapeKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			strings.IndexByte("-_.:/@+", c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
