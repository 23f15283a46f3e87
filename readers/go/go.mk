# readers/go/go.mk: the Go reader, standard library only, built with Debian's golang-go (Go 1.19)
# and nothing downloaded (GOPROXY=off). Go's caches live under .build/go. Included from the
# top-level Makefile.
#
#   make go-reader   .build/go/pinkeeper-reader (`pinkeeper-reader validate …`)
#   make test-go     gofmt and go vet, then the tests: the conformance table, the cache reader,
#                    TLS on loopback (the race detector on), and the command line against every
#                    conformance case and options row (Tests/Conformance/play_commands.py compares
#                    it with the other readers' command lines)

GR_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
GR_SRC := $(GR_TOP)/readers/go
GR_OUT := $(GR_TOP)/.build/go
GR_BIN := $(GR_OUT)/pinkeeper-reader
# No module download, no toolchain switch, no telemetry, no user settings: only .build/go is written.
GR_ENV := GOCACHE=$(GR_OUT)/cache GOPATH=$(GR_OUT)/path GOMODCACHE=$(GR_OUT)/path/pkg/mod \
          GOPROXY=off GOFLAGS= GOENV=off GO111MODULE=on GOTOOLCHAIN=local GOTELEMETRY=off
GR_GO  := cd $(GR_SRC) && $(GR_ENV) go

.PHONY: go-reader test-go

go-reader:
	@$(GR_TOP)/scripts/install-deps.sh golang-go
	$(GR_GO) build -trimpath -o $(GR_BIN) ./cmd/pinkeeper-reader

# The command's test copy takes each case's time from a variable. The race detector needs cgo:
# gcc and libc6-dev, which golang-go only recommends.
test-go: go-reader
	@$(GR_TOP)/scripts/install-deps.sh gcc libc6-dev
	@unformatted=$$(cd $(GR_SRC) && gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -w these: $$unformatted"; exit 1; fi
	$(GR_GO) vet ./...
	$(GR_GO) test -race -count=1 .
	cd $(GR_SRC) && PINKEEPER_READER=$(GR_BIN) $(GR_ENV) go test -count=1 ./cmd/...
