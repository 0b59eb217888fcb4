# A thin layer over CMake. `make run` and `make test` are the README's Quick
# start: each installs what is missing (deploy/install-deps.sh), builds, then
# starts the service or runs every test through ctest.
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CUDACXX ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
export CUDACXX
ARGS    ?=

.PHONY: all deps test-deps build run test test-gpu bundle clean

all: build

deps:
	./deploy/install-deps.sh build

test-deps:
	./deploy/install-deps.sh test

build: deps configure-and-build

.PHONY: configure-and-build
configure-and-build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j$(JOBS)

run: build
	$(BUILD)/divergence serve $(ARGS)

test: test-deps configure-and-build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-gpu: configure-and-build
	cd $(BUILD) && ctest --output-on-failure -L gpu

bundle: build
	./deploy/bundle.sh $(BUILD)

clean:
	rm -rf $(BUILD)
