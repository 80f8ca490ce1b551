package github

import (
	"strings"
	"testing"
)

func TestMarker(t *testing.T) {
	tests := []struct {
		key  string
		part int
		want string
	}{
		{"prod", 1, "<!-- snapply:comment key=prod part=1 -->"},
		{"eu-west/prod_1.a", 12, "<!-- snapply:comment key=eu-west/prod_1.a part=12 -->"},
		{"prod cluster", 2, "<!-- snapply:comment key=prod%20cluster part=2 -->"},
		{"x-->y\n", 1, "<!-- snapply:comment key=x--%3Ey%0A part=1 -->"},
	}
	for _, tt := range tests {
		got := marker(tt.key, tt.part)
		if got != tt.want {
			t.Errorf("marker(%q, %d) = %q, want %q", tt.key, tt.part, got, tt.want)
		}
		if MarkerLen(tt.key, tt.part) != len(tt.want)+1 {
			t.Errorf("MarkerLen(%q, %d) = %d, want %d", tt.key, tt.part, MarkerLen(tt.key, tt.part), len(tt.want)+1)
		}
		if strings.Count(got, "-->") != 1 || strings.Contains(got, "\n") {
			t.Errorf("marker(%q, %d) = %q can end the HTML comment early", tt.key, tt.part, got)
		}
	}
}

func TestParsePart(t *testing.T) {
	tests := []struct {
		name, body string
		want       int
		ok         bool
	}{
		{"first part", "<!-- snapply:comment key=prod part=1 -->\n## Plan", 1, true},
		{"continuation", "<!-- snapply:comment key=prod part=12 -->\nmore", 12, true},
		{"marker only", "<!-- snapply:comment key=prod part=3 -->", 3, true},
		{"edited in a browser", "<!-- snapply:comment key=prod part=2 -->\r\nx\r\n", 2, true},
		{"other key", "<!-- snapply:comment key=staging part=1 -->\nx", 0, false},
		{"key with our key as prefix", "<!-- snapply:comment key=prod-eu part=1 -->\nx", 0, false},
		{"our key as a prefix", "<!-- snapply:comment key=pro part=1 -->\nx", 0, false},
		{"not on the first line", "see\n<!-- snapply:comment key=prod part=1 -->\nx", 0, false},
		{"quoted", "> <!-- snapply:comment key=prod part=1 -->\n> x\n\nlooks good", 0, false},
		{"in a sentence", "the bot wrote <!-- snapply:comment key=prod part=1 --> here", 0, false},
		{"leading zero", "<!-- snapply:comment key=prod part=01 -->\nx", 0, false},
		{"part zero", "<!-- snapply:comment key=prod part=0 -->\nx", 0, false},
		{"trailing text", "<!-- snapply:comment key=prod part=1 --> hi\nx", 0, false},
		{"empty", "", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parsePart("prod", tt.body)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parsePart(%q) = %d, %v, want %d, %v", tt.body, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	for _, key := range []string{"prod", "a much longer environment name/with slashes"} {
		for _, part := range []int{1, 9, 10, 999} {
			body := commentBody(key, part, strings.Repeat("x", Budget(key)))
			if len(body) > MaxCommentBytes {
				t.Errorf("key %q part %d: a text of Budget() bytes makes a %d-byte body, over %d", key, part, len(body), MaxCommentBytes)
			}
		}
		if got := len(commentBody(key, 999, strings.Repeat("x", Budget(key)))); got != MaxCommentBytes {
			t.Errorf("key %q: part 999 with a text of Budget() bytes is %d bytes, want exactly %d", key, got, MaxCommentBytes)
		}
	}
}
