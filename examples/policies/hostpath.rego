# No pod mounts a directory of the node: a hostPath volume reads and writes
# outside the container, and ties the pod to one node.
package main

deny_host_path contains msg if {
	some v in pod_spec.volumes
	v.hostPath
	msg := sprintf("%s: volume %s mounts the node's %s (hostPath)", [name, v.name, v.hostPath.path])
}
