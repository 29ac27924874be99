# wavec build. `make` builds the release CLI and libraries; `make test` builds
# everything under AddressSanitizer + UndefinedBehaviorSanitizer and runs the
# whole test suite (tests/run.sh); `make demo` is the main job; `make install
# PREFIX=DIR` installs the CLI, include/wavec.h, libwavec.a and libwavec.so;
# `make fuzz` builds the fuzz harnesses (tests/fuzz/README.md) into build/fuzz/.
CC      ?= cc
STD     := -std=c17 -D_POSIX_C_SOURCE=200809L
# A flag only some compilers know, when $(CC) takes it (e.g. clang has no
# -Wclobbered): `make CC=clang` and `make CC=gcc` both build with -Werror.
cc_flag = $(shell $(CC) -Werror $(1) -fsyntax-only -x c /dev/null 2>/dev/null && echo $(1))
# -Wno-clobbered (GCC): public entry points set a longjmp guard
# (support/base.h); on the failure path they only return a constant or the
# context's status.
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
           $(call cc_flag,-Wno-clobbered)
# -fPIC: one set of objects for the shared library and everything else;
# -fvisibility=hidden: only WAVEC_API (include/wavec.h) is exported.
CFLAGS_COMMON := $(STD) $(WARN) -fPIC -fvisibility=hidden -Iinclude -Isrc -MMD -MP
MODE    ?= release
ifeq ($(MODE),release)
  CFLAGS_MODE := -O2 -g
  LDFLAGS_MODE :=
else ifeq ($(MODE),asan)
  CFLAGS_MODE := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -DWV_DEBUG=1
  LDFLAGS_MODE := -fsanitize=address,undefined
else ifeq ($(MODE),debug)
  CFLAGS_MODE := -O0 -g -DWV_DEBUG=1
  LDFLAGS_MODE :=
else ifeq ($(MODE),fuzz)
  # The fuzz harnesses (make fuzz): the sanitizers, and with
  # FUZZ_ENGINE=libfuzzer (clang) libFuzzer's coverage hooks in every object.
  CFLAGS_MODE := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -DWV_DEBUG=1
  LDFLAGS_MODE := -fsanitize=address,undefined
  ifeq ($(FUZZ_ENGINE),libfuzzer)
    CFLAGS_MODE += -fsanitize=fuzzer-no-link
  endif
endif
BUILD   ?= build
B       := $(BUILD)/$(MODE)
LIB_SRC := $(sort $(wildcard src/support/*.c src/expr/*.c src/front/*.c src/ir/*.c src/passes/*.c src/target/*.c src/tir/*.c src/runtime/*.c))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(B)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(B)/%.o)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
TOOL_SRC := $(sort $(wildcard tools/*.c))
TOOL_BIN := $(TOOL_SRC:tools/%.c=$(B)/tools/%)
EX_C_SRC := $(sort $(wildcard examples/*.c))
EX_C_BIN := $(EX_C_SRC:examples/%.c=$(B)/examples/%)
LIBS    := -lm -ldl
OBJCOPY ?= objcopy
# The version of include/wavec.h: libwavec.so.MAJOR is the soname.
VERSION := $(shell sed -n 's/^\#define WAVEC_VERSION_STRING "\(.*\)"/\1/p' include/wavec.h)
VMAJOR  := $(firstword $(subst ., ,$(VERSION)))
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
# The tree's own programs (CLI, tests, tools, examples) link every object,
# internal names included; libwavec.a and libwavec.so are for users.
INTERNAL := $(B)/wavec-internal.a
# The identity of the library's sources, part of the disk cache's key
# (src/runtime/cache.c): a compiler built from other sources never reads
# the binaries this one stored.
ID_SRC  := $(LIB_SRC) $(sort $(wildcard include/*.h src/*/*.h))
WV_SOURCE_ID := $(shell cat $(ID_SRC) | cksum | cut -d' ' -f1)

.PHONY: all lib install test asan demo clean fuzz fuzz-harnesses format golden-update FORCE
all: $(B)/wavec lib $(UNIT_BIN) $(EX_C_BIN) $(TOOL_BIN)
lib: $(B)/libwavec.a $(B)/libwavec.so

# The compiler and flags a build was made with: when they change (CC=,
# CFLAGS=, or this Makefile's flags), everything is compiled again.
FLAGS_NOW := $(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) | $(LDFLAGS_MODE)
$(B)/flags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' >$@

$(B)/%.o: %.c $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) -c $< -o $@

$(INTERNAL): $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# The static library: every object linked into one, whose hidden (internal)
# symbols are then made local, so that only wavec_* names are global.
$(B)/libwavec.a: $(LIB_OBJ)
	$(CC) -r -nostdlib $^ -o $(B)/libwavec.o
	$(OBJCOPY) --localize-hidden $(B)/libwavec.o
	rm -f $@ && ar rcs $@ $(B)/libwavec.o

