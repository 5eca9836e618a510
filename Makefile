# Two commands after cloning:  `make sweep` (the main job) and `make test` (the tests).
# Both first make sure a driver exists for every API that has a CPU driver (CPU_DRIVER_APIS);
# where none does, they install the CPU driver with apt-get, so a machine with no GPU still runs
# for real.
#
# stdout carries results only: every set-up message and all of apt-get's output go to stderr,
# and no command is echoed, so `make sweep > run.txt` holds blocksweep's own output and nothing else.
#
# The checks read the variables below; each can be overridden (`make drivers APT_GET=...`), which
# is how tests/tests/makefile.rs runs them against fake ICD directories and a fake apt-get.

MAKEFLAGS += --no-print-directory
# This Makefile's directory (tests run it with -f from elsewhere).
ROOT := $(dir $(abspath $(lastword $(MAKEFILE_LIST))))

SUDO ?= $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_GET ?= apt-get
# `env` after sudo: sudo drops the caller's environment, so the variable must be set on its far side.
APT = $(SUDO) env DEBIAN_FRONTEND=noninteractive $(APT_GET)
CARGO ?= cargo
# ldconfig lives in /sbin, which is not on a non-root user's PATH on Debian.
LDCONFIG ?= $(firstword $(wildcard /sbin/ldconfig /usr/sbin/ldconfig) ldconfig)

# Where the loaders look for drivers. Vulkan: /etc and the XDG config and data directories
# (defaults /etc/xdg, /usr/local/share:/usr/share and ~/.local/share), each with vulkan/icd.d; OpenCL (ocl-icd):
# $OCL_ICD_VENDORS when set, else /etc/OpenCL/vendors. An ICD file there is how a loader finds a
# driver, so: no ICD file, no driver.
xdg_dirs = $(subst :, ,$(or $(XDG_CONFIG_DIRS),/etc/xdg) $(or $(XDG_DATA_DIRS),/usr/local/share:/usr/share) \
             $(or $(XDG_DATA_HOME),$(HOME)/.local/share))
VULKAN_ICD_DIRS ?= $(sort /etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d \
                          $(addsuffix /vulkan/icd.d,$(xdg_dirs)))
VULKAN_LAYER_DIRS ?= $(sort /etc/vulkan/explicit_layer.d /usr/share/vulkan/explicit_layer.d \
                            /usr/local/share/vulkan/explicit_layer.d $(addsuffix /vulkan/explicit_layer.d,$(xdg_dirs)))
OPENCL_VENDOR_DIRS ?= $(or $(OCL_ICD_VENDORS),/etc/OpenCL/vendors)
# Commands the tests run (validation layer aside): glslang rebuilds the SPIR-V, spirv-val checks it.
TEST_TOOL_COMMANDS ?= glslangValidator spirv-val

# The APIs with a CPU driver: `make drivers` installs it where the loader finds no driver, and
# CI requires these APIs (.ci/run reads `make -s cpu-driver-apis`). Per API key: its display
# name, the CPU driver, its packages, and the check that a driver is there (an ICD file where
# the loader looks, and the loader library). An API without a CPU driver needs no line here.
CPU_DRIVER_APIS := opencl vulkan webgpu
opencl_NAME := OpenCL
opencl_CPU_DRIVER := PoCL
opencl_PACKAGES := ocl-icd-libopencl1 pocl-opencl-icd
opencl_FOUND = ( $(call have_file,$(OPENCL_VENDOR_DIRS),*.icd) ) && $(call have_lib,libOpenCL.so.1)
vulkan_NAME := Vulkan
vulkan_CPU_DRIVER := Mesa lavapipe
vulkan_PACKAGES := libvulkan1 mesa-vulkan-drivers
vulkan_FOUND = ( $(call have_file,$(VULKAN_ICD_DIRS),*.json) ) && $(call have_lib,libvulkan.so.1)
# WebGPU runs through wgpu on the Vulkan driver: the same packages, the same check.
webgpu_NAME := WebGPU
webgpu_CPU_DRIVER := Mesa lavapipe, under wgpu
webgpu_PACKAGES := $(vulkan_PACKAGES)
webgpu_FOUND = $(vulkan_FOUND)
# What the tests also need: the validation layer, and the tools that rebuild and check the SPIR-V.
TEST_TOOLS := vulkan-validationlayers glslang-tools spirv-tools
SLURM_PACKAGES := slurmctld slurmd slurm-client munge

