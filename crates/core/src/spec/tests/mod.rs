//! The spec module's tests: the examples parse, each bad input gives its one-line error,
//! expressions, the generator, comparison and `--size`.

use std::path::{Path, PathBuf};

mod values;

use super::*;
use crate::blocks::BlockSize;
use crate::program::{ProgramArg, ScalarType};
use crate::testing::{CUDA_CPP, GLSL, PTX};

fn examples() -> PathBuf {
    crate::testing::register_kernel_apis();
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kernels")
}

/// A temporary folder holding `k.cu` (so sources resolve) for specs written inline.
fn scratch_dir() -> PathBuf {
    crate::testing::register_kernel_apis();
    let d = std::env::temp_dir().join(format!("blocksweep-spec-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("k.cu"), "extern \"C\" __global__ void k() {}").unwrap();
    d
}

const HEAD: &str = "name = \"k\"\nwork = \"n\"\nsizes = { n = 1000 }\n[sources]\ncuda = { file = \"k.cu\", entry = \"k\" }\n";

fn parse(body: &str) -> Result<KernelSpec, SpecError> {
    crate::testing::register_kernel_apis();
    KernelSpec::parse("t/kernel.toml", &format!("{HEAD}{body}"), scratch_dir())
}

fn parse_err(body: &str) -> String {
    parse(body).unwrap_err().to_string()
}

#[test]
fn every_example_parses_and_instantiates_small() {
    for name in ["grayscale", "saxpy", "transpose", "reduce", "broken-stride"] {
        let spec = KernelSpec::load(examples().join(name).join("kernel.toml")).unwrap();
        assert_eq!(
            spec.apis(),
            ["cuda", "opencl", "vulkan", "webgpu"],
            "{name}"
        );
        let size = if spec.work.len() == 2 {
            "67x45"
        } else {
            "5000"
        };
        let inst = spec.instantiate(&spec.with_size(size).unwrap()).unwrap();
        assert!(inst.written().count() >= 1, "{name}");
        for b in &inst.buffers {
            assert_eq!(b.initial.len() as u64, b.elements * b.decl.ty.size() as u64);
        }
    }
}

#[test]
fn saxpy_instance_matches_the_contract() {
    let spec = KernelSpec::load(examples().join("saxpy/kernel.toml")).unwrap();
    let cuda = spec.sources_for("cuda").unwrap();
    assert_eq!((cuda.language, cuda.entry.as_str()), (CUDA_CPP, "saxpy"));
    assert!(cuda.text().contains("extern \"C\" __global__"));
    let vk = spec.sources_for("vulkan").unwrap();
    assert_eq!((vk.language, vk.entry.as_str()), (GLSL, "main"));
    assert!(spec.sources_for("metal").is_none());
    let inst = spec.instantiate(&spec.with_size("1000").unwrap()).unwrap();
    assert_eq!(inst.work, (1000, 1));
    assert_eq!(inst.bytes_moved, Some(12_000.0));
    assert_eq!(inst.args[0], ProgramArg::buffer(4000));
    let a = ProgramArg::Scalar {
        ty: ScalarType::F32,
        bytes: 2.5f32.to_le_bytes().to_vec(),
    };
    assert_eq!(inst.args[2], a);
    let n = ProgramArg::Scalar {
        ty: ScalarType::U64,
        bytes: 1000u64.to_le_bytes().to_vec(),
    };
    assert_eq!(inst.args[3], n);
    // Different seeds: x and y differ; both in [-1, 1).
    assert_ne!(inst.buffers[0].initial, inst.buffers[1].initial);
    for c in inst.buffers[0].initial.chunks_exact(4) {
        let v = f32::from_le_bytes(c.try_into().unwrap());
        assert!((-1.0..1.0).contains(&v), "{v}");
    }
    assert_eq!(inst.tolerance.abs, Some(3e-7));
}

#[test]
fn reduce_has_local_arg_shared_bytes_and_max_grid() {
    let spec = KernelSpec::load(examples().join("reduce/kernel.toml")).unwrap();
    let inst = spec.instantiate_default().unwrap();
    assert_eq!(inst.args[3], ProgramArg::Local);
    assert_eq!(inst.max_grid, Some(65536));
    assert_eq!(inst.shared_bytes(BlockSize::linear(256)).unwrap(), 1024);
    assert_eq!(inst.buffers[1].decl.compare, CompareMode::Sum);
    let t = KernelSpec::load(examples().join("transpose/kernel.toml")).unwrap();
    assert_eq!(t.grid, GridMode::Data);
    assert_eq!(t.blocks.as_ref().map(Vec::len), Some(3));
    assert_eq!(
        t.instantiate_default()
            .unwrap()
            .shared_bytes(BlockSize::linear(64))
            .unwrap(),
        0
    );
}

#[test]
fn inline_table_args_parse() {
    let args = "args = [{ buffer = \"u32\", name = \"a\", elements = \"n\", init = \"ramp\", written = true }]\n";
    let spec = KernelSpec::parse("t/kernel.toml", &format!("{args}{HEAD}"), scratch_dir()).unwrap();
    let inst = spec.instantiate_default().unwrap();
    assert_eq!(&inst.buffers[0].initial[4..8], &1u32.to_le_bytes());
}

#[test]
fn unknown_key_is_named_with_its_table_and_line() {
    let e = parse_err("[[args]]\nscalar = \"u32\"\nname = \"a\"\nvalue = 1\nvalu = 2\n");
    assert!(e.starts_with("t/kernel.toml: args[0]: line 10"), "{e}");
    assert!(e.contains("unknown field `valu`"), "{e}");
    assert!(!e.contains('\n'), "{e}");
    let e = parse_err("[check]\ntolerance = 1\n");
    assert!(
        e.contains("check: line") && e.contains("`tolerance`"),
        "{e}"
    );
    let e = parse_err("[sources.metal]\nfile = \"k.cu\"\n");
    assert!(
        e.contains("sources.metal: no API of this blocksweep") && e.contains("cuda, "),
        "{e}"
    );
}

#[test]
fn toml_syntax_error_has_line_and_column() {
    let e = parse_err("[[args]]\nbuffer = \"f32\"; name = \"x\"\n");
    assert!(e.contains("line 7, column"), "{e}");
}

#[test]
fn missing_source_file_names_file_and_key() {
    let text = HEAD.replace("k.cu", "nope.cu");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert_eq!(e.key, "sources.cuda.file");
    assert!(e.message.contains("nope.cu"), "{e}");
}

#[test]
fn no_sources_and_missing_entry_are_errors() {
    let text = "name = \"k\"\nwork = \"n\"\nsizes = { n = 1 }\n[sources]\n";
    let e = KernelSpec::parse("t/kernel.toml", text, scratch_dir()).unwrap_err();
    assert_eq!(e.key, "sources");
    let text = HEAD.replace(", entry = \"k\"", "");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert_eq!(e.key, "sources.cuda.entry");
    let text = format!("{HEAD}vulkan = {{ file = \"k.cu\" }}\n");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert!(e.message.contains(".comp or .glsl"), "{e}");
}

/// A CUDA source is CUDA C++ or PTX by its extension, as the provider declares; any other
/// extension is refused, naming both.
#[test]
fn a_cuda_source_is_cuda_cpp_or_ptx_by_its_extension() {
    let d = scratch_dir();
    std::fs::write(d.join("k.ptx"), ".visible .entry k() { ret; }").unwrap();
    std::fs::write(d.join("k.cuh"), "").unwrap();
    let out = "[[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\nwritten = true\n";
    let spec = |file: &str| format!("{}{out}", HEAD.replace("k.cu\"", file));
    let ptx = KernelSpec::parse("t/kernel.toml", &spec("k.ptx\""), &d);
    let sources = ptx.unwrap().sources;
    assert_eq!(
        sources.iter().map(|s| s.1.language).collect::<Vec<_>>(),
        [PTX]
    );
    let e = KernelSpec::parse("t/kernel.toml", &spec("k.cuh\""), &d);
    let e = e.unwrap_err();
    assert!(e.message.contains(".cu (CUDA C++) or .ptx (PTX)"), "{e}");
}

#[test]
fn unknown_element_type_lists_the_valid_ones() {
    let e = parse_err("[[args]]\nbuffer = \"f16\"\nname = \"x\"\nelements = \"n\"\n");
    assert_eq!(e, "t/kernel.toml: args[0].buffer: 'f16' is not an element type (i32, u32, i64, u64, f32, f64)");
}

#[test]
fn bad_init_is_named() {
    let e = parse_err("[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\nwritten = true\n[[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\ninit = \"randm\"\n");
    assert_eq!(
        e,
        "t/kernel.toml: args[1].init: 'randm' is not an init (random, zeros, ramp, constant)"
    );
    let e = parse_err(
        "[[args]]\nbuffer = \"u32\"\nname = \"x\"\nelements = \"n\"\ninit = { constant = 1.5 }\n",
    );
    assert!(
        e.contains("args[0].init.constant: 1.5 is not an integer"),
        "{e}"
    );
    let e = parse_err(
        "[[args]]\nbuffer = \"u32\"\nname = \"x\"\nelements = \"n\"\ninit = { constant = -1 }\n",
    );
    assert!(e.contains("-1 does not fit u32"), "{e}");
    let e = parse_err("[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\nseed = 3\n");
    assert!(
        e.contains("args[0].seed: applies to init = \"random\" only"),
        "{e}"
    );
}

#[test]
fn misplaced_and_kindless_args_are_errors() {
    let e = parse_err("[[args]]\nscalar = \"f32\"\nname = \"a\"\nvalue = 1.0\nwritten = true\n");
    assert!(e.contains("args[0].written: does not apply"), "{e}");
    let e = parse_err("[[args]]\nname = \"a\"\n");
    assert!(e.contains("exactly one of"), "{e}");
    let e = parse_err("[[args]]\nlocal = true\nname = \"t\"\n");
    assert!(e.contains("needs launch.shared_bytes"), "{e}");
    let e = parse_err("[[args]]\nscalar = \"f32\"\nname = \"a\"\nvalue = \"m * 2\"\n");
    assert!(e.contains("uses 'm', which is not a size (n)"), "{e}");
}

#[test]
fn overflowing_expression_names_key_and_values() {
    let spec = parse("[[args]]\nscalar = \"u32\"\nname = \"a\"\nvalue = 1\n[[args]]\nscalar = \"u32\"\nname = \"b\"\nvalue = 1\n[[args]]\nscalar = \"u32\"\nname = \"c\"\nvalue = 1\n[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n * n * n\"\nwritten = true\n").unwrap();
    let sizes = spec.with_size("n=4294967296").unwrap();
    let e = spec.instantiate(&sizes).unwrap_err().to_string();
    assert_eq!(
        e,
        "t/kernel.toml: args[3].elements: 'n * n * n' overflows 64 bits at n = 4294967296"
    );
    let timing = "[check]\ntiming_only = true\n";
    let body = format!("[[args]]\nscalar = \"u32\"\nname = \"a\"\nvalue = \"n * 8\"\n{timing}");
    let spec = parse(&body).unwrap();
    let e = spec
        .instantiate(&spec.with_size("1000000000").unwrap())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("args[0].value: 'n * 8' is 8000000000") && e.contains("does not fit u32"),
        "{e}"
    );
}

