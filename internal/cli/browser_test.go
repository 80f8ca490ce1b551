package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromium returns the path of a Chromium (Debian's chromium package), or
// skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on PATH: the HTML report's browser test needs Debian's chromium (CI installs it: apt-get install chromium)")
	return ""
}

// xssConfigMap carries markup in an annotation: the HTML plan must show it
// as text.
const xssConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: notes
  annotations:
    note: "<script>alert(1)</script>"
data: {a: "1"}
`

// demoPlanHTML applies the demo's v1 overlay, then writes the HTML plan of
// v2 (with xssConfigMap added) and returns its path, with the plan's JSON
// and its graph's JSON.
func demoPlanHTML(t *testing.T) (path string, planJSON, graphJSON string) {
	t.Helper()
	ns := env.Namespace(t) // the inventory's; the demo lives in namespace demo
	root := t.TempDir()
	if err := os.CopyFS(filepath.Join(root, "demo"), os.DirFS("../../fixtures/demo")); err != nil {
		t.Fatal(err)
	}
	// The render root is the repository that holds the path: mark one.
	if err := os.Mkdir(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	v2 := filepath.Join(root, "demo", "overlays", "v2")
	if err := os.WriteFile(filepath.Join(v2, "notes.yaml"), []byte(xssConfigMap), 0o644); err != nil {
		t.Fatal(err)
	}
	k, err := os.ReadFile(filepath.Join(v2, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	k = []byte(strings.Replace(string(k), "  - feature-flags.yaml\n", "  - feature-flags.yaml\n  - notes.yaml\n", 1))
	if err := os.WriteFile(filepath.Join(v2, "kustomization.yaml"), k, 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "s.db")
	inv := []string{"--store", db, "--name", "browser-test", "--inventory-namespace", ns}
	if r := snapply(t, append([]string{"apply", filepath.Join(root, "demo", "overlays", "v1"), "--wait=false", "-q"}, inv...)...); r.code != 0 {
		t.Fatalf("apply v1: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r := snapply(t, append([]string{"plan", v2, "-o", "html", "-q"}, inv...)...)
	if r.code != 0 {
		t.Fatalf("plan -o html: exit %d\n%s", r.code, r.stderr)
	}
	path = filepath.Join(t.TempDir(), "plan.html")
	if err := os.WriteFile(path, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	j := snapply(t, append([]string{"plan", v2, "-o", "json", "-q"}, inv...)...)
	gj := snapply(t, append([]string{"graph", v2, "-o", "json", "-q"}, inv...)...)
	if j.code != 0 || gj.code != 0 {
		t.Fatalf("plan -o json: exit %d, graph: exit %d\n%s%s", j.code, gj.code, j.stderr, gj.stderr)
	}
	return path, j.stdout, gj.stdout
}

// TestHTMLPlanInChromium opens the HTML plan of the demo in headless
// Chromium and checks, in the DOM: the summary, one change per object, the
// graph's nodes, that the filter hides rows, that the annotation's
// <script> is text and never runs, and that the page makes no network
// request. It saves screenshots (the window, the whole page) and the page under
// bin/test-artifacts/.
func TestHTMLPlanInChromium(t *testing.T) {
	bin := chromium(t)
	path, planJSON, graphJSON := demoPlanHTML(t)
	var pl struct {
		Summary map[string]int `json:"summary"`
		Changes []struct {
			Ref    struct{ Kind, Namespace, Name string } `json:"ref"`
			Action string                                 `json:"action"`
		} `json:"changes"`
	}
	var gr struct {
		Nodes []json.RawMessage `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(planJSON), &pl); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(graphJSON), &gr); err != nil {
		t.Fatal(err)
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	var mu sync.Mutex
	var requests, dialogs []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		case *page.EventJavascriptDialogOpening:
			dialogs = append(dialogs, e.Message)
			go func() { _ = chromedp.Run(ctx, page.HandleJavaScriptDialog(false)) }()
		}
	})

	var summary string
	var items, nodes, scripts int
	var itemRefs []string
	var bodyText string
	if err := chromedp.Run(ctx,
		network.Enable(),
		chromedp.Navigate("file://"+path),
		chromedp.WaitVisible("#summary", chromedp.ByQuery),
		chromedp.Text("#summary", &summary, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#changes details.item").length`, &items),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("#changes details.item summary code")).map(e => e.textContent)`, &itemRefs),
		chromedp.Evaluate(`document.querySelectorAll("#graph g.node").length`, &nodes),
		chromedp.Evaluate(`document.scripts.length`, &scripts),
		chromedp.Evaluate(`document.body.textContent`, &bodyText),
	); err != nil {
		t.Fatal(err)
	}

	// The summary: every action's count as the plan has it.
	for _, a := range []string{"create", "update", "delete", "unchanged"} {
		n := pl.Summary[a]
		if n == 0 {
			t.Fatalf("the demo plan has no %s: %v", a, pl.Summary)
		}
		if !strings.Contains(summary, fmt.Sprintf("%d%s", n, a)) {
			t.Errorf("summary %q lacks %d %s", summary, n, a)
		}
	}
	// One change per object.
	if items != len(pl.Changes) {
		t.Errorf("%d changes on the page, want %d", items, len(pl.Changes))
	}
	seen := map[string]int{}
	for _, r := range itemRefs {
		seen[r]++
	}
	for r, n := range seen {
		if n != 1 {
			t.Errorf("%s shown %d times", r, n)
		}
	}
	// The graph: one SVG node per node of `snapply graph`.
	if nodes != len(gr.Nodes) || nodes < len(pl.Changes) {
		t.Errorf("%d SVG nodes, want %d (graph) and at least %d (changes)", nodes, len(gr.Nodes), len(pl.Changes))
	}
	// The <script> of the annotation is text, and nothing ran it.
	if !strings.Contains(bodyText, "<script>alert(1)</script>") {
		t.Error("the annotation's <script> is not shown as text")
	}
	if scripts != 1 {
		t.Errorf("%d scripts in the DOM, want the page's own", scripts)
	}

	// The filter hides rows: only ConfigMaps stay.
	var visibleKinds []string
	var hidden int
	if err := chromedp.Run(ctx,
		chromedp.SendKeys("#filter", "kind:ConfigMap", chromedp.ByQuery),
		chromedp.Evaluate(`Array.from(document.querySelectorAll("#changes details.item")).filter(e => !e.hidden).map(e => e.dataset.kind)`, &visibleKinds),
		chromedp.Evaluate(`document.querySelectorAll("#changes details.item[hidden]").length`, &hidden),
	); err != nil {
		t.Fatal(err)
	}
	configMaps := 0
	for _, c := range pl.Changes {
		if c.Ref.Kind == "ConfigMap" {
			configMaps++
		}
	}
	if len(visibleKinds) != configMaps || hidden != items-configMaps {
		t.Errorf("filter kind:ConfigMap: %d visible (%v), %d hidden; want %d and %d", len(visibleKinds), visibleKinds, hidden, configMaps, items-configMaps)
	}
	for _, k := range visibleKinds {
		if k != "ConfigMap" {
			t.Errorf("filter kind:ConfigMap shows a %s", k)
		}
	}

	// Clear the filter, open the first change, and keep a screenshot.
	var shot, full []byte
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`(() => { const f = document.getElementById("filter"); f.value = ""; f.dispatchEvent(new Event("input")); document.querySelector("#changes details.item").open = true; return true })()`, nil),
		chromedp.CaptureScreenshot(&shot),
		chromedp.FullScreenshot(&full, 100),
	); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "bin", "test-artifacts")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"plan.png": shot, "plan-full.png": full} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.html"), mustRead(t, path), 0o644); err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	for _, u := range requests {
		if !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s", u)
		}
	}
	if len(dialogs) > 0 {
		t.Errorf("a script ran: dialogs %q", dialogs)
	}
}
