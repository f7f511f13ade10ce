# The two commands a new user needs are `make run` and `make test`; see README.md.
SHELL := /bin/bash
.DEFAULT_GOAL := help
DEVDIR ?= .local

.PHONY: help run test package token outbox bench fuzz fmt vet deadcode clean

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

run: ## the whole service locally: Azurite, both apps under the local Functions host on :7071
	@bash scripts/run.sh

test: ## install what tests need, package both apps, run every test (counted)
	@bash scripts/test.sh

package: ## dist/dispatcher and dist/processor (host.json, static handler, function.json) + zips
	@bash scripts/package.sh

token: ## print a dev JWT: make token TENANT=<tid> ROLES=Esign.Initiator,Service.Admin [SUB=alice] [OID=<id>]
	@go run ./devtools/cmd/devtoken --dir $(DEVDIR) $(if $(TENANT),--tenant $(TENANT)) $(if $(ROLES),--roles $(ROLES)) $(if $(SUB),--sub $(SUB)) $(if $(OID),--oid $(OID))

outbox: ## the messages make run's outbox provider "sent", one JSON line each: make outbox [TO=addr]
	@go run ./devtools/cmd/devstore --dir $(DEVDIR) outbox $(if $(TO),--to $(TO))

bench: ## benchmarks (speed and memory); see README for what each measures
	@bash scripts/bench.sh

fuzz: ## run each fuzz target for FUZZTIME (default 20s), growing the kept corpus
	@bash scripts/fuzz.sh

fmt: ## gofmt the tree
	@gofmt -w shared dispatcher processor tests connector portal devtools

vet: ## go vet every module
	@go vet ./shared/... ./dispatcher/... ./processor/... ./tests/... ./connector/... ./portal/... ./devtools/...

deadcode: ## functions nothing reaches (golang.org/x/tools deadcode, pinned; tests count as callers)
	@bash scripts/deadcode.sh

clean: ## remove build output (keeps .local dev keys and data)
	rm -rf dist bin