#[test]
fn with_size_forms_and_errors() {
    let spec = KernelSpec::load(examples().join("transpose/kernel.toml")).unwrap();
    assert_eq!(spec.sizes.to_string(), "height=3000,width=4000");
    let s = spec.with_size("640x480").unwrap();
    assert_eq!((s.get("width"), s.get("height")), (Some(640), Some(480)));
    let s = spec.with_size("height=10").unwrap();
    assert_eq!((s.get("width"), s.get("height")), (Some(4000), Some(10)));
    let e = spec.with_size("1000").unwrap_err().to_string();
    assert!(
        e.contains(
            "--size: '1000' does not fit this kernel's 2-D work: give WxH for width x height"
        ),
        "{e}"
    );
    assert!(spec
        .with_size("depth=3")
        .unwrap_err()
        .to_string()
        .contains("'depth' is not a size"));
    assert!(spec
        .with_size("64xq")
        .unwrap_err()
        .to_string()
        .contains("'q' is not a whole number"));
    let r = KernelSpec::load(examples().join("reduce/kernel.toml")).unwrap();
    let s = r.with_size("1_000").unwrap();
    assert_eq!((s.get("n"), s.get("slots")), (Some(1000), Some(65536)));
    assert!(r.with_size("3x4").is_err());
}

