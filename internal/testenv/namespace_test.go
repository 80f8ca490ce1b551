package testenv

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"
)

func TestNamespacePrefix(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "TestApply", "testapply-"},
		{"subtest", "TestApply/creates_a_Deployment", "testapply-creates-a-deployment-"},
		{"runs of symbols", "TestX//a__b#01", "testx-a-b-01-"},
		{"leading symbols", "__Test", "test-"},
		{"nothing usable", "/_#", "test-"},
		{"long", "TestAVeryLongNameThatGoesOnAndOnAndOnForeverAndEver", "testaverylongnamethatgoesonandonandonfor-"},
		{"cut at a dash", "TestAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/bbbbb", "testaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := namespacePrefix(tt.in)
			if got != tt.want {
				t.Errorf("namespacePrefix(%q) = %q, want %q", tt.in, got, tt.want)
			}
			// The API server appends 5 characters to a generateName.
			if errs := validation.IsDNS1123Label(got + "abcde"); len(errs) > 0 {
				t.Errorf("namespacePrefix(%q) + suffix is not a valid name: %v", tt.in, errs)
			}
		})
	}
}

func TestNamespaceIsFreshAndDeleted(t *testing.T) {
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	var first, second string
	t.Run("sub", func(t *testing.T) {
		first = env.Namespace(t)
		second = env.Namespace(t)
		for _, ns := range []string{first, second} {
			if _, err := cs.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{}); err != nil {
				t.Errorf("namespace/%s: get: %v", ns, err)
			}
		}
	})
	if first == second {
		t.Fatalf("two calls gave the same namespace %q", first)
	}
	for _, ns := range []string{first, second} {
		if len(ns) < len("testnamespaceisfreshanddeleted-sub-") {
			t.Errorf("namespace %q is not named after the test", ns)
		}
		got, err := cs.CoreV1().Namespaces().Get(t.Context(), ns, metav1.GetOptions{})
		if err != nil {
			continue // gone
		}
		// Without a namespace controller a deleted namespace stays Terminating.
		if got.DeletionTimestamp == nil || got.Status.Phase != corev1.NamespaceTerminating {
			t.Errorf("namespace/%s: not deleted after the test: phase %q", ns, got.Status.Phase)
		}
	}
}
