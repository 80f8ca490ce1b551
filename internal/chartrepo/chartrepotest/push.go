// Package chartrepotest holds what tests of chart sources share: pushing
// a chart to an OCI registry the way helm push lays it out.
package chartrepotest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/snapply/snapply/internal/chartrepo"
)

// PushChart pushes a chart to the OCI registry at base (an http:// URL)
// as `helm push` lays it out: a config blob, one chart layer, an OCI
// manifest tagged with the version.
func PushChart(t testing.TB, base, repo, tag string, tgz []byte) {
	t.Helper()
	blob := func(b []byte) string {
		d := chartrepo.Digest(b)
		resp, err := http.Post(base+"/v2/"+repo+"/blobs/uploads/", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if !strings.HasPrefix(loc, "http") {
			loc = base + loc
		}
		sep := "?"
		if strings.Contains(loc, "?") {
			sep = "&"
		}
		req, _ := http.NewRequest(http.MethodPut, loc+sep+"digest="+d, bytes.NewReader(b))
		if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("push blob: %v %v", err, resp)
		}
		resp.Body.Close()
		return d
	}
	config := []byte(`{"name":"demo","version":"` + tag + `"}`)
	manifest, _ := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     "application/vnd.oci.image.manifest.v1+json",
		"config":        map[string]any{"mediaType": "application/vnd.cncf.helm.config.v1+json", "digest": blob(config), "size": len(config)},
		"layers":        []any{map[string]any{"mediaType": "application/vnd.cncf.helm.chart.content.v1.tar+gzip", "digest": blob(tgz), "size": len(tgz)}},
	})
	req, _ := http.NewRequest(http.MethodPut, base+"/v2/"+repo+"/manifests/"+tag, bytes.NewReader(manifest))
	req.Header.Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("push manifest: %v %v", err, resp)
	}
	resp.Body.Close()
}