#[test]
fn zero_sized_buffer_and_bad_work_are_errors() {
    let spec = parse(
        "[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n - 1000\"\nwritten = true\n",
    )
    .unwrap();
    assert!(spec
        .instantiate_default()
        .unwrap_err()
        .to_string()
        .contains("'n - 1000' is 0"));
    let text = HEAD.replace("work = \"n\"", "work = \"m\"");
    let e = KernelSpec::parse("t/kernel.toml", &text, scratch_dir()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t/kernel.toml: work: 'm' is not in sizes (n=1000)"
    );
}

#[test]
fn a_spec_that_writes_nothing_checks_nothing_unless_it_says_so() {
    let x = "[[args]]\nbuffer = \"f32\"\nname = \"x\"\nelements = \"n\"\n";
    let e = parse_err(x);
    assert!(e.contains("args: no buffer is `written = true`"), "{e}");
    let timing = parse(&format!("{x}[check]\ntiming_only = true\n")).unwrap();
    assert!(timing.timing_only && timing.instantiate_default().unwrap().timing_only);
    let both = format!("{x}written = true\n[check]\ntiming_only = true\n");
    assert!(parse_err(&both).contains("check.timing_only: is true, but a buffer is"));
}

#[test]
fn nonfinite_outputs_are_errors_unless_allowed() {
    let y = "[[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\nwritten = true\n";
    assert!(!parse(y).unwrap().nonfinite_allowed);
    let allowed = parse(&format!("{y}[check]\nnonfinite = \"allowed\"\n")).unwrap();
    assert!(allowed.instantiate_default().unwrap().nonfinite_allowed);
    let e = parse_err(&format!("{y}[check]\nnonfinite = \"ok\"\n"));
    assert!(e.contains("check.nonfinite: 'ok' is neither"), "{e}");
}

