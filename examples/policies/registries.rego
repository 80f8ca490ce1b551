# Images come only from the registries listed here: edit the list.
package main

allowed_registries := {"ghcr.io/acme/", "registry.k8s.io/", "docker.io/library/"}

deny_registry contains msg if {
	some c in containers
	not allowed(c.image)
	msg := sprintf("%s: container %s pulls %s, from none of the allowed registries %v", [name, c.name, c.image, allowed_registries])
}

allowed(image) if {
	some prefix in allowed_registries
	startswith(image, prefix)
}
