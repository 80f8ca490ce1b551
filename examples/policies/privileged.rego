# No container runs privileged: it would have every capability of the node.
package main

deny_privileged contains msg if {
	some c in containers
	c.securityContext.privileged == true
	msg := sprintf("%s: container %s runs privileged", [name, c.name])
}
