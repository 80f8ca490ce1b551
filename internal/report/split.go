package report

import (
	"errors"
	"fmt"
	"strings"

	"github.com/snapply/snapply/internal/plan"
)

// SplitMarkdown renders p as a first comment (marker, title, summary table
// and as many details as fit) and continuation comments (marker, then the
// title with a " (part 2/3)" suffix, then the remaining details), each at
// most maxBytes bytes. It is used for PR comments over GitHub's 65,536
// character limit. A plan that fits returns one piece, the same as
// Markdown without a limit; otherwise every piece's title carries its part
// number, and every piece starts with opts.Marker. opts.MaxBytes is
// ignored.
//
// Nothing is left out that fits: the changes table loses rows only when it
// does not fit in the first piece (every changed object still has its
// details in some piece), and an object's diff, or its whole details, is
// replaced by a note only when it alone is larger than a piece.
func SplitMarkdown(p *plan.Plan, opts MarkdownOptions, maxBytes int) ([]string, error) {
	if p == nil {
		return nil, errors.New("split markdown report: nil plan")
	}
	if maxBytes <= 0 {
		return nil, fmt.Errorf("split markdown report: limit %d is not positive", maxBytes)
	}
	d := newMarkdownDoc(p, opts)
	if whole := d.whole(); len(whole) <= maxBytes {
		return []string{whole}, nil
	}
	// The part numbers' width changes the size of every header: pack with
	// room for numbers of the given width, and widen when there are more
	// pieces than that width can number.
	for width := 1; ; width++ {
		pieces, ok, err := d.split(maxBytes, width)
		if err != nil || ok {
			return pieces, err
		}
	}
}

// partSuffix is the title suffix of piece k of n.
func partSuffix(k, n int) string {
	return fmt.Sprintf(" (part %d/%d)", k, n)
}

// split packs d into pieces of at most maxBytes bytes, with headers sized
// for part numbers of up to width digits. It returns ok false when more
// pieces are needed than such numbers can count.
func (d *markdownDoc) split(maxBytes, width int) (pieces []string, ok bool, err error) {
	most := 1
	for range width {
		most *= 10
	}
	most--
	suffix := partSuffix(most, most)

	// The first piece: head and as many rows of the table as fit.
	firstHead := len(d.head(suffix))
	k := len(d.tbl.rows)
	for k > 0 && firstHead+d.tbl.len(k) > maxBytes {
		k--
	}
	if firstHead+d.tbl.len(k) > maxBytes {
		return nil, false, fmt.Errorf("split markdown report: the summary alone takes %d bytes, more than the limit of %d", firstHead+d.tbl.len(k), maxBytes)
	}

	// Each object's details at the richest tier that fits a piece of its own.
	contHead := len(d.continuationHead(suffix))
	room := maxBytes - contHead
	tiers := make([]tier, len(d.details))
	for i, det := range d.details {
		switch {
		case len(det.full) <= room:
		case len(det.noDiff) <= room:
			tiers[i] = tierNoDiff
		case len(det.minimal) <= room:
			tiers[i] = tierMinimal
		default:
			return nil, false, fmt.Errorf("split markdown report: %d bytes cannot hold the details of a single object", maxBytes)
		}
	}

	// Pack the details in order: first after the table, then in
	// continuation pieces.
	var groups [][]int // indexes of the details in each piece
	groups = append(groups, nil)
	size := firstHead + d.tbl.len(k)
	for i := range d.details {
		n := len(d.details[i].text(tiers[i]))
		if size+n > maxBytes {
			groups = append(groups, nil)
			size = contHead
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], i)
		size += n
	}
	if len(groups) > most {
		return nil, false, nil
	}

	for j, g := range groups {
		suffix := ""
		if len(groups) > 1 {
			suffix = partSuffix(j+1, len(groups))
		}
		var b strings.Builder
		if j == 0 {
			b.WriteString(d.head(suffix))
			b.WriteString(d.tbl.render(k))
		} else {
			b.WriteString(d.continuationHead(suffix))
		}
		for _, i := range g {
			b.WriteString(d.details[i].text(tiers[i]))
		}
		pieces = append(pieces, finish(b.String()))
	}
	return pieces, true, nil
}
