package testenv

import (
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

func TestEnvServesAPI(t *testing.T) {
	ns := env.Namespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: ns},
		Data:       map[string]string{"colour": "blue"},
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("configmap/settings -n %s: create: %v", ns, err)
	}
	got, err := cs.CoreV1().ConfigMaps(ns).Get(t.Context(), "settings", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("configmap/settings -n %s: get: %v", ns, err)
	}
	if got.Data["colour"] != "blue" {
		t.Errorf("configmap data = %v, want colour=blue", got.Data)
	}
}

func TestKubeconfigIsAdmin(t *testing.T) {
	raw, err := clientcmd.LoadFromFile(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if raw.CurrentContext != ContextName {
		t.Errorf("current context = %q, want %q", raw.CurrentContext, ContextName)
	}
	fi, err := os.Stat(env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("kubeconfig mode = %v, want it unreadable by others (it holds a client key)", perm)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", env.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Only an admin may list cluster-scoped objects such as Namespaces.
	if _, err := cs.CoreV1().Namespaces().List(t.Context(), metav1.ListOptions{}); err != nil {
		t.Errorf("list namespaces with the kubeconfig: %v", err)
	}
}

func TestServiceClusterIPRangeIsLarge(t *testing.T) {
	ns := env.Namespace(t)
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	// 10.96.3.4 is outside the envtest default 10.0.0.0/24 and inside the /16.
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: corev1.ServiceSpec{
			ClusterIP: "10.96.3.4",
			Ports:     []corev1.ServicePort{{Port: 80}},
		},
	}
	if _, err := cs.CoreV1().Services(ns).Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatalf("service/web -n %s with clusterIP 10.96.3.4: create: %v", ns, err)
	}
	// Give the IP back: without a namespace controller, deleting the
	// namespace would not, and -count=2 would find it taken.
	if err := cs.CoreV1().Services(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Errorf("service/web -n %s: delete: %v", ns, err)
	}
}
