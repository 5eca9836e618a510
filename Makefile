# Two commands after cloning:  `make sweep` (the main job) and `make test` (the tests).
# Both first make sure an OpenCL and a Vulkan driver exist; where none does, they install the
# CPU drivers (PoCL, Mesa lavapipe) with apt-get, so a machine with no GPU still runs for real.

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get

CPU_DRIVERS := ocl-icd-libopencl1 pocl-opencl-icd libvulkan1 mesa-vulkan-drivers
# What the tests also need: the validation layer, and the tools that rebuild and check the SPIR-V.
TEST_TOOLS := vulkan-validationlayers glslang-tools spirv-tools

.PHONY: sweep test drivers test-tools lint

## make sweep ARGS="--size 640x360": the seed's sweep on the first GPU, else the first device.
sweep: drivers
	cargo run --release -p blocksweep-cli -- sweep $(ARGS)

## make test: every test, on the real drivers (BLOCKSWEEP_REQUIRE=opencl,vulkan makes a missing one fail).
test: drivers test-tools
	cargo test --workspace

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

# An ICD file is how both loaders find drivers; no ICD, no driver.
drivers:
	@if ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 && ldconfig -p | grep -q libOpenCL.so.1; then :; \
	 else echo "no OpenCL driver: installing PoCL (CPU)"; $(APT) update -qq && $(APT) install -y -qq ocl-icd-libopencl1 pocl-opencl-icd; fi
	@if ls /usr/share/vulkan/icd.d/*.json /etc/vulkan/icd.d/*.json >/dev/null 2>&1 && ldconfig -p | grep -q libvulkan.so.1; then :; \
	 else echo "no Vulkan driver: installing Mesa lavapipe (CPU)"; $(APT) update -qq && $(APT) install -y -qq libvulkan1 mesa-vulkan-drivers; fi

test-tools:
	@if command -v glslangValidator >/dev/null && command -v spirv-val >/dev/null && ls /usr/share/vulkan/explicit_layer.d/*validation* >/dev/null 2>&1; then :; \
	 else $(APT) update -qq && $(APT) install -y -qq $(TEST_TOOLS); fi
