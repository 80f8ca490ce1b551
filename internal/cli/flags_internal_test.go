package cli

import (
	"bufio"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/snapply/snapply/internal/engine"
	"github.com/snapply/snapply/internal/kube"
)

// testRoot builds the command tree with its globals.
func testRoot() (*cobra.Command, *globals) {
	g := &globals{io: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard}, kube: newKubeFlags()}
	return newRoot(g), g
}

// commandsWith returns the commands that have the flag name, by name.
func commandsWith(root *cobra.Command, name string) map[string]*pflag.Flag {
	out := map[string]*pflag.Flag{}
	if f := root.PersistentFlags().Lookup(name); f != nil {
		out["snapply"] = f
	}
	for _, c := range root.Commands() {
		if f := c.Flags().Lookup(name); f != nil {
			out[c.Name()] = f
		}
	}
	return out
}

// The default each flag's help shows is the value the code runs with: the
// options' Default functions, and for --request-timeout the timeout of the
// client snapply builds.
func TestFlagDefaultsAreTheValuesUsed(t *testing.T) {
	root, _ := testRoot()
	d, dd, k := engine.DefaultOptions(), engine.DefaultDeployOptions(), kube.DefaultOptions()
	want := map[string]string{
		"store":               d.StorePath,
		"scope":               d.Scope,
		"concurrency":         strconv.Itoa(d.Concurrency),
		"name":                d.Name,
		"inventory-namespace": d.InventoryNamespace,
		"timeout":             dd.Timeout.String(),
		"prune":               strconv.FormatBool(dd.Prune),
		"wait":                strconv.FormatBool(dd.Wait),
		"request-timeout":     formatDuration(k.Timeout),
	}
	for name, value := range want {
		flags := commandsWith(root, name)
		if len(flags) == 0 {
			t.Errorf("no command has --%s", name)
		}
		for cmd, f := range flags {
			if f.DefValue != value {
				t.Errorf("%s --%s: help says default %q, the code uses %q", cmd, name, f.DefValue, value)
			}
		}
	}

	kc := os.Getenv("KUBECONFIG_FOR_TEST")
	if kc == "" {
		kc = writeTestKubeconfig(t)
	}
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{
		{nil, k.Timeout},
		{[]string{"--request-timeout", "0"}, 0},
		{[]string{"--request-timeout", "5s"}, 5 * time.Second},
	} {
		for _, name := range []string{"plan", "apply", "rollback", "diff", "render", "version", "action"} {
			root, g := testRoot()
			cmd, _, err := root.Find([]string{name})
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(append([]string{"--kubeconfig", kc}, tt.args...)); err != nil {
				t.Fatalf("%s %v: %v", name, tt.args, err)
			}
			c, err := kube.NewClient(g.kube, k)
			if err != nil {
				t.Fatal(err)
			}
			if c.Config.Timeout != tt.want {
				t.Errorf("%s %v: request timeout %s, want %s", name, tt.args, c.Config.Timeout, tt.want)
			}
		}
	}
}

func writeTestKubeconfig(t *testing.T) string {
	t.Helper()
	path := t.TempDir() + "/config"
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- {name: c, cluster: {server: \"https://127.0.0.1:1\"}}\nusers:\n- {name: u, user: {}}\ncontexts:\n- {name: c, context: {cluster: c, user: u}}\ncurrent-context: c\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readmeRow is a row of a "| flag | default | meaning |" table.
var readmeRow = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) \\|")

// readmeHeading names the command of the flag tables under a heading:
// "### `snapply plan` flags", "### Apply".
var readmeHeading = regexp.MustCompile("^#+ (?:`snapply ([a-z]+)`|(Apply)$)")

// Every flag default the README documents is the default of the command
// its table is about, or, under other headings, of every command that has
// the flag.
func TestReadmeFlagDefaults(t *testing.T) {
	root, _ := testRoot()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inTable, rows, command := false, 0, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			command = ""
			if m := readmeHeading.FindStringSubmatch(line); m != nil {
				command = strings.ToLower(m[1] + m[2])
			}
		case strings.HasPrefix(line, "| flag | default |"):
			inTable = true
			continue
		case !strings.HasPrefix(line, "|"):
			inTable = false
		}
		m := readmeRow.FindStringSubmatch(line)
		if !inTable || m == nil {
			continue
		}
		rows++
		name := m[1] // "--store FILE", "-o, --output"
		if _, long, ok := strings.Cut(name, ", "); ok {
			name = long
		}
		name = strings.TrimPrefix(strings.Fields(name)[0], "--")
		doc := strings.Trim(strings.TrimSpace(m[2]), "`")
		switch doc {
		case "off":
			doc = "false"
		case "on":
			doc = "true"
		}
		flags := commandsWith(root, name)
		if command != "" {
			c, _, err := root.Find([]string{command})
			if err != nil || c.Flag(name) == nil {
				t.Errorf("README documents %s --%s, which it does not have", command, name)
				continue
			}
			flags = map[string]*pflag.Flag{command: c.Flag(name)}
		}
		if len(flags) == 0 {
			t.Errorf("README documents --%s, which no command has", name)
		}
		for cmd, fl := range flags {
			got := fl.DefValue
			if dur, err := time.ParseDuration(got); err == nil && fl.Value.Type() == "duration" {
				got = formatReadmeDuration(dur)
			}
			if got != doc {
				t.Errorf("%s --%s: README says default %q, the code %q", cmd, name, doc, got)
			}
		}
	}
	if rows < 20 {
		t.Errorf("read %d flag rows from the README: its tables changed shape?", rows)
	}
}

// formatReadmeDuration prints a duration as the README does: "5m".
func formatReadmeDuration(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "0s")
	s = strings.TrimSuffix(s, "0m")
	return s
}