$(B)/libwavec.so: $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,libwavec.so.$(VMAJOR) $(LDFLAGS_MODE) $^ $(LIBS) -o $@

$(B)/wavec: $(CLI_OBJ) $(INTERNAL)
	$(CC) $(LDFLAGS_MODE) $(CLI_OBJ) $(INTERNAL) $(LIBS) -o $@

$(B)/tests/%: tests/unit/%.c $(wildcard tests/ref/*) $(INTERNAL) $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) $< $(INTERNAL) $(LDFLAGS_MODE) $(LIBS) -o $@

$(B)/tools/%: tools/%.c tests/ref/ref.c tests/ref/kcase.c $(INTERNAL) $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) $< $(INTERNAL) $(LDFLAGS_MODE) $(LIBS) -o $@

$(B)/examples/%: examples/%.c $(INTERNAL) $(B)/flags
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) $< $(INTERNAL) $(LDFLAGS_MODE) $(LIBS) -o $@

$(B)/src/runtime/cache.o: CFLAGS_MODE += -DWV_SOURCE_ID='"$(WV_SOURCE_ID)"'
$(B)/src/runtime/cache.o: $(ID_SRC)

asan:
	$(MAKE) MODE=asan all

# Fuzz harnesses: tests/fuzz/fuzz_NAME.c becomes build/fuzz/fuzz_NAME, linked
# with libFuzzer when $(FUZZ_CC) can link a libFuzzer + ASan + UBSan program,
# else with the standalone mutator tests/fuzz/mutate.c (same command line);
# both under ASan+UBSan. tests/fuzz/run.sh runs them.
FUZZ_CC  ?= clang
FUZZ_SRC := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/%)
FUZZ_OBJ := $(B)/tests/fuzz/harness.o $(if $(filter libfuzzer,$(FUZZ_ENGINE)),,$(B)/tests/fuzz/mutate.o)
FUZZ_LINK := $(if $(filter libfuzzer,$(FUZZ_ENGINE)),-fsanitize=fuzzer)
fuzz:
	@mkdir -p $(BUILD)
	@if echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' | \
	    $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c - -o $(BUILD)/fuzz-probe >/dev/null 2>&1; then \
	  rm -f $(BUILD)/fuzz-probe; \
	  $(MAKE) --no-print-directory MODE=fuzz CC=$(FUZZ_CC) FUZZ_ENGINE=libfuzzer fuzz-harnesses; \
	else \
	  echo "make fuzz: $(FUZZ_CC) cannot link libFuzzer: the harnesses get the standalone mutator"; \
	  $(MAKE) --no-print-directory MODE=fuzz FUZZ_ENGINE=mutate fuzz-harnesses; \
	fi

# the harnesses' objects are kept (else make removes them as intermediates)
.SECONDARY: $(FUZZ_SRC:%.c=$(B)/%.o) $(FUZZ_OBJ)
fuzz-harnesses: $(FUZZ_BIN)
	@echo "make fuzz: $(notdir $(FUZZ_BIN)) in $(B)/ ($(FUZZ_ENGINE))"

$(B)/fuzz_%: $(B)/tests/fuzz/fuzz_%.o $(FUZZ_OBJ) $(INTERNAL)
	$(CC) $(LDFLAGS_MODE) $(FUZZ_LINK) $^ $(LIBS) -o $@

# DESTDIR stages the install for packaging.
install: $(B)/wavec $(B)/libwavec.a $(B)/libwavec.so
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)
	install -m 755 $(B)/wavec $(DESTDIR)$(BINDIR)/wavec
	install -m 644 include/wavec.h $(DESTDIR)$(INCDIR)/wavec.h
	install -m 644 $(B)/libwavec.a $(DESTDIR)$(LIBDIR)/libwavec.a
	install -m 755 $(B)/libwavec.so $(DESTDIR)$(LIBDIR)/libwavec.so.$(VERSION)
	ln -sf libwavec.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libwavec.so.$(VMAJOR)
	ln -sf libwavec.so.$(VMAJOR) $(DESTDIR)$(LIBDIR)/libwavec.so

# The test command of the README: sanitizer build, then every test.
test:
	$(MAKE) MODE=asan all
	$(MAKE) MODE=release all
	tests/run.sh

# The main job of the README.
demo: all
	$(B)/tools/demo

# Rewrites the golden files from the current compiler (review the diff!).
# tests/run.sh runs the sanitizer build, so that is the one to bring up to date.
golden-update:
	$(MAKE) MODE=asan all
	WAVEC_UPDATE_GOLDEN=1 tests/run.sh golden diag

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

# Header dependencies (-MMD): of every object, and of every program built
# straight from its source (tests, tools, examples: their .d is named after
# the program).
-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(addsuffix .d,$(UNIT_BIN) $(TOOL_BIN) $(EX_C_BIN))
-include $(wildcard $(B)/tests/fuzz/*.d)
