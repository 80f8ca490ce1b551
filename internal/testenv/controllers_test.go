package testenv

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

func TestControllersRollOutDeployment(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a second API server with controllers")
	}
	ctx := t.Context()
	e, err := Start(ctx, Options{Controllers: true})
	if err != nil {
		t.Fatalf("start with controllers: %v", err)
	}
	t.Cleanup(func() {
		if err := e.Stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	ns := e.Namespace(t)
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "pause"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pause", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "pause",
					Image: "registry.k8s.io/pause:3.10",
				}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatalf("deployment.apps/pause -n %s: create: %v", ns, err)
	}

	var got *appsv1.Deployment
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err = cs.AppsV1().Deployments(ns).Get(ctx, "pause", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.AvailableReplicas == 2 && got.Status.UpdatedReplicas == 2, nil
	})
	if err != nil {
		t.Fatalf("deployment.apps/pause -n %s: not rolled out: %v; status %+v", ns, err, got.Status)
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=pause"})
	if err != nil {
		t.Fatal(err)
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == NodeName {
			running++
		}
	}
	if running != 2 {
		t.Errorf("%d pods Running on node %s, want 2", running, NodeName)
	}
}