# $(call have_file,DIRS,GLOB): true when a regular file (or a link to one) matching GLOB is in any
# of DIRS. A DIR that is itself such a file counts too ($OCL_ICD_VENDORS may name one .icd file).
have_file = for d in $(1); do case "$$d" in $(2)) [ -f "$$d" ] && exit 0;; esac; \
	for f in "$$d"/$(2); do [ -f "$$f" ] && exit 0; done; done; exit 1
# $(call have_lib,SONAME): the dynamic loader can find SONAME.
have_lib = $(LDCONFIG) -p 2>/dev/null | grep -q '[[:space:]]$(1)[[:space:]]'
# $(call apt_install,PACKAGES): one update, one install, all of it on stderr.
apt_install = { $(APT) update -qq && $(APT) install -y -qq $(1); } >&2

.PHONY: sweep replay test drivers cpu-driver-apis test-tools slurm slurm-packages lint

## make sweep ARGS="--size 640x360": the seed's sweep on the first GPU, else the first device.
sweep: drivers
	@$(CARGO) run --release -p blocksweep-cli -- sweep $(ARGS)

## make replay FILE=docs/results/.../run.json ARGS="--plot run.svg": a saved run (a GPU's, on any
## machine) re-rendered with every column; nothing is measured, so no driver is needed.
replay:
	@test -n "$(FILE)" || { echo "make replay: give FILE=<a sweep's JSON> (docs/results/ has H200 runs)" >&2; exit 2; }
	@$(CARGO) run --release -q -p blocksweep-cli -- replay $(FILE) $(ARGS)

## make test: every test, on the real drivers (BLOCKSWEEP_REQUIRE=<api>,... makes a missing one fail);
## at its end, how many tests were skipped and why (tools/test-run.sh). --no-fail-fast: every test
## binary runs, so one failure neither hides the others nor cuts the count short.
test: drivers test-tools
	@$(ROOT)tools/test-run.sh $(CARGO) test --workspace --no-fail-fast

## make slurm: a one-node Slurm on this machine runs tools/slurm/blocksweep-array.sbatch (one
## array task per API), then `blocksweep compare` on the task's JSON files; see docs/slurm.md.
## SLURM_RESULTS is where the JSON files go (default target/slurm-local); ARGS replaces the small
## default sweep (--size 256x256 --blocks 64,256). Slurm's and munge's packages are installed when missing.
SLURM_RESULTS ?= target/slurm-local
slurm: drivers slurm-packages
	@$(CARGO) build --release -p blocksweep-cli
	@BLOCKSWEEP_BIN=target/release/blocksweep BLOCKSWEEP_RESULTS='$(SLURM_RESULTS)' \
	 $(if $(ARGS),BLOCKSWEEP_ARGS='$(ARGS)') tools/slurm/local-cluster.sh

lint:
	@$(CARGO) fmt --all -- --check
	@$(CARGO) clippy --workspace --all-targets -- -D warnings

drivers:
	@missing=; \
	 $(foreach api,$(CPU_DRIVER_APIS),if $($(api)_FOUND); then :; else \
	   echo "make: no $($(api)_NAME) driver: installing $($(api)_CPU_DRIVER) (CPU)" >&2; \
	   missing="$$missing $($(api)_PACKAGES)"; fi;) \
	 if [ -n "$$missing" ]; then $(call apt_install,$$missing); fi

cpu-driver-apis:
	@echo $(CPU_DRIVER_APIS)

test-tools:
	@ok=1; for c in $(TEST_TOOL_COMMANDS); do command -v "$$c" >/dev/null 2>&1 || ok=; done; \
	 if [ -n "$$ok" ] && ( $(call have_file,$(VULKAN_LAYER_DIRS),*validation*.json) ); then :; \
	 else echo "make: installing the test tools: $(TEST_TOOLS)" >&2; $(call apt_install,$(TEST_TOOLS)); fi

slurm-packages:
	@if command -v sbatch >/dev/null 2>&1 && PATH="$$PATH:/usr/sbin:/sbin" command -v slurmctld >/dev/null 2>&1 \
	    && PATH="$$PATH:/usr/sbin:/sbin" command -v slurmd >/dev/null 2>&1 \
	    && PATH="$$PATH:/usr/sbin:/sbin" command -v munged >/dev/null 2>&1; then :; \
	 else echo "make: installing Slurm and munge: $(SLURM_PACKAGES)" >&2; $(call apt_install,$(SLURM_PACKAGES)); fi
