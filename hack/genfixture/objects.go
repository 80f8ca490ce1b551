package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Images of the fixture: the base runs baseImage, a changed Deployment
// changedImage.
const (
	baseImage    = "registry.k8s.io/pause:3.10"
	changedImage = "registry.k8s.io/pause:3.9"
)

// Service ports: the base serves basePort, a changed Service changedPort.
const (
	basePort    = 80
	changedPort = 8080
)

// member returns the k-th object of namespace ns. Every block of ten is
// four ConfigMaps, three Deployments and three Services; Deployment app-i
// reads ConfigMap config-i and Service app-i selects Deployment app-i, so
// that each refers to an object that comes before it.
func member(r *rand.Rand, ns string, k int) any {
	block, slot := k/10, k%10
	switch {
	case slot < 4:
		return configMap(r, ns, fmt.Sprintf("config-%03d", 4*block+slot))
	case slot < 7:
		i := 3*block + slot - 4
		return deployment(r, ns, fmt.Sprintf("app-%03d", i), fmt.Sprintf("config-%03d", i))
	default:
		return service(ns, fmt.Sprintf("app-%03d", 3*block+slot-7))
	}
}

// added returns the objects the changed variant adds to namespace ns.
func added(r *rand.Rand, ns string) []any {
	return []any{
		configMap(r, ns, "added-config"),
		deployment(r, ns, "added-app", "added-config"),
	}
}

// change changes obj the way a typical commit would: one ConfigMap value;
// a Deployment's image tag and replicas; a Service's port.
func change(r *rand.Rand, obj any) {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		o.Data["LOG_LEVEL"] = "debug" // the base always says info
		o.Data["app.properties"] = editProperty(r, o.Data["app.properties"])
	case *appsv1.Deployment:
		o.Spec.Template.Spec.Containers[0].Image = changedImage
		*o.Spec.Replicas++
	case *corev1.Service:
		o.Spec.Ports[0].Port = changedPort
	default:
		panic(fmt.Sprintf("change: unexpected %T", obj))
	}
}

func namespace(name string) *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: metav1.ObjectMeta{
			Name:   name,
			Labels: map[string]string{"app.kubernetes.io/part-of": "snapply-bench"},
		},
	}
}

func labels(app string) map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":    app,
		"app.kubernetes.io/part-of": "snapply-bench",
	}
}

// configMap returns a ConfigMap of about 1 KB in five keys.
func configMap(r *rand.Rand, ns, name string) *corev1.ConfigMap {
	settings, err := json.MarshalIndent(map[string]any{
		"cacheTTLSeconds": 30 + r.IntN(600),
		"maxConnections":  16 << r.IntN(5),
		"endpoint":        fmt.Sprintf("https://%s.%s.svc.cluster.local:8443/v1", hex(r, 6), ns),
		"regions":         []string{"eu-west-1", "us-east-1", "ap-south-1"}[:1+r.IntN(3)],
		"token_audience":  hex(r, 16),
	}, "", "  ")
	if err != nil {
		panic(err) // a map of strings and numbers always encodes
	}
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels(name)},
		Data: map[string]string{
			"LOG_LEVEL":      "info",
			"FEATURE_FLAGS":  strings.Join([]string{"search", "checkout", "beta-ui", "audit"}[:1+r.IntN(4)], ","),
			"TZ":             "UTC",
			"app.properties": properties(r),
			"settings.json":  string(settings) + "\n",
		},
	}
}

// properties returns a Java-style properties file of about 600 bytes.
func properties(r *rand.Rand) string {
	var b strings.Builder
	for i := range 14 {
		fmt.Fprintf(&b, "service.option.%02d = %s\n", i, hex(r, 12))
	}
	return b.String()
}

// editProperty gives one property of the file props a new value.
func editProperty(r *rand.Rand, props string) string {
	lines := strings.SplitAfter(props, "\n")
	i := r.IntN(len(lines) - 1) // the last element is the empty string after the final newline
	key, _, _ := strings.Cut(lines[i], " = ")
	lines[i] = fmt.Sprintf("%s = %s\n", key, hex(r, 12))
	return strings.Join(lines, "")
}

// deployment returns a Deployment of the pause image with the resources,
// probes and security context a real workload has, reading ConfigMap cm.
func deployment(r *rand.Rand, ns, name, cm string) *appsv1.Deployment {
	tier := []string{"frontend", "backend", "worker"}[r.IntN(3)]
	podLabels := labels(name)
	podLabels["tier"] = tier
	cpu := fmt.Sprintf("%dm", 50*(1+r.IntN(4)))
	mem := fmt.Sprintf("%dMi", 64*(1+r.IntN(4)))
	probe := func(path string, delay int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}},
			InitialDelaySeconds: delay,
			PeriodSeconds:       10,
			TimeoutSeconds:      2,
			FailureThreshold:    3,
		}
	}
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   ns,
			Labels:      podLabels,
			Annotations: map[string]string{"bench.snapply.dev/owner": "team-" + hex(r, 2)},
		},
		Spec: appsv1.DeploymentSpec{
			Replicas:             ptr(int32(1 + r.IntN(3))),
			RevisionHistoryLimit: ptr(int32(5)),
			Selector:             &metav1.LabelSelector{MatchLabels: labels(name)},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge:       ptr(intstr.FromString("25%")),
					MaxUnavailable: ptr(intstr.FromInt32(0)),
				},
			},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      podLabels,
					Annotations: map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
				},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: ptr(int64(10)),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr(true),
						RunAsUser:      ptr(int64(65532)),
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "app",
						Image: baseImage,
						Ports: []corev1.ContainerPort{
							{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: 9090, Protocol: corev1.ProtocolTCP},
						},
						EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: cm},
						}}},
						Env: []corev1.EnvVar{
							{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
							{Name: "TIER", Value: tier},
						},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse(cpu),
								corev1.ResourceMemory: resource.MustParse(mem),
							},
							Limits: corev1.ResourceList{
								corev1.ResourceMemory: resource.MustParse(mem),
							},
						},
						ReadinessProbe: probe("/readyz", 2),
						LivenessProbe:  probe("/healthz", 10),
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr(false),
							ReadOnlyRootFilesystem:   ptr(true),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}

// service returns the ClusterIP Service of Deployment app.
func service(ns, app string) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: app, Namespace: ns, Labels: labels(app)},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: labels(app),
			Ports: []corev1.ServicePort{{
				Name:       "http",
				Port:       basePort,
				TargetPort: intstr.FromString("http"),
				Protocol:   corev1.ProtocolTCP,
			}},
		},
	}
}

// hex returns n random bytes in hexadecimal.
func hex(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		fmt.Fprintf(&b, "%02x", r.IntN(256))
	}
	return b.String()
}

func ptr[T any](v T) *T { return &v }
