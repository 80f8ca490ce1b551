# Workloads carry the recommended labels, so that people can find who owns
# them. A warning: it shows in the plan, and does not block.
package main

required_labels := {"app.kubernetes.io/name", "app.kubernetes.io/part-of"}

warn_required_labels contains msg if {
	input.kind in workload_kinds | {"CronJob", "Pod"}
	some label in required_labels
	not input.metadata.labels[label]
	msg := sprintf("%s: missing the label %s", [name, label])
}
