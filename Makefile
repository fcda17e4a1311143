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

build: $(if $(TAGS),lib)
	$(GO) build $(GOFLAGS_TAGS) -o bin/ ./cmd/...

# The simulator as libibverbs.so.1 (verbs/libibverbs), for `vsh run -- PROGRAM`: built where the
# real backend is (cgo and libibverbs' headers). cmd/go takes neither a soname nor a version
# script from #cgo, so both go to the external linker here.
LIBVERBS    := bin/lib/libibverbs.so.1
LIBVERBS_LD := -extldflags '-Wl,-soname,libibverbs.so.1 -Wl,--version-script=$(CURDIR)/verbs/libibverbs/libibverbs.map'

.PHONY: lib test-c
lib:
	@mkdir -p bin/lib
	CGO_ENABLED=1 $(GO) build -tags ibverbs -buildmode=c-shared -ldflags="$(LIBVERBS_LD)" -o $(LIBVERBS) ./verbs/libibverbs
	@rm -f bin/lib/libibverbs.so.h

# make test-c  unmodified C programs (rdma-core's examples, perftest, tests' own) on the simulator
#              through bin/lib/libibverbs.so.1 under `vsh run`; prints
#              "C programs on the simulator: N of N passed" (internal/cprograms).
CPROG_TEST := bin/cprograms.test
test-c: build
	$(GO) test -c -o $(CPROG_TEST) ./internal/cprograms
	VSH_TEST_C=1 $(CPROG_TEST) -test.count=1 -test.timeout=20m

# make run starts bin/vsh (flags in ARGS: make run ARGS='--devices 1'), building it first only
# when a file it is built from (or a directory, for a file removed) is newer, or the build tags
# changed; go build then decides what to recompile. With nothing changed it is at the prompt at once.
# (Expanded only when bin/vsh is considered, not for every target.)
VSH_SRCS = go.mod go.sum $(shell find . \( -name .git -o -name bin -o -name testdata -o -path ./docs \) -prune -o \
             \( -type d -o -name '*.go' ! -name '*_test.go' -o -name '*.md' -o -name '*.[ch]' \) -print)

bin/.tags: FORCE
	@mkdir -p bin; t='$(TAGS) cgo=$(CGO)'; [ "$$(cat $@ 2>/dev/null)" = "$$t" ] || echo "$$t" > $@

.SECONDEXPANSION:
bin/vsh: $$(VSH_SRCS) bin/.tags
	$(GO) build $(GOFLAGS_TAGS) -o bin/vsh ./cmd/vsh
	@touch bin/vsh

run: bin/vsh
	@bin/vsh $(ARGS)

.PHONY: FORCE
FORCE:

vet:
	$(GO) vet ./...

