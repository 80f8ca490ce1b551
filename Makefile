# snapply's build. `make test` is what CI runs (.ci/run).
#
#   make tools    build etcd, kube-apiserver, controllers, kwok and helm for the tests
#   make build    bin/snapply, with the version from git
#   make test     lint, then every test with -race against a real API server
#   make lint     go vet, gofmt, go mod tidy, actionlint, shellcheck and docs checks (changes nothing)
#   make fuzz     each Fuzz target in FUZZPKGS (./...) for FUZZTIME (30s)
#   make bench    hack/bench.sh, hack/storebench, hack/loadbench.sh
#   make demo     hack/demo.sh
#   make clean    remove bin/ and test outputs (not the tools cache: make clean-tools)

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build
MAKEFLAGS += --no-print-directory

GO ?= go
MODULE := github.com/snapply/snapply
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X $(MODULE)/internal/version.Version=$(VERSION) -X $(MODULE)/internal/version.Commit=$(COMMIT)
FUZZTIME ?= 30s
# Go minimizes each new interesting input for up to 60s by default, and
# counts no execs meanwhile: with FuzzOpen's store files (~30 KB) a short
# run would spend all its time minimizing. Crashers are still minimized.
FUZZMINIMIZETIME ?= 2s
FUZZPKGS ?= ./...

# KUBEBUILDER_ASSETS for the tests: the caller's, else what hack/tools.sh built.
ASSETS = $${KUBEBUILDER_ASSETS:-$$(hack/tools.sh envtest)}

.PHONY: tools build test lint vet fmt-check tidy-check actionlint docs-check fuzz bench demo clean clean-tools

# The tests also run kube-controller-manager, kube-scheduler and kwok (real
# rollouts in the readiness and local-cluster tests), and compare chart
# rendering with helm (skipped without it).
tools:
	hack/tools.sh cluster
	hack/tools.sh helm

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/snapply ./cmd/snapply

test: lint tools
	assets="$(ASSETS)"; \
	KUBEBUILDER_ASSETS="$$assets" $(GO) test -race -count=1 ./...

lint: vet fmt-check tidy-check actionlint docs-check

# actionlint over the project's workflows and the ones docs/ tells users to
# copy (e2e.yml runs `uses: ./`, so the action's inputs are checked too).
# Its shellcheck pass is off so that the result does not depend on whether
# shellcheck is installed; scripts/ are checked by shellcheck when it is.
actionlint:
	dir=$$(hack/tools.sh lint | tail -n 1); \
	"$$dir/actionlint-v1.7.12" -shellcheck= .github/workflows/*.yml docs/workflows/*.yml
	if command -v shellcheck >/dev/null; then shellcheck -e SC1091 scripts/*.sh hack/*.sh hack/lib/*.sh; fi

# Each workflow the README shows under a `<!-- workflow: docs/workflows/F.yml -->`
# marker (plan-and-apply.yml, rollback.yml) is that file, copied exactly
# (a block indented in a list is compared without its indentation).
docs-check:
	files=$$(sed -n 's|^ *<!-- workflow: \(docs/workflows/[a-z0-9-]*\.yml\) -->$$|\1|p' README.md); \
	[ -n "$$files" ] || { echo "README shows no workflow of docs/workflows" >&2; exit 1; }; \
	for f in $$files; do \
	  awk -v m="<!-- workflow: $$f -->" '{ t = $$0; sub(/^ */, "", t) } t == m { f = 1; next } f && t ~ /^```yaml/ { p = 1; ind = index($$0, "`") - 1; next } p && t ~ /^```/ { exit } p { print substr($$0, ind + 1) }' README.md > .readme-workflow.tmp; \
	  if ! diff -u "$$f" .readme-workflow.tmp; then rm -f .readme-workflow.tmp; echo "README's workflow differs from $$f: copy it" >&2; exit 1; fi; \
	done; \
	rm -f .readme-workflow.tmp

vet:
	$(GO) vet ./...

fmt-check:
	files=$$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -not -path './bin/*' -print0 | xargs -0 -r gofmt -l); \
	if [ -n "$$files" ]; then echo "not gofmt'ed (run gofmt -w):" >&2; echo "$$files" >&2; exit 1; fi

# go mod tidy -diff prints what tidy would change and fails if anything
# would, without touching go.mod or go.sum.
tidy-check:
	$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy" >&2; exit 1; }

# Each Fuzz target of FUZZPKGS for FUZZTIME, minimizing new inputs for at
# most FUZZMINIMIZETIME (hack/fuzz.sh: it also retries the one failure
# that is Go's and not ours, go.dev/issue/75804).
fuzz: tools
	KUBEBUILDER_ASSETS="$(ASSETS)" FUZZTIME=$(FUZZTIME) FUZZMINIMIZETIME=$(FUZZMINIMIZETIME) GO=$(GO) bash hack/fuzz.sh $(FUZZPKGS)

# Speed against kubectl and kapp (same server, same run), store growth over
# 100 snapshots, time and peak memory at 5,000 objects, and the render time
# of the external-dns Helm chart.
bench:
	bash hack/bench.sh
	$(GO) run ./hack/storebench
	bash hack/loadbench.sh
	$(GO) test -run '^$$' -bench BenchmarkRenderExternalDNS -benchtime 10x -benchmem ./internal/render/

demo:
	bash hack/demo.sh

clean:
	rm -rf bin/ coverage.out coverage.html

clean-tools:
	rm -rf "$$(hack/tools.sh dir)"
