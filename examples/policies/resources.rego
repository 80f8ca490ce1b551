# Every container asks for CPU and memory, and caps its memory, so that
# the scheduler can place it and one container cannot starve a node.
package main

required_resources := [["requests", "cpu"], ["requests", "memory"], ["limits", "memory"]]

deny_resources contains msg if {
	some c in containers
	some r in required_resources
	not c.resources[r[0]][r[1]]
	msg := sprintf("%s: container %s sets no resources.%s.%s", [name, c.name, r[0], r[1]])
}
