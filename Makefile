# wavec build. `make` builds the release CLI and library; `make test` builds
# everything under AddressSanitizer + UndefinedBehaviorSanitizer and runs the
# whole test suite (tests/run.sh); `make demo` is the main job.
CC      ?= cc
STD     := -std=c17 -D_POSIX_C_SOURCE=200809L
# A flag only some compilers know, when $(CC) takes it (e.g. clang has no
# -Wclobbered): `make CC=clang` and `make CC=gcc` both build with -Werror.
cc_flag = $(shell $(CC) -Werror $(1) -x c -c /dev/null -o /dev/null 2>/dev/null && echo $(1))
# -Wno-clobbered (GCC): public entry points set a longjmp guard
# (support/base.h); on the failure path they only return a constant or the
# context's status.
WARN    := -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wstrict-prototypes \
           $(call cc_flag,-Wno-clobbered)
CFLAGS_COMMON := $(STD) $(WARN) -Iinclude -Isrc -MMD -MP
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

.PHONY: all lib test asan demo clean fuzz format golden-update
all: $(B)/wavec $(B)/libwavec.a $(UNIT_BIN) $(EX_C_BIN) $(TOOL_BIN)

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) -c $< -o $@

$(B)/libwavec.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(B)/wavec: $(CLI_OBJ) $(B)/libwavec.a
	$(CC) $(LDFLAGS_MODE) $(CLI_OBJ) $(B)/libwavec.a $(LIBS) -o $@

$(B)/tests/%: tests/unit/%.c $(wildcard tests/ref/*) $(B)/libwavec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) $< $(B)/libwavec.a $(LDFLAGS_MODE) $(LIBS) -o $@

$(B)/tools/%: tools/%.c tests/ref/ref.c tests/ref/kcase.c $(B)/libwavec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) $< $(B)/libwavec.a $(LDFLAGS_MODE) $(LIBS) -o $@

$(B)/examples/%: examples/%.c $(B)/libwavec.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(CFLAGS_MODE) $(CFLAGS) $< $(B)/libwavec.a $(LDFLAGS_MODE) $(LIBS) -o $@

asan:
	$(MAKE) MODE=asan all

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
