# readers/c/c.mk: libpinkeeper, the C reader (C11, OpenSSL 3's libcrypto and libssl, libcurl's
# header only). Included from the top-level Makefile.
#
#   make c-reader   .build/c: libpinkeeper.so.0 (and the libpinkeeper.so link), include/pinkeeper.h,
#                   pinkeeper.pc, pinkeeper-reader-c (`pinkeeper-reader-c validate …`)
#   make test-c     the conformance table at library level under ASan and UBSan, the command line
#                   against every case and its --help, TLS on loopback (openssl s_server, an HTTPS
#                   server, libcurl), the examples built with pkg-config, and a 20-second run of the
#                   parser's fuzzer
#   make fuzz-c     the parser's fuzzer for FUZZ_SECONDS (300 by default)
#   make bench-c    the cost of one question against 2,000 pins (not part of test-c)
#   make install-c  the library, headers, pinkeeper.pc and libpinkeeper.3 under DESTDIR and PREFIX
#                   (LIBDIR: PREFIX/lib by default; Debian passes its multiarch directory)

CR_TOP   := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))../..)
CR_SRC   := $(CR_TOP)/readers/c
CR_OUT   := $(CR_TOP)/.build/c
CR_CC    ?= gcc
CR_WARN  := -std=c11 -D_DEFAULT_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wvla
CR_FLAGS := $(CR_WARN) -O2 -g -fPIC -fvisibility=hidden -fstack-protector-strong -D_FORTIFY_SOURCE=2 -I$(CR_SRC)/include
CR_LIBS  := -lssl -lcrypto -pthread
CR_CORE  := $(wildcard $(CR_SRC)/src/*.c)
CR_HDRS  := $(wildcard $(CR_SRC)/src/*.h) $(wildcard $(CR_SRC)/include/*.h)
CR_LIB   := $(CR_OUT)/libpinkeeper.so.0
CR_CLI   := $(CR_OUT)/pinkeeper-reader-c
CR_VERSION := 0.1.0

.PHONY: c-reader test-c fuzz-c bench-c install-c

c-reader: $(CR_LIB) $(CR_CLI) $(CR_OUT)/pinkeeper.pc $(CR_OUT)/include/pinkeeper.h

# CR_NO_DEPS=1 (debian/rules): Build-Depends provide the tools; nothing is installed.
$(CR_OUT)/.deps:
	@[ -n "$(CR_NO_DEPS)" ] || $(CR_TOP)/scripts/install-deps.sh gcc libc6-dev libssl-dev libcurl4-openssl-dev pkg-config openssl
	@mkdir -p $(CR_OUT) && touch $@

# -z now and relro: the GOT read-only once loaded; the version script exports pk_* only.
$(CR_LIB): $(CR_CORE) $(CR_HDRS) $(CR_SRC)/libpinkeeper.map $(CR_OUT)/.deps
	$(CR_CC) $(CR_FLAGS) -shared -o $@ $(CR_CORE) -Wl,-soname,libpinkeeper.so.0 \
		-Wl,--version-script=$(CR_SRC)/libpinkeeper.map -Wl,-z,now -Wl,-z,relro -Wl,--as-needed $(CR_LIBS)
	ln -sf libpinkeeper.so.0 $(CR_OUT)/libpinkeeper.so

$(CR_OUT)/include/pinkeeper.h: $(CR_SRC)/include/pinkeeper.h $(CR_SRC)/include/pinkeeper_curl.h
	@mkdir -p $(CR_OUT)/include
	cp $(CR_SRC)/include/pinkeeper.h $(CR_SRC)/include/pinkeeper_curl.h $(CR_OUT)/include/

$(CR_OUT)/pinkeeper.pc: $(CR_SRC)/pinkeeper.pc.in $(CR_OUT)/.deps
	sed -e 's|@PREFIX@|$(CR_OUT)|; s|@LIBDIR@|$${prefix}|; s|@INCLUDEDIR@|$${prefix}/include|; s|@VERSION@|$(CR_VERSION)|' $< > $@

$(CR_CLI): $(CR_SRC)/tools/pinkeeper-reader-c.c $(CR_LIB) $(CR_OUT)/include/pinkeeper.h
	$(CR_CC) $(CR_FLAGS) -fPIE -pie -o $@ $< -L$(CR_OUT) -lpinkeeper -Wl,-rpath,'$$ORIGIN' $(CR_LIBS)

# The library's sources compiled into each test program with the sanitizers, so that a fault in
# the library itself is caught; the table is read from the repository.
CR_SAN   := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CR_TESTS := $(CR_OUT)/tests
CR_RUNNER := $(CR_SRC)/tests/runner.c $(CR_SRC)/tests/runner.h
$(CR_TESTS)/conformance: $(CR_SRC)/tests/conformance.c $(CR_RUNNER) $(CR_CORE) $(CR_HDRS) $(CR_OUT)/.deps
	@mkdir -p $(CR_TESTS)
	$(CR_CC) $(CR_WARN) -O1 -g $(CR_SAN) -I$(CR_SRC)/include -I$(CR_SRC)/src -o $@ $< $(CR_SRC)/tests/runner.c $(CR_CORE) $(CR_LIBS)

$(CR_TESTS)/reader_test: $(CR_SRC)/tests/reader_test.c $(CR_SRC)/tests/runner.c $(CR_CORE) $(CR_HDRS) $(CR_OUT)/.deps
	@mkdir -p $(CR_TESTS)
	$(CR_CC) $(CR_WARN) -O1 -g $(CR_SAN) -I$(CR_SRC)/include -I$(CR_SRC)/src -o $@ $< $(CR_SRC)/tests/runner.c $(CR_CORE) $(CR_LIBS)

$(CR_TESTS)/reader_test_tsan: $(CR_SRC)/tests/reader_test.c $(CR_SRC)/tests/runner.c $(CR_CORE) $(CR_HDRS) $(CR_OUT)/.deps
	@mkdir -p $(CR_TESTS)
	$(CR_CC) $(CR_WARN) -O1 -g -fsanitize=thread -I$(CR_SRC)/include -I$(CR_SRC)/src -o $@ $< $(CR_SRC)/tests/runner.c $(CR_CORE) $(CR_LIBS)

$(CR_TESTS)/tls_probe: $(CR_SRC)/tests/tls_probe.c $(CR_CORE) $(CR_HDRS) $(CR_OUT)/.deps
	@mkdir -p $(CR_TESTS)
	$(CR_CC) $(CR_WARN) -O1 -g $(CR_SAN) -I$(CR_SRC)/include -I$(CR_SRC)/src -o $@ $< $(CR_CORE) $(CR_LIBS)

# The examples as a program outside the tree builds them: pkg-config against .build/c.
CR_EXAMPLES := $(CR_TOP)/docs/examples/c
$(CR_TESTS)/pinned-get-%: $(CR_EXAMPLES)/pinned-get-%.c $(CR_EXAMPLES)/url.h c-reader
	@mkdir -p $(CR_TESTS)
	$(CR_CC) $(CR_WARN) -O2 -o $@ $< $$(PKG_CONFIG_PATH=$(CR_OUT) pkg-config --cflags --libs pinkeeper \
		$(if $(findstring curl,$*),libcurl)) -lssl -lcrypto

# The parser's fuzzer: clang's libFuzzer with ASan and UBSan, seeded with the table's files.
CR_FUZZ := $(CR_OUT)/fuzz
FUZZ_SECONDS ?= 300
$(CR_FUZZ)/parse_fuzzer: $(CR_SRC)/fuzz/parse_fuzzer.c $(CR_CORE) $(CR_HDRS) $(CR_OUT)/.deps
	@mkdir -p $(CR_FUZZ)/corpus
	clang $(CR_WARN) -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fuse-ld=lld \
		-I$(CR_SRC)/include -I$(CR_SRC)/src -o $@ $< $(CR_CORE) $(CR_LIBS)
	python3 $(CR_SRC)/fuzz/seed_corpus.py $(CR_TOP)/Tests/Conformance/cases.json $(CR_FUZZ)/seeds

fuzz-c: $(CR_FUZZ)/parse_fuzzer
	$< -max_total_time=$(FUZZ_SECONDS) -max_len=4096 $(CR_FUZZ)/corpus $(CR_FUZZ)/seeds

CR_TEST_PROGRAMS := $(addprefix $(CR_TESTS)/,conformance reader_test reader_test_tsan tls_probe pinned-get-openssl pinned-get-curl)
test-c: c-reader $(CR_TEST_PROGRAMS)
	@$(CR_TOP)/scripts/install-deps.sh faketime e2fsprogs xfsprogs
	@cp $(CR_LIB) $(CR_TESTS)/
	@status=0; \
	$(CR_TESTS)/conformance $(CR_TOP)/Tests/Conformance/cases.json || status=1; \
	$(CR_TESTS)/reader_test || status=1; \
	TSAN_OPTIONS=halt_on_error=1 $(CR_TESTS)/reader_test_tsan || status=1; \
	python3 $(CR_SRC)/tests/play_commands.py $(CR_TOP)/Tests/Conformance/cases.json $(CR_CLI) || status=1; \
	python3 $(CR_SRC)/tests/command_help.py $(CR_CLI) || status=1; \
	python3 $(CR_SRC)/tests/tls.py $(CR_TESTS) || status=1; \
	page=$$(groff -man -ww -z $(CR_TOP)/docs/man/libpinkeeper.3 2>&1); [ -z "$$page" ] || { echo "$$page"; status=1; }; \
	mkdir -p $(CR_FUZZ); \
	$(MAKE) --no-print-directory fuzz-c FUZZ_SECONDS=20 >$(CR_FUZZ)/short-run.log 2>&1 || { tail -40 $(CR_FUZZ)/short-run.log; status=1; }; \
	exit $$status

bench-c: c-reader
	$(CR_CC) $(CR_WARN) -O2 -I$(CR_SRC)/include -o $(CR_OUT)/verdict_bench $(CR_SRC)/bench/verdict_bench.c \
		-L$(CR_OUT) -lpinkeeper -Wl,-rpath,$(CR_OUT)
	$(CR_OUT)/verdict_bench

# The real file carries the full version; the soname link and the development link point to it.
CR_PREFIX := $(or $(PREFIX),/usr/local)
CR_LIBDIR := $(or $(LIBDIR),$(CR_PREFIX)/lib)
install-c: c-reader
	install -d $(DESTDIR)$(CR_LIBDIR)/pkgconfig $(DESTDIR)$(CR_PREFIX)/include $(DESTDIR)$(CR_PREFIX)/share/man/man3
	install -m 0644 $(CR_LIB) $(DESTDIR)$(CR_LIBDIR)/libpinkeeper.so.$(CR_VERSION)
	ln -sf libpinkeeper.so.$(CR_VERSION) $(DESTDIR)$(CR_LIBDIR)/libpinkeeper.so.0
	ln -sf libpinkeeper.so.0 $(DESTDIR)$(CR_LIBDIR)/libpinkeeper.so
	install -m 0644 $(CR_SRC)/include/pinkeeper.h $(CR_SRC)/include/pinkeeper_curl.h $(DESTDIR)$(CR_PREFIX)/include/
	sed -e 's|@PREFIX@|$(CR_PREFIX)|; s|@LIBDIR@|$(CR_LIBDIR)|; s|@INCLUDEDIR@|$${prefix}/include|; s|@VERSION@|$(CR_VERSION)|' \
		$(CR_SRC)/pinkeeper.pc.in > $(DESTDIR)$(CR_LIBDIR)/pkgconfig/pinkeeper.pc
	install -m 0644 $(CR_TOP)/docs/man/libpinkeeper.3 $(DESTDIR)$(CR_PREFIX)/share/man/man3/
