# vigil: one Makefile, every rule in one place. Parts live in their own folders:
#   bpf/ (kernel side), agent/ (vigild), collector/, cli/ (vigil), lib/ (shared
#   user-space code), include/vigil/ (headers shared by BPF and user space).
PREFIX   ?= /usr/local
DESTDIR  ?=
BUILD    ?= build
SAN      ?=

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Wno-missing-field-initializers -std=gnu11 -D_GNU_SOURCE \
            -Iinclude -Ilib -I$(BUILD)
# Each object's dependencies as the compiler saw them (build/**/*.d).
DEPFLAGS  = -MMD -MP
LDLIBS   += -lbpf -lelf -lz -luring -lyaml -lmicrohttpd -lpthread
ifeq ($(SAN),1)
CFLAGS   += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS  += -fsanitize=address,undefined
endif
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) -Wall -Wno-unused-function \
              -Iinclude -Ibpf -I$(BUILD)
# Warnings are errors where we control the compiler: under `make test` and
# `make test-san` (and so CI, .ci/run) unless WERROR=0 is given. Any other
# build keeps them warnings, so a distribution or a newer compiler builds.
WERROR ?= $(if $(filter test test-san,$(MAKECMDGOALS)),1,0)
ifeq ($(WERROR),1)
CFLAGS     += -Werror
BPF_CFLAGS += -Werror
endif

