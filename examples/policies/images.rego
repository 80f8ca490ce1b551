# No container runs a moving image: every image names a tag other than
# "latest", or a digest.
package main

deny_latest_tag contains msg if {
	some c in containers
	endswith(c.image, ":latest")
	msg := sprintf("%s: container %s uses the latest tag (%s): pin a version or a digest", [name, c.name, c.image])
}

deny_latest_tag contains msg if {
	some c in containers
	not contains(c.image, "@")
	not regex.match(`:[^/]+$`, c.image)
	msg := sprintf("%s: container %s has no tag (%s means latest): pin a version or a digest", [name, c.name, c.image])
}
