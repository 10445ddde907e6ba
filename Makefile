# gpuwhy: thin wrapper around CMake. `make demo` and `make test` install
# missing Debian packages first (scripts/install-deps, quiet when all present);
# `make test` also installs what the tests drive (Prometheus, Chromium, Slurm...),
# so that the whole suite runs, and ends with a summary of any test skipped.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc)

PREFIX     ?= /usr/local

.PHONY: all deps test-deps build install demo style test test-fast test-asan format lint bench fuzz clean po

all: build

deps:
	@scripts/install-deps

test-deps:
	@scripts/install-deps --extra --slurm

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# Install the binary, the simulated GPU, its scenarios and the message catalogues
# under PREFIX (bin/, lib/gpuwhy/, share/gpuwhy/scenarios/, share/locale/); the
# installed gpuwhy finds them beside itself, so PREFIX can be any directory.
# The man pages and the bash, zsh and fish completion go to share/man/,
# share/bash-completion/, share/zsh/ and share/fish/.
# An existing build tree is installed as it is configured (build type kept).
install:
	@test -f $(BUILD)/CMakeCache.txt || $(MAKE) --no-print-directory build
	@cmake --build $(BUILD) -j $(JOBS)
	@cmake --install $(BUILD) --prefix $(PREFIX)

# The demo's output is the story: the build goes to a log, shown only when it fails.
demo: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@echo "building gpuwhy (log in $(BUILD)/build.log) ..."
	@cmake --build $(BUILD) -j $(JOBS) >$(BUILD)/build.log 2>&1 || \
		{ tail -n 30 $(BUILD)/build.log; echo "build failed: see $(BUILD)/build.log"; exit 1; }
	@scripts/demo $(BUILD)/gpuwhy

# The whole suite, in the normal build and again under ASan+UBSan.
# The style gate runs last, so that a formatting slip does not hide test results.
test: test-deps build
	@scripts/run-tests $(BUILD) -j $(JOBS)
	@$(MAKE) --no-print-directory test-asan
	@scripts/check-style

test-fast: test-deps build
	@scripts/run-tests $(BUILD) -j $(JOBS)

test-asan: test-deps
	@cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DGPUWHY_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		scripts/run-tests $(ASAN_BUILD) -j $(JOBS)

# Bring po/zh_CN.po up to the messages the code marks today (new ones come in
# untranslated, for the translator; po/glossary.md fixes the terms).
po: build
	@msgmerge --quiet --update --backup=none --no-fuzzy-matching --add-location=file po/zh_CN.po $(BUILD)/gpuwhy.pot
	@LC_ALL=C msgfmt --check --statistics -o /dev/null po/zh_CN.po

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

lint: build
	@scripts/check-style --lint

# The gate `make test` ends with: cppcheck, and clang-format clean on every C file.
style: deps
	@scripts/check-style

fuzz: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DGPUWHY_FUZZ=ON -DGPUWHY_WERROR=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@scripts/run-fuzzers $(FUZZ_BUILD)

bench: build
	@scripts/install-deps --extra --bench
	@bench/run-all $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
