# A thin layer over CMake. `make run` and `make test` are the README's Quick
# start: each installs what is missing (deploy/install-deps.sh), builds, then
# starts the service or runs every test through ctest. `make run` builds only
# the two binaries it runs, and when its evidence store is empty it first
# copies the committed H200 capture into it (demo evidence: the widget labels
# it as a recorded measurement with its date and age). Without nvcc both
# still work: everything that needs no GPU is built, served and tested, and
# the configure step says once that measuring needs the CUDA toolkit.
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# nvcc on PATH, else the toolkit's usual place; exported only when it is
# there, so CMake's own search decides on a machine without one.
CUDACXX ?= $(shell command -v nvcc 2>/dev/null || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; })
ifneq ($(CUDACXX),)
export CUDACXX
endif
ARGS    ?=
EVIDENCE ?= var/evidence

.PHONY: all deps test-deps build run test test-gpu bundle deb clean

all: build

deps:
	./deploy/install-deps.sh build

test-deps:
	./deploy/install-deps.sh test

build: deps configure-and-build

.PHONY: configure configure-and-build
configure:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release

configure-and-build: configure
	cmake --build $(BUILD) -j$(JOBS)

run: deps configure
	cmake --build $(BUILD) -j$(JOBS) --target divergence
	./deploy/demo-evidence.sh tests/fixtures/evidence $(EVIDENCE)
	$(BUILD)/divergence serve --evidence-dir $(EVIDENCE) $(ARGS)

test: test-deps configure-and-build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-gpu: configure-and-build
	cd $(BUILD) && ctest --output-on-failure -L gpu

bundle: build
	./deploy/bundle.sh $(BUILD)

deb: build
	./deploy/deb.sh $(BUILD)

clean:
	rm -rf $(BUILD)
