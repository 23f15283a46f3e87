# readers/node/node.mk: the Node.js reader (readers/node), standard modules only, tested with
# node:test. Included from the top-level Makefile.
#
#   make test-node   the conformance table (library and command line), the reader's unit tests
#                    and the TLS helpers against servers on loopback, with `node` (installed when
#                    missing) and again with Debian 12's Node 18 (readers/node/run-tests.sh)

NR_TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)

.PHONY: test-node

# The check is for the command: a node from another origin (NodeSource, nvm) will do.
test-node: deps
	@command -v node >/dev/null 2>&1 || $(NR_TOP)/scripts/install-deps.sh nodejs
	$(NR_TOP)/readers/node/run-tests.sh
