# vsh — the verbs shell. `make test` is the README's test command.
GO       ?= go
CGO      := $(shell $(GO) env CGO_ENABLED)
# -race needs cgo and a C compiler.
RACE     := $(shell [ "$(CGO)" = 1 ] && command -v gcc >/dev/null 2>&1 && echo -race)
# The real backend is built only where cgo is on and libibverbs' headers exist.
TAGS     := $(shell [ "$(CGO)" = 1 ] && [ -f /usr/include/infiniband/verbs.h ] && echo ibverbs)
GOFLAGS_TAGS := $(if $(TAGS),-tags $(TAGS),)

.PHONY: all build run test vet lint bench fuzz docs clean

all: build

build:
	$(GO) build $(GOFLAGS_TAGS) -o bin/ ./cmd/...

run:
	$(GO) run $(GOFLAGS_TAGS) ./cmd/vsh

vet:
	$(GO) vet ./...

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt -l:"; echo "$$out"; exit 1; fi

test: vet
	$(GO) test $(RACE) $(GOFLAGS_TAGS) ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

FUZZTIME ?= 30s
# Every fuzz target in the module, each for FUZZTIME (make test runs their seeds).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; done

docs:
	$(GO) generate ./...

clean:
	rm -rf bin
