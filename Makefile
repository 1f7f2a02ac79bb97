# ptleak - find memory and descriptor leaks from the outside with ptrace.
#
#   make deps     install the Debian packages ptleak needs (root)
#   make          build build/ptleak
#   make demo     run build/ptleak on the bundled leaky example
#   make check    unit and integration tests; ends "N passed, M failed"
#   make install  build/ptleak and its man page under PREFIX (/usr/local),
#                 staged under DESTDIR if given; make uninstall removes them
#   make check-valgrind   ptleak's totals against a live valgrind run
#   make bench    side by side: native, each engine, valgrind, heaptrack (never part of check)
#   make bench-deps     install what the benchmarks run (sqlite3, heaptrack, valgrind; root)
#   make bench-detail   exact counts at 1-8 threads, start-up table, 1 GiB scan
#   make bench-bigheap  issue 26: reports, memory per block, stalls on 10^5-10^7 blocks
#   make bench-unwtab   unwind tables: compile time, ns per 16-frame walk
#   make bench-drain    the recorder's consumer alone: ns a record
#   make bench-pause    a running program's longest stall at an attach and a live report
#   make fuzz     each fuzzer of tests/fuzz/ for FUZZ_TIME seconds (never part of check)
#   make fuzz-deps      install clang and libFuzzer (root)

ARCH ?= $(shell uname -m)
B := build
VERSION := 0.1
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man

PKGS := libdw libelf libunwind-ptrace libunwind-generic capstone zlib
# cmake, meson, ninja-build: ptleak replacing valgrind in CTest and meson
# (tests/integration/cases_ci.py)
DEPS_DEB := gcc g++ make pkg-config python3 libdw-dev libelf-dev \
	libunwind-dev libcapstone-dev libcmocka-dev valgrind \
	libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 zlib1g-dev \
	golang-go libtest-valgrind-perl strace cmake meson ninja-build
# the HTML report's browser test (cases_html.py); without its Recommends:
# libnss-mdns (avahi's) adds a module to /etc/nsswitch.conf, which changes
# what every process that resolves a name allocates
BROWSER_DEB := chromium

CC ?= cc
# $(call shq,TEXT): TEXT quoted for the shell ('...', each ' as '\''):
# DESTDIR, PREFIX and the checkout's path may hold spaces or quotes.
# Make's own targets and prerequisites are relative paths (B): make
# cannot name a file whose path holds a space.
shq = '$(subst ','\'',$(1))'
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wno-unused-parameter
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# Start-up cost: libcapstone.so has 77,000 relative relocations (its tables
# for every architecture), applied at every start; linked from its archive
# into a position-dependent ptleak they cost nothing.  libstdc++ (only the
# demangler is used) is linked statically for the same reason.  Expanded
# when ptleak is linked, not when make starts: "make deps demo" installs
# libcapstone-dev after the Makefile is read.
CAPSTONE_A = $(wildcard $(shell pkg-config --variable=libdir capstone 2>/dev/null)/libcapstone.a)
PKG_LIBS = $(shell pkg-config --libs $(filter-out $(if $(CAPSTONE_A),capstone),$(PKGS)) 2>/dev/null) \
	$(if $(CAPSTONE_A),$(CAPSTONE_A))
# The same, for ptleak itself (not the tests: some are position-
# independent, and these archives are not), for libdw, libelf, libunwind
# and the compressors they use: eight shared objects mapped and relocated
# at every start were 1.3 ms of the 4.7 ms of `ptleak --version` here.
# From their archives when every one is installed (Debian's -dev
# packages have them), else shared.
DEP_PKGS := $(filter-out capstone,$(PKGS))
DEP_STATIC = $(filter-out -pthread -lpthread,$(shell pkg-config --static --libs $(DEP_PKGS) 2>/dev/null))
DEP_LIBDIR = $(shell pkg-config --variable=libdir libdw 2>/dev/null)
DEP_MISSING = $(strip $(foreach l,$(DEP_STATIC),$(if $(wildcard $(DEP_LIBDIR)/lib$(l:-l%=%).a),,$(l))))
BIN_LIBS = $(if $(DEP_STATIC),$(if $(DEP_MISSING),$(PKG_LIBS),-Wl,-Bstatic $(DEP_STATIC) -Wl,-Bdynamic \
	$(if $(CAPSTONE_A),$(CAPSTONE_A),$(shell pkg-config --libs capstone 2>/dev/null))),$(PKG_LIBS)) \
	-Wl,-Bstatic -lstdc++ -Wl,-Bdynamic
