package action

import (
	"encoding/base64"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sethvargo/go-githubactions"
	"k8s.io/client-go/tools/clientcmd"
)

// WriteKubeconfig writes the content of the kubeconfig input to a file that
// only its owner may read (0600), in a new temporary directory outside the
// workspace (so that no artifact upload or cache step picks it up), and
// returns its path and a func that removes it.
//
// Before anything else it masks the content whole and every credential in
// it: each user's token, password, client-key-data and
// client-certificate-data (decoded, line by line, and in base64), the
// auth-provider settings and exec environment variables whose names speak
// of a token, secret, password, key or credential. Content that is not a
// kubeconfig is masked line by line, since its credentials cannot be told
// apart, and refused.
//
// Empty content returns "" and a no-op cleanup: client configuration then
// comes from the cluster (in-cluster), KUBECONFIG or ~/.kube/config.
func WriteKubeconfig(a *githubactions.Action, content string) (path string, cleanup func(), err error) {
	cleanup = func() {}
	if strings.TrimSpace(content) == "" {
		return "", cleanup, nil
	}
	a.AddMask(content)
	cfg, err := clientcmd.Load([]byte(content))
	if err != nil {
		for line := range strings.Lines(content) {
			if l := strings.TrimSpace(line); len(l) >= minLineMask {
				a.AddMask(l)
			}
		}
		return "", cleanup, fmt.Errorf("input %s: not a kubeconfig: %w", InputKubeconfig, err)
	}
	m := newMasker(a)
	for _, user := range slices.Sorted(maps.Keys(cfg.AuthInfos)) {
		ai := cfg.AuthInfos[user]
		m.add(ai.Token)
		m.add(ai.Password)
		for _, b := range [][]byte{ai.ClientKeyData, ai.ClientCertificateData} {
			if len(b) > 0 {
				m.add(base64.StdEncoding.EncodeToString(b))
				m.add(string(b))
			}
		}
		if ap := ai.AuthProvider; ap != nil {
			for _, k := range slices.Sorted(maps.Keys(ap.Config)) {
				if secretName(k) {
					m.add(ap.Config[k])
				}
			}
		}
		if ai.Exec != nil {
			for _, e := range ai.Exec.Env {
				if secretName(e.Name) {
					m.add(e.Value)
				}
			}
		}
	}

	dir, err := os.MkdirTemp("", "snapply-kubeconfig-")
	if err != nil {
		return "", cleanup, fmt.Errorf("input %s: %w", InputKubeconfig, err)
	}
	remove := func() { _ = os.RemoveAll(dir) }
	path = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		remove()
		return "", cleanup, fmt.Errorf("input %s: %w", InputKubeconfig, err)
	}
	return path, remove, nil
}

// secretName reports whether a setting named name likely holds a
// credential: masking every setting would hide common words such as a
// profile or region name everywhere in the log.
func secretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"token", "secret", "password", "passwd", "key", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
