package testenv

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// maxPrefix bounds the part of a namespace name taken from the test name;
// the API server appends 5 random characters to it.
const maxPrefix = 40

// Namespace creates a namespace for the test, named after t.Name() with a
// random suffix, and deletes it when the test ends. The deletion is not
// waited for: without Options.Controllers nothing finalizes a namespace.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	var err error
	for range 3 { // a generated name may collide; the API server says so
		var created *corev1.Namespace
		created, err = e.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
		if err == nil {
			name := created.Name
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				err := e.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
				if err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("namespace/%s: delete: %v", name, err)
				}
			})
			return name
		}
		if !apierrors.IsAlreadyExists(err) {
			break
		}
	}
	t.Fatalf("namespace/%s*: create: %v", ns.GenerateName, err)
	return ""
}

// namespacePrefix turns a test name into the start of a valid namespace
// name (a DNS-1123 label): lower case, every run of other characters than
// letters and digits replaced by one '-', at most maxPrefix characters,
// ending in '-'.
func namespacePrefix(testName string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(testName) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= maxPrefix {
			break
		}
	}
	s := b.String()
	if len(s) > maxPrefix {
		s = s[:maxPrefix]
	}
	s = strings.TrimRight(s, "-")
	if s == "" {
		s = "test"
	}
	return s + "-"
}