# One BPF object per part; each becomes a skeleton the agent embeds.
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(BUILD)/%.bpf.o,$(wildcard bpf/*.bpf.c))
SKELS     := $(patsubst $(BUILD)/%.bpf.o,$(BUILD)/%.skel.h,$(BPF_OBJS))
LIB_SRCS  := $(wildcard lib/*.c)
LIB_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS))
# agent/ holds one folder per capability and vigild.c, the composition
# root, on top (docs/architecture.md). The folders form one chain, and a
# file includes an agent header by its folder ("core/pump.h"):
#   core <- observe, sinks, stream, enforce <- control <- vigild.c
# Each folder compiles against an include root that holds only itself and
# the folders below it, so an include the wrong way does not build (and
# tests/agent_layers.t checks every include the compiler saw).
AGENT_BELOW_core    :=
AGENT_BELOW_observe := core
AGENT_BELOW_sinks   := core
AGENT_BELOW_stream  := core
AGENT_BELOW_enforce := core
AGENT_BELOW_control := core observe sinks stream enforce
AGENT_BELOW_vigild  := core observe sinks stream enforce control
AGENT_LAYERS := core observe sinks stream enforce control
AGENT_OBJS:= $(patsubst %.c,$(BUILD)/%.o,$(wildcard agent/*/*.c agent/*.c))
# The root of folder F: symbolic links to the folders F may include.
agent_root = $(BUILD)/agent-roots/$(1)
COLL_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard collector/*.c))
CLI_OBJS  := $(patsubst %.c,$(BUILD)/%.o,$(wildcard cli/*.c))
BENCH_SRCS:= $(wildcard bench/*.c)
BENCH_BINS:= $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS))
# The benchmarks' own BPF programs, apart from production's.
BENCH_SKELS:= $(patsubst bench/bpf/%.bpf.c,$(BUILD)/bench/bench_%.skel.h,$(wildcard bench/bpf/*.bpf.c))
TEST_SRCS := $(wildcard tests/*.c)
TEST_BINS := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRCS))
TEST_BPF  := $(patsubst tests/bpf/%.bpf.c,$(BUILD)/tests/%.bpf.o,$(wildcard tests/bpf/*.bpf.c))

BINS := $(BUILD)/vigild $(BUILD)/vigil
ifneq ($(COLL_OBJS),)
BINS += $(BUILD)/vigil-collector
endif

.PHONY: all deps run test test-fleet test-san test-kernel test-systemd bench install clean fuzz fuzz-build
# Skeletons and BPF objects are intermediate files to make: keep them, or
# every build regenerates them.
.SECONDARY:
all: deps $(BINS) $(TEST_BINS) $(TEST_BPF) $(BENCH_BINS)

# Installs missing Debian packages (no-op when all are present).
deps:
	@./scripts/install-deps.sh build

# deps is order-only: under -j it must finish (bpftool, headers) before
# anything is built, but it never makes a target out of date.
# vmlinux.h follows the running kernel: a stamp named after its BTF's hash,
# so another kernel's BTF makes it again, and the same one never does.
BTF_ID := $(shell sha1sum /sys/kernel/btf/vmlinux 2>/dev/null | cut -c1-16)
$(BUILD)/btf-$(BTF_ID).stamp:
	@mkdir -p $(@D)
	rm -f $(BUILD)/btf-*.stamp && touch $@
$(BUILD)/vmlinux.h: $(BUILD)/btf-$(BTF_ID).stamp | deps
	@mkdir -p $(@D)
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

$(BUILD)/%.bpf.o: bpf/%.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/%.skel.h: $(BUILD)/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@
$(patsubst $(BUILD)/bench/bench_%.skel.h,$(BUILD)/bench/%.bpf.o,$(BENCH_SKELS)): $(BUILD)/bench/%.bpf.o: bench/bpf/%.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(TEST_BPF): $(BUILD)/tests/%.bpf.o: tests/bpf/%.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) $(DEPFLAGS) -c $< -o $@
$(BENCH_SKELS): $(BUILD)/bench/bench_%.skel.h: $(BUILD)/bench/%.bpf.o
	$(BPFTOOL) gen skeleton $< name bench_$*_bpf > $@.tmp && mv $@.tmp $@

# Skeletons are made before any object (order-only); after that an object
# depends on the headers and skeletons it includes, from its .d file.
$(BUILD)/%.o: %.c | deps $(SKELS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c $< -o $@

# libssl: vigild --send tls://.
$(BUILD)/vigild: LDLIBS += -lssl -lcrypto
$(BUILD)/agent-roots/%/.made:
	@rm -rf $(@D) && mkdir -p $(@D)
	@for d in $(AGENT_BELOW_$*) $(filter-out vigild,$*); do ln -s $(CURDIR)/agent/$$d $(@D)/$$d; done
	@touch $@
$(foreach l,$(AGENT_LAYERS),$(eval $(BUILD)/agent/$(l)/%.o: CFLAGS += -I$(call agent_root,$(l))))
$(foreach l,$(AGENT_LAYERS),$(eval $(filter $(BUILD)/agent/$(l)/%,$(AGENT_OBJS)): | $(call agent_root,$(l))/.made))
AGENT_TOP_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(wildcard agent/*.c))
$(AGENT_TOP_OBJS): CFLAGS += -I$(call agent_root,vigild)
$(AGENT_TOP_OBJS): | $(call agent_root,vigild)/.made
$(BUILD)/vigild: $(AGENT_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# libnats: the collector publishes to JetStream, and a test reads it back.
$(BUILD)/vigil-collector $(BUILD)/tests/js_tool: LDLIBS += -lnats
# OpenSSL 3: the collector's tls:// listeners (collector/conn_tls.c).
$(BUILD)/vigil-collector: LDLIBS += -lssl -lcrypto
$(BUILD)/vigil-collector: $(COLL_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BUILD)/vigil: $(CLI_OBJS) $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(BENCH_BINS:%=%.o): $(BUILD)/bench/%.o: bench/%.c | deps $(SKELS) $(BENCH_SKELS) $(call agent_root,vigild)/.made
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -I$(call agent_root,vigild) -I$(BUILD)/bench $(DEPFLAGS) -c $< -o $@
$(BUILD)/bench/%: $(BUILD)/bench/%.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
# The stream benchmark runs the agent's own sinks.
$(BUILD)/bench/stream_consumers: $(filter-out $(AGENT_TOP_OBJS),$(AGENT_OBJS))
$(BUILD)/bench/stream_consumers: LDLIBS += -lssl -lcrypto -lpthread
$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Builds, then runs the agent in the foreground on its embedded default:
# observe only, one line per event.
run: all
	$(BUILD)/vigild --compact

# The unit programs and the fuzz replay first: they take a second and
# name the function at fault.
FIRST_TESTS := tests/unit.t tests/fuzz.t
test: all fuzz-build
	@./scripts/install-deps.sh test
	BUILD=$(BUILD) prove -v --timer $(FIRST_TESTS) $(filter-out $(FIRST_TESTS),$(wildcard tests/*.t))

# The same suite with AddressSanitizer and UndefinedBehaviorSanitizer.
# The fleet path on a three-node JetStream cluster (tests/fleet/): slower
# (about a minute a file), so apart from `make test`; CI runs it.
test-fleet: all
	BUILD=$(BUILD) prove -v --timer $(wildcard tests/fleet/*.t)

test-san:
	$(MAKE) BUILD=build/san SAN=1 test

# Test files inside another kernel under qemu, on this machine's user space
# (docs/kernels.md): KERNEL_DEB=<linux-image package or .deb> (default:
# Debian 12's current 6.1), TESTS="tests/a.t tests/b.t" (default: a smoke subset).
test-kernel: all
	BUILD=$(BUILD) KERNEL_DEB='$(KERNEL_DEB)' TESTS='$(TESTS)' ./tests/vm/run.sh

# The systemd units started by a real systemd: the same VM with the host's
# systemd as PID 1, `make install`ed units and config (tests/vm/systemd.t,
# docs/operations.md "Units").
test-systemd: all
	BUILD=$(BUILD) KERNEL_DEB='$(KERNEL_DEB)' VM_SYSTEMD=1 TESTS=tests/vm/systemd.t ./tests/vm/run.sh

# Fuzzing (docs/fuzzing.md): libFuzzer targets built with clang, whatever
# BUILD and SAN say, with the library and collector code they reach.
# `make fuzz` replays the regression cases, then fuzzes each target for
# FUZZ_SECONDS; a crash fails it and leaves its input in build/fuzz/crash/.
# Signed overflow is recoverable here only so that a fuzz run can go past a
# known one (tests/fuzz/run.sh); a replay halts on it as on any error.
FUZZ         := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS  := -g -O1 -fno-omit-frame-pointer -Wall -Wextra -Wno-missing-field-initializers \
                -std=gnu11 -D_GNU_SOURCE -Iinclude -Ilib -Icollector \
                -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                -fsanitize-recover=signed-integer-overflow
FUZZ_OBJS    := $(patsubst %.c,$(FUZZ)/%.o,$(LIB_SRCS) $(filter-out collector/main.c,$(wildcard collector/*.c)))
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(FUZZ)/%,$(wildcard tests/fuzz/fuzz_*.c))

$(FUZZ)/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@
$(FUZZ)/fuzz_%: tests/fuzz/fuzz_%.c $(wildcard tests/fuzz/*.h) $(FUZZ_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJS) $(LDLIBS) -lnats -lssl -lcrypto
$(FUZZ)/make_seeds: tests/fuzz/make_seeds.c tests/policy_cases.h $(FUZZ_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_OBJS) $(LDLIBS) -lnats -lssl -lcrypto
$(FUZZ)/seeds: $(FUZZ)/make_seeds tests/fuzz/make_corpus.sh docs/policy.md
	tests/fuzz/make_corpus.sh $< $@

fuzz-build: deps $(FUZZ_BINS) $(FUZZ)/seeds

fuzz: fuzz-build
	tests/fuzz/run.sh replay
	tests/fuzz/run.sh fuzz $(FUZZ_SECONDS)

bench: all
	BUILD=$(BUILD) ./bench/run.sh

install: $(BINS)
	install -d $(DESTDIR)$(PREFIX)/sbin $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8 \
	           $(DESTDIR)/lib/systemd/system
	install -m 0755 $(BUILD)/vigild $(DESTDIR)$(PREFIX)/sbin/vigild
	install -m 0755 $(BUILD)/vigil $(DESTDIR)$(PREFIX)/bin/vigil
	[ ! -f $(BUILD)/vigil-collector ] || install -m 0755 $(BUILD)/vigil-collector $(DESTDIR)$(PREFIX)/bin/vigil-collector
	install -m 0644 man/*.8 $(DESTDIR)$(PREFIX)/share/man/man8/
	sed 's|@PREFIX@|$(PREFIX)|g' dist/vigild.service > $(DESTDIR)/lib/systemd/system/vigild.service
	sed 's|@PREFIX@|$(PREFIX)|g' dist/vigil-collector.service \
		> $(DESTDIR)/lib/systemd/system/vigil-collector.service
	# The config files are the operator's once installed: never overwritten.
	install -d -m 0755 $(DESTDIR)/etc/vigil
	install -d -m 0700 $(DESTDIR)/etc/vigil/collector-tls
	[ -e $(DESTDIR)/etc/vigil/vigild.conf ] || install -m 0644 dist/vigild.conf $(DESTDIR)/etc/vigil/vigild.conf
	[ -e $(DESTDIR)/etc/vigil/collector.conf ] || install -m 0644 dist/collector.conf $(DESTDIR)/etc/vigil/collector.conf
	install -d $(DESTDIR)$(PREFIX)/share/bash-completion/completions
	for p in vigild vigil vigil-collector; do \
		install -m 0644 dist/vigil.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/$$p; done

clean:
	rm -rf build

# Not under $(BUILD)/vm: a failed VM run keeps its tests' folders there,
# whose files may end in .d too (make test-kernel).
DEP_FILES := $(sort $(shell find $(BUILD) $(FUZZ) -path '$(BUILD)/vm' -prune -o -name '*.d' -print 2>/dev/null))
$(DEP_FILES): ;
-include $(DEP_FILES)
