// Package render turns a path in a git checkout into the desired objects:
// a kustomization (built with kustomize's krusty, restricted to files under
// a root), a plain YAML or JSON file, or a directory of them.
//
// Every object carries the place it came from (object.Source): the file
// relative to the root and, where it can be told, the 1-based line its
// document starts on, so that a report or a GitHub annotation can point at
// it. Render never reads a file outside the root, never fetches a remote
// base or URL, and runs no plugin and no helm binary.
//
// A kustomization's helmCharts are rendered in process with the Helm SDK
// (helm.go), with kustomize's field names: each chart's output is handed
// to kustomize as an in-memory resource file in place of the entry, so it
// goes through the rest of the kustomization as kustomize's own helm
// generator's output does. Objects from a chart carry the chart, its
// version and template in their Source, the fields that differ between two
// renders in Unstable, and the release namespace in DefaultNamespace.
// With Options.Cluster, charts see the cluster's version and APIs and
// lookup reads it (read-only); with Options.Charts, remote charts are
// fetched, checked against snapply.lock (package chartrepo).
//
// A directory is rendered as follows. If it holds a kustomization file
// (kustomization.yaml, kustomization.yml or Kustomization) it is built with
// kustomize. Otherwise it is walked recursively in lexical order: every
// *.yaml, *.yml and *.json file is decoded as a stream of documents; hidden
// files and directories are skipped; a subdirectory that holds a
// kustomization is built with kustomize as a whole and its files are not
// read as plain YAML (they are usually patches and bases that are not
// objects by themselves).
//
// Errors are one line and name the file they concern relative to the root,
// for example
//
//	render: overlays/prod/deploy.yaml:12: yaml: found character that cannot start any token
//	render: deployment.apps/web -n prod is defined twice: a.yaml:1 and b.yaml:7
package render