#[test]
fn a_subgroup_size_is_a_power_of_two_up_to_128_named_when_it_is_not() {
    let out = "[[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\nwritten = true\n";
    let s = parse(&format!("[launch]\nsubgroup_size = 64\n{out}")).unwrap();
    assert_eq!(s.subgroup_size, Some(64));
    assert_eq!(s.instantiate_default().unwrap().subgroup_size, Some(64));
    let e = parse_err("[launch]\nsubgroup_size = 48\n");
    assert!(
        e.contains("launch.subgroup_size: 48 is not a power of two from 1 to 128"),
        "{e}"
    );
    let z = KernelSpec::load(examples().join("bugs/warp-sync-reduction/kernel.toml")).unwrap();
    assert_eq!(z.subgroup_size, Some(64));
}

#[test]
fn a_shape_has_the_instances_arguments_and_shared_memory_without_its_contents() {
    let spec = KernelSpec::load(examples().join("reduce/kernel.toml")).unwrap();
    let inst = spec.instantiate_default().unwrap();
    let shape = spec.shape(&spec.sizes).unwrap();
    assert_eq!(shape.args.len(), inst.args.len());
    for (s, i) in shape.args.iter().zip(&inst.args) {
        match (s, i) {
            (ProgramArg::Buffer { bytes: a, .. }, ProgramArg::Buffer { bytes: b, .. }) => {
                assert_eq!(a, b)
            }
            (ProgramArg::Scalar { ty: a, .. }, ProgramArg::Scalar { ty: b, .. }) => {
                assert_eq!(a, b)
            }
            (a, b) => assert_eq!(a, b),
        }
    }
    let b = BlockSize::linear(256);
    assert_eq!(
        shape.shared_bytes(b),
        u64::from(inst.shared_bytes(b).unwrap())
    );
    assert_eq!(shape.work, inst.work);
}

/// A tune gives its parameters as defines: a source whose language takes none (SPIR-V, as its
/// provider declares) is refused, naming the API's languages that do; GLSL is accepted.
#[test]
fn a_tuned_spec_needs_a_language_that_takes_defines() {
    let d = scratch_dir();
    std::fs::write(d.join("k.spv"), [0u8; 20]).unwrap();
    std::fs::write(d.join("k.comp"), "#version 450\nvoid main() {}").unwrap();
    let out = "[tune]\nK = [1, 2]\n[[args]]\nbuffer = \"f32\"\nname = \"y\"\nelements = \"n\"\nwritten = true\n";
    let spec = |file: &str| {
        let vulkan = format!("vulkan = {{ file = \"{file}\" }}\n");
        format!("{}{vulkan}{out}", HEAD)
    };
    let e = KernelSpec::parse("t/kernel.toml", &spec("k.spv"), &d).unwrap_err();
    assert_eq!(e.key, "sources.vulkan.file", "{e}");
    assert!(
        e.message.contains("is SPIR-V, which takes no defines")
            && e.message.contains("such as GLSL (.comp, .glsl)"),
        "{e}"
    );
    assert!(KernelSpec::parse("t/kernel.toml", &spec("k.comp"), &d).is_ok());
}
