# Thin wrapper over CMake. Every target runs the setup step first (idempotent, fast when done).
#   make        build build/propertyoverride (Release)
#   make run    the controller against the bundled local API server, with the examples
#   make test   every test: unit, vectors, integration, end-to-end, ASan+UBSan, fuzz, valgrind
#   make bench  the benchmarks under tests/bench (numbers, not pass/fail)
#   make bench-controller ARGS="--points 2500,10000 --restart"   the controller's sweep on the real
#               kube-apiserver (tests/e2e/bench_controller.sh; docs/benchmarks.md)
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup build run test bench bench-controller clean
all: build

setup:
	@scripts/setup.sh

build: setup
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

run: build
	@scripts/run.sh $(BUILD)

test: setup
	@scripts/test.sh

bench: build
	@scripts/bench.sh $(BUILD)

bench-controller: build
	@bash tests/e2e/bench_controller.sh $(BUILD) $(ARGS)

clean:
	rm -rf build build-*
