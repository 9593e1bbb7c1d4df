# corscope: build, test and install.
#
#   make                 build build/libcorscope.so and build/corscope
#   make demo            install what is missing, build, profile the demo app
#   make test            every test: unit (plain, ASan+UBSan, TSan for a few), fuzz corpus replay,
#                        end to end (with the agent under ASan), stress
#   make unit | replay | e2e | stress    one part of it
#   make stress-known    reproduces the runtime faults the stress suite leaves out (tests/stress/known)
#   make fuzz            libFuzzer over every parser of outside bytes (tests/fuzz)
#   make reliability     regenerates docs/reliability.md
#   make events-doc      regenerates the event tables of docs/events.md (src/format/schema.h)
#   make bench           the benchmarks of docs/performance.md
#   make arm64           cross-builds build/aarch64/libcorscope.so and build/aarch64/corscope
#   make test-arm64      the arm64 tests under qemu-user (a subset runs in make test)
#   make install PREFIX=/usr/local [DESTDIR=...]
#   make nupkg           build/corscope.VERSION.nupkg, the .NET tool (linux-x64,
#                        and linux-arm64 when build/aarch64/ holds a build)
#   make dist            build/corscope-VERSION-linux-ARCH.tar.gz (bin/, lib/)
#   make e2e-runtimes    the representative e2e tests (RUNTIME_TESTS) on .NET 8 and 9
#   make test-runtimes   every e2e test on .NET 8 and 9
#
# One object tree per variant (build/ and build/asan/); the agent and the CLI
# link the same objects.  Everything is compiled -fPIC and
# -fvisibility=hidden; the agent's only export is DllGetClassObject
# (src/agent/exports.map).

VERSION := 0.1.0
PREFIX ?= /usr/local
DESTDIR ?=
CC ?= cc
HOSTCC ?= cc
BUILD ?= build
SAN ?=

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wformat=2 -Wvla
CFLAGS ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE -fPIC -fvisibility=hidden -pthread \
	-fno-omit-frame-pointer -Isrc -DCORSCOPE_VERSION='"$(VERSION)"' \
	$(WARN) $(CFLAGS) $(ZLIB_CFLAGS) $(SAN)
LDFLAGS ?=
ALL_LDFLAGS := -pthread $(SAN) $(LDFLAGS)
LIBS := -lm
ZLIB ?= -lz
ZLIB_CFLAGS ?=

# The machine the compiler builds for (x86_64, aarch64): files named
# *_x64.c/.S or *_arm64.c/.S are that machine's only (the walker's step,
# the tracing hooks), except the arm64 frame decoder, pure code whose unit
# tests run on every machine.
ARCH := $(firstword $(subst -, ,$(shell $(CC) -dumpmachine)))
ifeq ($(ARCH),aarch64)
OTHER_ARCH := x64
PORTABLE_SRC :=
else
OTHER_ARCH := arm64
PORTABLE_SRC := src/agent/signal/mshape_arm64.c
endif
for_arch = $(filter-out %_$(OTHER_ARCH).c %_$(OTHER_ARCH).S,$(1))
# the CLI's uploads over https (cli/http.c): OpenSSL, which the .NET runtime
# needs on Linux anyway (docs/push.md says why not libcurl)
TLS_LIBS ?= -lssl -lcrypto