CPPFLAGS += -Iinclude -Iarch/$(ARCH) -I$(B)/gen -D_GNU_SOURCE \
	-DPTLEAK_VERSION='"$(VERSION)"'
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) $(PKG_CFLAGS)
LIBS = $(PKG_LIBS) -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic
LDFLAGS ?= -no-pie

SRC := $(filter-out src/cli/main.c,$(wildcard src/*/*.c)) $(wildcard arch/$(ARCH)/*.c)
OBJ := $(patsubst %.c,$(B)/obj/%.o,$(SRC)) $(B)/obj/gen/recblob.o \
	$(B)/obj/gen/recblob_unwtab.o $(B)/obj/gen/html_assets.o
MAIN_OBJ := $(B)/obj/src/cli/main.o

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

# Target programs run under ptleak by the integration tests: built with
# debug info and no optimisation so that source lines are exact.
TARGET_C := $(wildcard tests/targets/*.c)
TARGET_CXX := $(wildcard tests/targets/*.cc)
TARGET_BIN := $(patsubst tests/targets/%.c,$(B)/targets/%,$(TARGET_C)) \
	$(patsubst tests/targets/%.cc,$(B)/targets/%,$(TARGET_CXX))
TARGET_CFLAGS := -O0 -g -fno-omit-frame-pointer -pthread
# Libraries the targets dlopen: build/targets/NAME.so from tests/targets/lib/NAME.c
TARGET_LIB := $(patsubst tests/targets/lib/%.c,$(B)/targets/%.so,$(wildcard tests/targets/lib/*.c))
TARGET_BIN += $(TARGET_LIB)

.PHONY: all deps demo check check-valgrind unit integration bench bench-deps bench-detail bench-bigheap bench-hookcost bench-compile \
	bench-unwtab bench-drain bench-pause clean install uninstall fuzz fuzz-deps fuzz-build
all: $(B)/ptleak

$(B)/obj/%.o: %.c $(wildcard include/*/*.h) $(wildcard src/*/*.h) $(wildcard arch/$(ARCH)/*.h) \
		$(B)/gen/recblob_offsets.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# The hook blob (src/recorder/hooks/, include/recorder/recblob.h): the hooks compiled
# freestanding, linked flat by blob.ld; mkblob.py refuses any relocation or
# undefined symbol and writes the image as a C array plus the offsets of
# its entry points.
BLOB_CFLAGS := -std=gnu11 $(WARN) -O2 -ffreestanding -fPIC -fno-plt \
	-fvisibility=hidden -fno-stack-protector -fasynchronous-unwind-tables \
	-mgeneral-regs-only -mno-red-zone -nostdlib -fno-builtin -fno-tree-loop-distribute-patterns
BLOB_SRC := src/recorder/hooks/hooks.c src/recorder/hooks/walk.c $(wildcard arch/$(ARCH)/recorder/*.S)
BLOB_OBJ := $(patsubst %,$(B)/recorder/%.o,$(BLOB_SRC))
BLOB_DEPS := $(addprefix include/recorder/,ring.h rechook.h unwtab.h unwtab_walk.h) arch/$(ARCH)/ring_arch.h \
	src/recorder/hooks/hooks_priv.h \
	arch/$(ARCH)/rec_arch.h

# the blob is the target's code, not ptleak's: always the host's gcc
# (make fuzz builds ptleak with clang)
BLOB_CC ?= $(CC)
$(B)/recorder/%.o: % $(BLOB_DEPS) Makefile
	@mkdir -p $(dir $@)
	$(BLOB_CC) -Iinclude -Iarch/$(ARCH) $(BLOB_CFLAGS) -c -o $@ $<

$(B)/recorder/blob.elf: $(BLOB_OBJ) src/recorder/hooks/blob.ld
	$(BLOB_CC) -nostdlib -shared -Wl,-T,src/recorder/hooks/blob.ld -Wl,--build-id=none \
		-Wl,-z,norelro -Wl,--no-warn-rwx-segments -o $@ $(BLOB_OBJ)

# one run writes both (a grouped target: the objects that include the
# offsets are rebuilt by the same make that changed them)
$(B)/gen/recblob.c $(B)/gen/recblob_offsets.h &: $(B)/recorder/blob.elf src/recorder/hooks/mkblob.py
	@mkdir -p $(dir $@)
	python3 src/recorder/hooks/mkblob.py $< $(B)/gen/recblob.c $(B)/gen/recblob_offsets.h

# The blob's own unwind table (its CFI compiled by the host's unwtab.c):
# a walk from a signal handler that interrupted a hook goes on through it.
$(B)/recorder/mkunwtab: src/recorder/hooks/mkunwtab.c $(B)/obj/src/recorder/unwtab.o \
		$(B)/obj/src/recorder/unwtab_cache.o \
		$(B)/obj/src/recorder/unwtab_fast.o $(B)/obj/src/recorder/unwtab_rules.o \
		$(B)/obj/src/recorder/cfi.o \
		$(B)/obj/arch/$(ARCH)/unwtab_rule.o $(B)/obj/arch/$(ARCH)/cfi_abi.o \
		$(B)/obj/src/base/util.o $(B)/obj/src/base/diskcache.o
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -o $@ $^ $$(pkg-config --libs libdw libelf)
$(B)/gen/recblob_unwtab.c: $(B)/recorder/blob.elf $(B)/recorder/mkunwtab
	@mkdir -p $(dir $@)
	$(B)/recorder/mkunwtab $< $@

# The HTML report's style and script (src/output/html/), inlined in every
# --html file: C strings.
$(B)/gen/html_assets.c: src/output/html/report.css src/output/html/report.js src/output/html/embed.awk
	@mkdir -p $(dir $@)
	{ awk -v name=html_css -f src/output/html/embed.awk src/output/html/report.css && \
	  awk -v name=html_js -f src/output/html/embed.awk src/output/html/report.js; } > $@.tmp
	mv $@.tmp $@

$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(B)/libptleak.a: $(OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/ptleak: $(MAIN_OBJ) $(B)/libptleak.a
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(BIN_LIBS)

$(B)/tests/%: tests/unit/%.c $(B)/libptleak.a $(wildcard tests/unit/*.h) \
		$(B)/gen/recblob_offsets.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(B)/libptleak.a \
		$(LIBS) $$(pkg-config --libs cmocka)

# The unwind-table test walks its own stack: frames without a frame pointer.
$(B)/tests/test_unwtab: ALL_CFLAGS += -fomit-frame-pointer
# ... and, next to it, objects with odd CFI: only .debug_frame, rows
# libdw refuses.
$(B)/tests/test_unwtab: $(B)/tests/libuwt_debug_frame.so \
	$(B)/tests/libuwt_cfi_odd.so
# test_cfi compiles every target and those objects both ways, and one
# with every call frame instruction, with and without .eh_frame_hdr.
$(B)/tests/test_cfi: | $(B)/tests/libuwt_debug_frame.so \
	$(B)/tests/libuwt_cfi_odd.so $(B)/tests/libuwt_cfi_ops.so \
	$(B)/tests/libuwt_cfi_ops_nohdr.so $(TARGET_BIN)
$(B)/tests/libuwt_%_nohdr.so: tests/unit/uwt_%.S
	@mkdir -p $(dir $@)
	@# ld says "error in .eh_frame": the opcode it does not know
	$(CC) -fPIC -shared -nostdlib -DUWT_NOHDR -Wl,--no-eh-frame-hdr -o $@ $<
$(B)/tests/libuwt_%.so: tests/unit/uwt_%.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -fPIC -shared -nostdlib -fno-asynchronous-unwind-tables \
		-o $@ $<
$(B)/tests/libuwt_%.so: tests/unit/uwt_%.S
	@mkdir -p $(dir $@)
	$(CC) -fPIC -shared -nostdlib -o $@ $<

# test_addrsym: a symbol table with every case of libdw's choice, and
# its stripped copy (.dynsym alone).
$(B)/tests/test_addrsym: | $(B)/tests/libaddrsym_cases.so \
	$(B)/tests/libaddrsym_cases_stripped.so
$(B)/tests/libaddrsym_cases.so: tests/unit/addrsym_cases.S
	@mkdir -p $(dir $@)
	$(CC) -fPIC -shared -nostdlib -o $@ $<
$(B)/tests/libaddrsym_cases_stripped.so: $(B)/tests/libaddrsym_cases.so
	objcopy --strip-all $< $@

# The recorder's stub test patches its own allocator: compiled -O2 apart
# (real prologues; t_malloc/t_free called, not inlined or split), every
# function on a page of its own so that making it writable never touches
# the test's code.
$(B)/tests/stub_talloc.o: tests/unit/stub_talloc.c tests/unit/stub_talloc.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(WARN) -O2 -g -falign-functions=4096 \
		-fno-partial-inlining -c -o $@ $<
# test_hooks_stack* too, their call chains without a frame pointer.
# hook_cost (bench/hook_cost, not a test) too.
HOOK_TESTS := $(B)/tests/test_hooks_stub $(B)/tests/test_hooks_stack \
	$(B)/tests/test_hooks_stack_mt $(B)/tests/hook_cost
$(B)/tests/test_hooks_stack $(B)/tests/test_hooks_stack_mt $(B)/tests/hook_cost: \
	ALL_CFLAGS += -fomit-frame-pointer
$(HOOK_TESTS): $(B)/tests/%: tests/unit/%.c \
		$(B)/tests/stub_talloc.o \
		$(B)/libptleak.a $(wildcard tests/unit/*.h) $(B)/gen/recblob_offsets.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -o $@ $< \
		$(B)/tests/stub_talloc.o $(B)/libptleak.a $(LIBS) \
		$$(pkg-config --libs cmocka) -pthread

# The fuzzers' harnesses (tests/fuzz/fuzz_NAME.c), built without libFuzzer
# into the test that replays their regression corpus in make check.
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRC))
$(B)/tests/test_fuzz_corpus: tests/unit/test_fuzz_corpus.c $(FUZZ_SRC) tests/fuzz/fuzz.h \
		$(B)/libptleak.a $(B)/gen/recblob_offsets.h
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/fuzz -o $@ $< $(FUZZ_SRC) \
		$(B)/libptleak.a $(LIBS) $$(pkg-config --libs cmocka)

# Targets whose name starts with static_ are linked statically;
# static_stripped_ ones are stripped of every symbol too.
$(B)/targets/static_stripped_%: tests/targets/static_stripped_%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -static -s -o $@ $<
$(B)/targets/static_%: tests/targets/static_%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -static -o $@ $<
$(B)/targets/%.so: tests/targets/lib/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -shared -fPIC -o $@ $<
$(B)/targets/%: tests/targets/%.c
	@mkdir -p $(dir $@)
	$(CC) $(TARGET_CFLAGS) -o $@ $<
$(B)/targets/%: tests/targets/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(TARGET_CFLAGS) -o $@ $<

deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEPS_DEB)
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$(BROWSER_DEB)

demo: $(B)/ptleak $(B)/targets/demo
	$(B)/ptleak $(B)/targets/demo

unit: $(UNIT_BIN)
	@tests/run-unit $(UNIT_BIN)

# the unwind tables' disk cache of the tests (and benchmarks): the build's
export PTLEAK_CACHE_DIR ?= $(abspath $(B))/cache

check: $(B)/ptleak $(UNIT_BIN) $(TARGET_BIN) bench-compile
	@tests/run-all $(B) $(UNIT_BIN)

# the benchmarks' programs compiled, not run (make check)
bench-compile: $(B)/libptleak.a
	@$(MAKE) -s -C bench compile B=$(BENCH_B)

# ptleak's in-use totals against valgrind's, live, on every dynamic target
check-valgrind: $(B)/ptleak $(TARGET_BIN)
	@python3 tests/integration/run.py $(B) --valgrind

# B as bench/ sees it: relative (no space, whatever the checkout's path)
BENCH_B = $(call shq,$(if $(filter /%,$(B)),$(B),../$(B)))
bench: $(B)/ptleak $(B)/targets/r_snapwatch
	@$(MAKE) -s -C bench B=$(BENCH_B)

# the pauses alone (bench/pause; PAUSE_ARGS="--sizes 100000,1000000")
bench-pause: $(B)/ptleak $(B)/targets/r_snapwatch
	@$(MAKE) -s -C bench pause B=$(BENCH_B)

bench-detail: $(B)/ptleak
	@$(MAKE) -s -C bench detail B=$(BENCH_B)

# issue 26's section of make bench alone (bench/big_heap.py)
bench-bigheap: $(B)/ptleak $(B)/libptleak.a
	@$(MAKE) -s -C bench bigheap B=$(BENCH_B)

# what a patched call costs in instructions and stores, counted by
# valgrind's lackey (bench/hook_cost; no time, the same on any machine)
bench-hookcost: $(B)/tests/hook_cost
	python3 bench/hook_cost $(B)

# what the benchmarks run besides ptleak (not part of deps: check needs none)
BENCH_DEB := sqlite3 heaptrack valgrind perl python3 gawk
bench-deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BENCH_DEB)

# unwind tables (docs/recorder.md piece 6): compile ms, ns per walk
bench-unwtab: $(B)/libptleak.a
	@$(MAKE) -s -C bench unwtab B=$(BENCH_B)

# the recorder's consumer alone on alloc_loop's records (bench/drain_bench)
bench-drain: $(B)/libptleak.a
	@$(MAKE) -s -C bench drain B=$(BENCH_B)

# libFuzzer (clang) under ASan and UBSan: the library built again into
# $(FUZZ_B)/lib with clang and the sanitizers (the hook blob by gcc: it is
# the target's code), one program per harness.  `make fuzz` runs each
# for FUZZ_TIME seconds, one after the other, niced, on a corpus that
# grows in $(FUZZ_B)/corpus/NAME (seeded from tests/fuzz/corpus/NAME and,
# for the file formats, from the objects of this machine); what crashes
# lands in $(FUZZ_B)/crash-NAME-*: copy it into tests/fuzz/corpus/NAME
# once fixed.
FUZZ_B := $(B)/fuzz
FUZZ_TIME ?= 60
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_DEB := clang libclang-rt-14-dev
fuzz-deps:
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(FUZZ_DEB)

fuzz-build:
	ASAN_OPTIONS=detect_leaks=0 $(MAKE) B=$(FUZZ_B)/lib CC=$(FUZZ_CC) BLOB_CC=$(CC) \
		CFLAGS="-O1 -g $(FUZZ_SAN) -fsanitize=fuzzer-no-link" WARN=-w \
		$(FUZZ_B)/lib/libptleak.a
	for n in $(FUZZ_NAMES); do \
		$(FUZZ_CC) $(CPPFLAGS) -I$(FUZZ_B)/lib/gen -Itests/fuzz -DFUZZ_LIBFUZZER -std=gnu11 \
			-O1 -g $(FUZZ_SAN) -fsanitize=fuzzer $(PKG_CFLAGS) \
			-o $(FUZZ_B)/fuzz_$$n tests/fuzz/fuzz_$$n.c $(FUZZ_B)/lib/libptleak.a \
			$(LIBS) || exit 1; \
	done

FUZZ_SEED_ELF := $(B)/targets/h_basic $(B)/targets/h_cxx $(B)/targets/f_basic \
	$(B)/tests/libuwt_cfi_ops.so $(B)/tests/libuwt_debug_frame.so
fuzz: fuzz-build $(FUZZ_SEED_ELF)
	@for n in $(FUZZ_NAMES); do \
		mkdir -p $(FUZZ_B)/corpus/$$n $(FUZZ_B)/seed/$$n; \
		case $$n in unwtab|dwline|elfsyms) cp $(FUZZ_SEED_ELF) $(FUZZ_B)/seed/$$n/;; esac; \
		case $$n in ring) len=8192;; cbpf) len=32832;; fastdec) len=16;; \
			cfi) len=4096;; supp) len=65536;; *) len=131072;; esac; \
		echo "== fuzz_$$n, $(FUZZ_TIME) s"; \
		nice -n 10 $(FUZZ_B)/fuzz_$$n -max_total_time=$(FUZZ_TIME) -timeout=10 \
			-rss_limit_mb=2048 -max_len=$$len -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_B)/crash-$$n- \
			$(FUZZ_B)/corpus/$$n tests/fuzz/corpus/$$n $(FUZZ_B)/seed/$$n \
			2>&1 | grep -E "^(INFO: Seed|#[0-9]+ *DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)" ; \
	done

install: $(B)/ptleak
	install -d $(call shq,$(DESTDIR)$(BINDIR)) $(call shq,$(DESTDIR)$(MANDIR)/man1)
	install -m 755 $(call shq,$(B)/ptleak) $(call shq,$(DESTDIR)$(BINDIR)/ptleak)
	install -m 644 docs/ptleak.1 $(call shq,$(DESTDIR)$(MANDIR)/man1/ptleak.1)

uninstall:
	rm -f $(call shq,$(DESTDIR)$(BINDIR)/ptleak) $(call shq,$(DESTDIR)$(MANDIR)/man1/ptleak.1)

clean:
	rm -rf $(B)