# DUPL_THRESHOLD: the shortest run of tokens dupl reports. lint fails on any
# such run shared by the simulator and the real backend: rxe's rules have
# one home, verbs/rules.
DUPL_THRESHOLD ?= 50
lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go' ':!third_party')); if [ -n "$$out" ]; then echo "gofmt -l:"; echo "$$out"; exit 1; fi
	@out=$$(ls verbs/sim/*.go verbs/ibverbs/*.go | grep -v '_test.go$$' | \
	  $(GO) run github.com/mibk/dupl@v1.1.0 -files -plumbing -t $(DUPL_THRESHOLD) | \
	  grep -E '^verbs/sim/.*duplicate of verbs/ibverbs/|^verbs/ibverbs/.*duplicate of verbs/sim/' || true); \
	  if [ -n "$$out" ]; then echo "dupl: code shared by verbs/sim and verbs/ibverbs (move it to verbs/rules):"; echo "$$out"; exit 1; fi

# Under -race the long workloads skip themselves; they run again without it.
test: vet
	$(GO) test $(RACE) $(GOFLAGS_TAGS) ./...
	$(if $(RACE),$(GO) test -count=1 -run Reliability ./verbs/sim/)
	$(if $(RACE),$(GO) test -count=1 -run 'TestMutants$$' ./lessons/)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

FUZZTIME ?= 30s
# Every fuzz target in the module, each for FUZZTIME (make test runs their seeds).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -timeout 0 $$pkg; \
	  done; done

docs:
	$(GO) generate ./...

clean:
	rm -rf bin

# ---- The soft-RoCE lab: cmd/rxe-lab, docs/lab.md -----------------------------
# make lab        an interactive session on kernel soft-RoCE (rxe0) in a QEMU guest:
#                 vsh --backend ibverbs once bin/vsh has that backend, else bash
# make test-lab   the lab's own tests (boot real guests; rdma-core's pingpongs in them)
# LAB_CACHE=DIR   the lab's cache (default $VSH_LAB_CACHE, else ~/.cache/vsh-lab)
# Both run `rxe-lab setup` first: it installs what the lab needs (apt-get, as root)
# and prepares the guest once; later runs find everything cached.
LAB_CACHE ?=
RXE_LAB   := bin/rxe-lab
LAB_ENV   := $(if $(LAB_CACHE),VSH_LAB_CACHE=$(abspath $(LAB_CACHE)))

.PHONY: rxe-lab lab-setup lab test-lab

rxe-lab:
	$(GO) build -o $(RXE_LAB) ./cmd/rxe-lab

lab-setup: rxe-lab
	$(LAB_ENV) $(RXE_LAB) setup

lab: lab-setup
	@if [ -d cmd/vsh ]; then \
	  tags=$$([ "$(CGO)" = 1 ] && [ -f /usr/include/infiniband/verbs.h ] && echo ibverbs); \
	  echo "$(GO) build $${tags:+-tags $$tags} -o bin/vsh ./cmd/vsh"; \
	  $(GO) build $${tags:+-tags $$tags} -o bin/vsh ./cmd/vsh || \
	    echo "make lab: bin/vsh did not build; the lab starts a shell instead"; \
	fi
	$(LAB_ENV) $(RXE_LAB) shell

test-lab: lab-setup
	$(LAB_ENV) RXE_LAB_BIN=$(abspath $(RXE_LAB)) $(GO) test -tags lab -count=1 -v -timeout 30m ./cmd/rxe-lab/

# ---- The real backend on soft-RoCE: verbs/ibverbs in the lab -----------------
# make test-rxe   builds verbs/ibverbs' tests and cmd/pingpong on the host (cgo, -tags ibverbs;
#                 lab-setup installs libibverbs-dev) and runs the tests in a lab guest next to rxe0
#                 with VSH_RXE=1: the whole conformance suite (verbs/verbstest) on libibverbs — every
#                 scenario passes or is a listed, explained difference (verbs/ibverbs/known_differences.go);
#                 a missing rxe0 is a failure — the backend's own rxe tests, and ping-pong interop:
#                 pingpong rc|uc|ud|srq --backend ibverbs against rdma-core's ibv_*_pingpong, ours as
#                 server and as client; and vsh --backend ibverbs driving one side by hand (exchange,
#                 modify_qp, post/poll) against ibv_rc_pingpong, both directions; and every lesson
#                 (vsh --backend ibverbs lesson play ID): its expectations must hold, a lesson that
#                 needs what rxe lacks is skipped with its reason. It prints how many scenarios ran,
#                 how many pairs passed, and the lessons played, passed and skipped. Then, in the same
#                 guest, the transcripts marked rxe0 in README.md and docs/ (go test ./docs, VSH_RXE=1).
# make bench-rxe  Go pingpong rc against C ibv_rc_pingpong on the same rxe0: interleaved rounds,
#                 medians with min–max, latency and bandwidth ratios for 64 B, 4 KiB and 64 KiB
#                 (reported, not asserted; docs/pingpong.md has the runs). BENCH_ROUNDS=9 for
#                 nine rounds per size instead of five.
RXE_TEST := bin/ibverbs.test
RXE_PP   := bin/pingpong
RXE_VSH  := bin/vsh
RXE_DOCS := bin/docs.test

.PHONY: rxe-binaries test-rxe bench-rxe

rxe-binaries:
	CGO_ENABLED=1 $(GO) test -c -tags ibverbs -o $(RXE_TEST) ./verbs/ibverbs
	CGO_ENABLED=1 $(GO) build -tags ibverbs -o $(RXE_PP) ./cmd/pingpong
	CGO_ENABLED=1 $(GO) build -tags ibverbs -o $(RXE_VSH) ./cmd/vsh
	$(GO) test -c -o $(RXE_DOCS) ./docs

test-rxe: lab-setup rxe-binaries
	$(LAB_ENV) $(RXE_LAB) run -q -timeout 15m -e VSH_RXE=1 -e VSH_RXE_PINGPONG=./$(RXE_PP) -e VSH_RXE_VSH=./$(RXE_VSH) -- \
	  sh -c './$(RXE_TEST) -test.count=1 -test.timeout=14m; s=$$?; \
	    ./$(RXE_DOCS) -test.count=1 -test.v -test.run TestTranscripts || s=1; exit $$s'

# ---- The simulator and kernel soft-RoCE on one wire: internal/interop in the lab ------------
# make test-interop  in the lab guest, kernel rxe1 on one end of a veth pair and the simulator's
#                    UDP link (namespace vshpeer) on the other: rdma-core's ibv_rc/uc/ud/srq_pingpong
#                    on rxe1 against pingpong on the simulator, -c on both, each way round, over IPv6
#                    and IPv4, on the grid of docs/lab.md; INTEROP_SEED=N adds INTEROP_POINTS (12)
#                    points sampled from the grid's space. It prints
#                    "RXE↔SIM interop: N of N pairs passed" and fails on any other count.
INTEROP_TEST := bin/interop.test
INTEROP_SEED ?=
INTEROP_POINTS ?=

.PHONY: test-interop

test-interop: lab-setup rxe-binaries
	CGO_ENABLED=1 $(GO) test -c -tags ibverbs -o $(INTEROP_TEST) ./internal/interop
	$(LAB_ENV) $(RXE_LAB) run -q --peer -timeout 25m -e VSH_RXE_SIM=1 -e VSH_RXE_SIM_PINGPONG=./$(RXE_PP) -e VSH_RXE_SIM_VSH=./$(RXE_VSH) \
	  $(if $(INTEROP_SEED),-e INTEROP_SEED=$(INTEROP_SEED)) $(if $(INTEROP_POINTS),-e INTEROP_POINTS=$(INTEROP_POINTS)) -- \
	  ./$(INTEROP_TEST) -test.count=1 -test.timeout=24m

bench-rxe: lab-setup rxe-binaries
	$(LAB_ENV) $(RXE_LAB) run -q -timeout 30m -e VSH_RXE=1 -e VSH_RXE_BENCH=./$(RXE_PP) \
	  $(if $(BENCH_ROUNDS),-e VSH_RXE_BENCH_ROUNDS=$(BENCH_ROUNDS)) -- \
	  ./$(RXE_TEST) -test.count=1 -test.timeout=29m -test.run '^TestBenchRXE$$'