COMMON_SRC := $(wildcard src/common/*.c src/common/pdb/*.c)
CLR_SRC := $(wildcard src/clr/*.c)
AGENT_SRC := $(call for_arch,$(wildcard src/agent/*.c src/agent/signal/*.c src/agent/sources/*.c \
	src/agent/trace/*.c src/agent/il/*.c src/agent/async/*.c)) src/format/writer.c src/format/schema.c \
	src/format/covfile.c src/format/covplan.c
# the Enter/Leave hooks of tracing mode: assembly, for the JIT's calling convention
AGENT_ASM := $(call for_arch,$(wildcard src/agent/trace/*.S))
# the CLI writes recordings too: a window of a pushed stream (cli/pstream.c)
CLI_SRC := $(wildcard src/cli/*.c) src/format/recording.c src/format/chunk.c src/format/schema.c src/format/covfile.c \
	src/format/covplan.c $(wildcard src/agent/il/*.c) src/format/writer.c
UNIT_SRC := $(filter-out tests/unit/unloadable.c,$(wildcard tests/unit/*.c))
UNIT_ASM := $(call for_arch,$(wildcard tests/unit/*.S))

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

# `make V=1` shows whole command lines
ifeq ($(V),1)
Q :=
say = @true
else
Q := @
say = @printf '  %-6s %s\n'
endif

asm_obj = $(patsubst %.S,$(BUILD)/obj/%.o,$(1))
AGENT_OBJ := $(call obj,$(AGENT_SRC) $(COMMON_SRC) $(CLR_SRC)) $(call asm_obj,$(AGENT_ASM))
# resources built into the CLI (tools/embed.c turns a file into a C array)
GEN_SRC := $(BUILD)/gen/flamegraph_html.c
CLI_OBJ := $(call obj,$(CLI_SRC) $(COMMON_SRC)) $(BUILD)/gen/flamegraph_html.o
# unit tests link everything except the two programs' entry points
UNIT_OBJ := $(call obj,$(UNIT_SRC) $(COMMON_SRC) $(CLR_SRC) $(wildcard src/format/*.c) \
	$(filter-out src/cli/main.c,$(wildcard src/cli/*.c)) \
	$(filter-out src/format/%,$(AGENT_SRC)) $(PORTABLE_SRC)) \
	$(call asm_obj,$(AGENT_ASM) $(UNIT_ASM)) $(BUILD)/gen/flamegraph_html.o

AGENT := $(BUILD)/libcorscope.so
CLI := $(BUILD)/corscope
UNIT := $(BUILD)/unit-tests

.PHONY: all clean tlspad test unit unit-plain unit-asan unit-tsan e2e apps demo deps install uninstall bench \
	replay fuzz asan-programs stress stress-known reliability nupkg dist runtimes e2e-runtimes test-runtimes \
	arm64 unit-arm64 apps-arm64 test-arm64 test-arm64-quick events-doc

all: $(AGENT) $(CLI)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(say) AS $<
	$(Q)$(CC) -Isrc -MMD -MP -c $< -o $@

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(say) CC $<
	$(Q)$(HOSTCC) -O2 -Wall -Wextra -Werror -o $@ $<

$(BUILD)/gen/flamegraph_html.c: src/cli/flamegraph.html $(BUILD)/tools/embed
	@mkdir -p $(dir $@)
	$(say) EMBED $<
	$(Q)$(BUILD)/tools/embed flamegraph_html $< $@

$(BUILD)/gen/flamegraph_html.o: $(BUILD)/gen/flamegraph_html.c
	$(say) CC $<
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# the synthetic recording generator of bench/report_speed.sh
$(BUILD)/synth: $(call obj,bench/synth.c src/format/writer.c $(COMMON_SRC))
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# a command's wall time and CPU time in microseconds (wait4's rusage), for
# bench/startup.sh, bench/build.sh and bench/compiler.sh
$(BUILD)/rusage: $(call obj,bench/rusage.c)
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^

# the code map at the scale of a big application, for bench/codemap.sh
$(BUILD)/codemap-bench: $(call obj,bench/codemap.c) $(AGENT_OBJ)
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# corscope's readers and IL engine over real assemblies (tools/ilcorpus.c):
# the rewrite corpus of tests/unit, the fuzzers' seeds, and a look at a dll
$(BUILD)/ilcorpus: $(call obj,tools/ilcorpus.c $(COMMON_SRC) $(wildcard src/agent/il/*.c) \
		src/format/covplan.c)
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# the platform's cost of a CPU-clock signal, for bench/sigcost.sh
$(BUILD)/sigcost: $(call obj,bench/sigcost.c)
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# what a watch probe costs the calling thread, alone (bench/watch.sh):
# the probes and the event queue, no runtime
$(BUILD)/watch_probe: $(call obj,bench/watch_probe.c) \
		$(filter-out $(BUILD)/obj/src/agent/entry.o,$(AGENT_OBJ))
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# what a library's full symbol table costs the agent's thread (load, scan,
# sort, find), for docs/performance.md
$(BUILD)/elfsym_cost: $(call obj,bench/elfsym_cost.c) $(BUILD)/obj/src/agent/elfsym.o \
		$(BUILD)/obj/src/common/mem.o
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# what reading /proc/PID/maps costs against asking for one mapping, for
# docs/performance.md (bench/maps.sh)
$(BUILD)/maps_cost: $(call obj,bench/maps_cost.c) $(BUILD)/obj/src/common/procmaps.o \
		$(BUILD)/obj/src/common/mem.o
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# what tracing mode's hooks cost without the runtime, for bench/trace.sh (the
# agent's objects but its entry point)
$(BUILD)/trace_hooks: $(call obj,bench/trace_hooks.c) $(call asm_obj,bench/trace_hooks_loop.S) \
		$(filter-out $(BUILD)/obj/src/agent/entry.o,$(AGENT_OBJ))
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# the shadow stacks' and hooks' suite (tests/unit/test_shadow.c) and the
# pointer-authentication stripping's (test_pac.c), with nothing but the
# agent's objects: what make unit-arm64 builds for arm64, where the whole
# unit suite (the x86-64 frame decoders' tests) does not build
$(BUILD)/obj/tests/unit/main_shadow.o: tests/unit/main.c
	@mkdir -p $(dir $@)
	$(say) CC $< '(shadow)'
	$(Q)$(CC) $(ALL_CFLAGS) '-DSUITES(X)=X(shadow) X(pac)' -c $< -o $@

$(BUILD)/shadow-tests: $(BUILD)/obj/tests/unit/main_shadow.o \
		$(call obj,tests/unit/test_shadow.c tests/unit/test_pac.c) \
		$(call asm_obj,$(UNIT_ASM)) $(filter-out $(BUILD)/obj/src/agent/entry.o,$(AGENT_OBJ))
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# The agent's thread-locals are initial-exec (signal-safe: no
# __tls_get_addr), so the runtime's dlopen must fit its whole PT_TLS block
# into the static TLS surplus glibc reserved at start, or the agent does not
# load ("cannot allocate memory in static TLS block").  glibc's default
# surplus is 1664 bytes (elf/dl-tls.c, 2.32 and later: (rtld.nns - 1) * 192
# for libc's IE TLS in each other namespace + rtld.nns * 144 for other
# libraries' IE TLS + rtld.optional_static_tls 512, with glibc.rtld.nns=4).
# The last 512 are handed out first come first served to dynamic TLS the
# loader places there for speed (TLSDESC, arm64's default: the runtime's own
# libhostfxr, libhostpolicy, libcoreclr and libclrjit on arm64), and any
# other initial-exec library loaded before the agent takes its share.
# Measured with .NET 10 and glibc 2.36, the agent padded by a thread-local
# array (notes/tls.md): x86-64 loads at 1664 bytes and fails at 1680 (the
# runtime takes none of the surplus); arm64 under qemu loads at 1608 and
# fails at 1624 (the runtime took about 50).  The budget leaves the whole
# optional part to others: 1664 - 512 = 1152.  Per-thread state beyond a
# word or two goes into struct agent_thread (src/agent/agent_thread.h).
AGENT_TLS_BUDGET ?= 1152

# the agent's link (also of the padded copy below)
AGENT_LINK = $(CC) -shared $(ALL_LDFLAGS) -Wl,--version-script=src/agent/exports.map -Wl,-z,defs -Wl,-z,now \
	-Wl,-z,relro -Wl,-z,nodelete

$(AGENT): $(AGENT_OBJ) src/agent/exports.map tools/static_tls.sh
	$(say) LINK $@
	$(Q)$(AGENT_LINK) -o $@ $(AGENT_OBJ) $(LIBS)
	$(Q)tools/static_tls.sh $@ $(AGENT_TLS_BUDGET) || { rm -f $@; exit 1; }

# The agent with 1 KiB more of initial-exec thread-locals, and a CLI beside
# it (the CLI loads the agent beside itself): t_agent_load makes glibc's
# surplus small and checks that a user is told why such an agent did not
# load.  The agent's own thread-locals (64 bytes) fit any surplus glibc's
# tunables allow (144 bytes at the least), so the test needs the padding.
TLSPAD := $(BUILD)/tlspad
$(TLSPAD)/pad.o: tests/e2e/tlspad.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(TLSPAD)/libcorscope.so: $(AGENT_OBJ) $(TLSPAD)/pad.o src/agent/exports.map
	$(say) LINK $@
	$(Q)$(AGENT_LINK) -o $@ $(AGENT_OBJ) $(TLSPAD)/pad.o $(LIBS)
$(TLSPAD)/corscope: $(CLI)
	@mkdir -p $(dir $@)
	$(Q)cp $< $@
tlspad: $(TLSPAD)/libcorscope.so $(TLSPAD)/corscope

$(CLI): $(CLI_OBJ)
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(CLI_OBJ) $(LIBS) $(ZLIB) $(TLS_LIBS)

$(UNIT): $(UNIT_OBJ) $(BUILD)/unloadable.so
	$(say) LINK $@
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $(UNIT_OBJ) $(LIBS) -lz $(TLS_LIBS)

# a library the unit tests load and unload, beside them (stripped, no sanitizer)
$(BUILD)/unloadable.so: tests/unit/unloadable.c
	$(say) LINK $@
	$(Q)$(CC) -shared -fPIC -O1 -s -o $@ $<

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# ---- tests ---------------------------------------------------------------

unit: unit-plain unit-asan unit-tsan

unit-plain: $(UNIT)
	$(UNIT)

unit-asan:
	$(MAKE) --no-print-directory BUILD=build/asan SAN='$(ASAN_FLAGS)' build/asan/unit-tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 build/asan/unit-tests

# the unit tests named tsan_ (lock-free publication between threads) under
# the thread sanitizer: a race no plain build shows fails them
unit-tsan:
	$(MAKE) --no-print-directory BUILD=build/tsan SAN='$(TSAN_FLAGS)' build/tsan/unit-tests
	TSAN_OPTIONS=halt_on_error=1 build/tsan/unit-tests tsan_

apps:
	tests/apps/build.sh

# rewrites the event tables of docs/events.md from src/format/schema.h (the
# unit test schema_docs fails while they differ)
events-doc: $(UNIT)
	CORSCOPE_WRITE_EVENTS_DOC=1 $(UNIT) schema_docs

e2e: all tlspad apps asan-programs runtimes nupkg dist
	tests/e2e/run.sh

# The runtimes besides the SDK's (.NET 10) that the tests run on, and the
# tests that make test runs on each: one per capability.
OLDER_RUNTIMES := 8 9
RUNTIME_TESTS := cpu_shares wall mixed_stack metadata alloc gc exceptions lifecycle locks jit trace trace_flat attach containers

runtimes:
	tests/apps/runtimes.sh $(OLDER_RUNTIMES)

e2e-runtimes: all apps runtimes
	@tests/e2e/runtime_apps.sh $(RUNTIME_TESTS)
	@failed=; for v in $(OLDER_RUNTIMES); do \
		ATTACH_CYCLES=3 CORSCOPE_TEST_RUNTIME=$$v tests/e2e/run.sh $(RUNTIME_TESTS) || failed="$$failed $$v"; \
	done; [ -z "$$failed" ] || { echo "e2e-runtimes: failed on .NET$$failed"; exit 1; }

test-runtimes: all apps asan-programs nupkg dist
	tests/apps/runtimes.sh --all $(OLDER_RUNTIMES)
	@failed=; for v in $(OLDER_RUNTIMES); do \
		CORSCOPE_TEST_RUNTIME=$$v tests/e2e/run.sh || failed="$$failed $$v"; \
	done; [ -z "$$failed" ] || { echo "test-runtimes: failed on .NET$$failed"; exit 1; }

# arm64 is built first so that the package and tarballs e2e makes (and
# t_install checks) carry both machines, as a release does.
test: deps
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory arm64
	$(MAKE) --no-print-directory unit
	$(MAKE) --no-print-directory replay
	$(MAKE) --no-print-directory e2e
	$(MAKE) --no-print-directory e2e-runtimes
	$(MAKE) --no-print-directory stress
	$(MAKE) --no-print-directory test-arm64-quick

# ---- reliability: fuzz corpus, sanitizers, stress ---------------------------

ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
TSAN_FLAGS := -fsanitize=thread

# The fuzz harnesses: tests/fuzz/fuzz_NAME.c over the sources FUZZ_SRC_NAME,
# its corpus in tests/fuzz/corpus/NAME (seeds from tests/fuzz/seeds.sh and
# every input that once failed).  `make replay` runs each corpus through its
# harness linked with tests/fuzz/replay.c, plain and ASan+UBSan;
# `make fuzz` runs libFuzzer over each harness.
FUZZERS := reader cfi elfsym leaf config il pdb push
FUZZ_SRC_reader := src/format/recording.c src/format/chunk.c src/format/schema.c src/format/writer.c \
	$(filter-out src/cli/main.c,$(wildcard src/cli/*.c)) \
	src/format/covfile.c src/format/covplan.c $(wildcard src/agent/il/*.c) \
	$(COMMON_SRC) $(BUILD)/gen/flamegraph_html.c
FUZZ_SRC_cfi := src/agent/signal/cfi.c src/common/mem.c
FUZZ_SRC_elfsym := src/agent/elfsym.c src/common/mem.c
FUZZ_SRC_leaf := src/agent/signal/mshape.c src/agent/signal/mshape_arm64.c
FUZZ_SRC_config := src/common/config.c src/common/units.c src/common/watch_where.c
FUZZ_SRC_il := $(wildcard src/agent/il/*.c) src/common/mem.c
FUZZ_SRC_pdb := $(wildcard src/common/pdb/*.c) src/common/inflate.c src/common/mem.c
FUZZ_SRC_push := $(FUZZ_SRC_reader)
FUZZ_LIBS := -lm -lz -lssl -lcrypto

# $(BUILD)/replay-NAME: the corpus driver over harness NAME
define replay_rule
$$(BUILD)/replay-$(1): $$(call obj,tests/fuzz/replay.c tests/fuzz/fuzz_$(1).c $$(filter-out $$(BUILD)/%,$$(FUZZ_SRC_$(1)))) \
		$$(patsubst %.c,%.o,$$(filter $$(BUILD)/%,$$(FUZZ_SRC_$(1))))
	$$(say) LINK $$@
	$$(Q)$$(CC) $$(ALL_LDFLAGS) -o $$@ $$^ $$(FUZZ_LIBS)
endef
$(foreach f,$(FUZZERS),$(eval $(call replay_rule,$(f))))

# every corpus through its harness, plain and ASan+UBSan
replay: $(addprefix $(BUILD)/replay-,$(FUZZERS))
	@for f in $(FUZZERS); do $(BUILD)/replay-$$f tests/fuzz/corpus/$$f || exit 1; done
	$(MAKE) --no-print-directory BUILD=build/asan SAN='$(ASAN_FLAGS)' \
		$(addprefix build/asan/replay-,$(FUZZERS))
	@for f in $(FUZZERS); do \
		ASAN_OPTIONS=detect_leaks=1 build/asan/replay-$$f tests/fuzz/corpus/$$f || exit 1; done

# libFuzzer (clang) over each harness of FUZZERS for FUZZ_SECONDS (make fuzz
# FUZZERS=cfi for one): under build/fuzz/NAME, the binary, the inputs it
# found (corpus/, beside tests/fuzz/corpus/NAME, which it reads), whatever
# failed (crash-*, leak-*, timeout-*, oom-*) and its log (last.log).  A
# failing input belongs in tests/fuzz/corpus/NAME once fixed.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang-14
FUZZ_FLAGS ?=
FUZZ_CFLAGS := -g -O1 -std=c11 -D_GNU_SOURCE -Isrc -DCORSCOPE_VERSION='"$(VERSION)"' \
	-fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
.SECONDEXPANSION:
build/fuzz/%/fuzzer: tests/fuzz/fuzz_%.c $$(FUZZ_SRC_$$*) $$(shell find src -name '*.h') \
		$(BUILD)/gen/flamegraph_html.c
	@mkdir -p $(dir $@)corpus
	$(say) FUZZCC $@
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRC_$*) $(FUZZ_LIBS)

# the sources under harness NAME, for tests/fuzz/report.sh
fuzz-src-%:
	@echo $(FUZZ_SRC_$*)

fuzz: $(foreach f,$(FUZZERS),build/fuzz/$(f)/fuzzer)
	@failed=; for f in $(FUZZERS); do \
		echo "fuzz $$f: $(FUZZ_SECONDS) s"; \
		nice -n 10 build/fuzz/$$f/fuzzer -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-artifact_prefix=build/fuzz/$$f/ -print_final_stats=1 $(FUZZ_FLAGS) \
			build/fuzz/$$f/corpus tests/fuzz/corpus/$$f > build/fuzz/$$f/last.log 2>&1; \
		echo $$? > build/fuzz/$$f/last.rc; \
		grep -h '^#[0-9]*.*DONE\|stat::number_of_executed_units' build/fuzz/$$f/last.log | tail -2; \
		[ "$$(cat build/fuzz/$$f/last.rc)" = 0 ] || { failed="$$failed $$f"; \
			echo "fuzz $$f: FAILED, see build/fuzz/$$f/last.log"; }; \
	done; [ -z "$$failed" ] || { echo "fuzz: failed:$$failed"; exit 1; }

# the agent and the CLI built with ASan+UBSan, for tests/e2e/t_sanitizers.sh
asan-programs:
	$(MAKE) --no-print-directory BUILD=build/asan SAN='$(ASAN_FLAGS)' build/asan/libcorscope.so build/asan/corscope

stress: all apps
	tests/stress/run.sh
	tests/stress/attach.sh

# the runtime faults the stress suite leaves out (tests/stress/known), reproduced
stress-known: all apps
	tests/stress/known.sh

# docs/reliability.md from fresh runs of the stress suite, the fuzzer and the
# damage tests
reliability: deps all apps asan-programs replay $(UNIT) unit-tsan
	tests/stress/report.sh > docs/reliability.md

# ---- the main job --------------------------------------------------------

deps:
	@scripts/install-deps.sh

demo: deps
	$(MAKE) --no-print-directory all apps
	scripts/demo.sh

bench: all apps $(BUILD)/synth $(BUILD)/sigcost $(BUILD)/trace_hooks $(BUILD)/watch_probe $(BUILD)/elfsym_cost \
	$(BUILD)/maps_cost
	bench/cover.sh
	bench/watch.sh
	bench/watch_sessions.sh
	bench/overhead.sh
	bench/sigcost.sh
	bench/wall.sh
	bench/accuracy.sh
	bench/aliasing.sh
	bench/walks.sh
	bench/web.sh
	bench/report_speed.sh
	bench/attach.sh
	bench/events.sh
	bench/trace.sh
	bench/naming.sh
	bench/memory.sh
	bench/async.sh
	bench/startup.sh
	bench/idle.sh
	bench/build.sh
	bench/compiler.sh
	bench/handler.sh
	bench/mcjit.sh
	bench/codemap.sh
	bench/push.sh
	bench/tool.sh

# ---- arm64 ---------------------------------------------------------------

# The agent and the CLI for linux-arm64, cross-built under build/aarch64
# (scripts/install-deps.sh installs the cross compiler, and zlib and
# OpenSSL for arm64 into CROSS_ZLIB; the CLI links them statically).  The tests run self-contained
# arm64 test programs under qemu-user (tests/arm64/run.sh): a representative
# set in make test, every one in make test-arm64.
CROSS ?= aarch64-linux-gnu-
CROSS_ZLIB ?= /usr/local/aarch64-linux-gnu

ARM64_MAKE = $(MAKE) --no-print-directory BUILD=build/aarch64 CC=$(CROSS)gcc \
		ZLIB_CFLAGS=-I$(CROSS_ZLIB)/include ZLIB=$(CROSS_ZLIB)/lib/libz.a LDFLAGS=-L$(CROSS_ZLIB)/lib \
		TLS_LIBS="$(CROSS_ZLIB)/lib/libssl.a $(CROSS_ZLIB)/lib/libcrypto.a -ldl"

arm64:
	+$(ARM64_MAKE) build/aarch64/libcorscope.so build/aarch64/corscope build/aarch64/tlspad/libcorscope.so \
		build/aarch64/tlspad/corscope

# the tracing hooks' unit tests for arm64, run under qemu-user by
# tests/arm64/t_trace.sh
unit-arm64:
	+$(ARM64_MAKE) build/aarch64/shadow-tests

apps-arm64:
	tests/arm64/apps.sh

test-arm64-quick: all apps arm64 unit-arm64 apps-arm64 $(UNIT)
	tests/arm64/run.sh quick

test-arm64: all apps arm64 unit-arm64 apps-arm64 $(UNIT)
	tests/arm64/run.sh

# ---- install -------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/corscope
	install -m 0755 $(CLI) $(DESTDIR)$(PREFIX)/bin/corscope
	install -m 0644 $(AGENT) $(DESTDIR)$(PREFIX)/lib/corscope/libcorscope.so

nupkg: all
	scripts/package.sh nupkg $(VERSION)

dist: all
	scripts/package.sh dist $(VERSION)

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/corscope $(DESTDIR)$(PREFIX)/lib/corscope/libcorscope.so
	-rmdir $(DESTDIR)$(PREFIX)/lib/corscope

clean:
	rm -rf build
