//! Building a kernel: a WGSL source (a tune's parameters appended as `const` declarations),
//! read by naga for what the contract needs (the storage buffers and the uniform block of
//! group 0, the override constants, the entry point's workgroup size and static workgroup
//! storage), checked against the spec's arguments before wgpu builds anything.

use blocksweep_core::program::ScalarType;
use blocksweep_core::{ProgramArg, ProgramSource};

use crate::error::{WebGpuError, WebGpuResult};

/// The override ids of the contract: the workgroup size in x, y, z, and the shared bytes.
pub(crate) const BLOCK_IDS: [u16; 3] = [0, 1, 2];
pub(crate) const SHARED_ID: u16 = 3;

/// What a WGSL kernel declares, as far as binding and launching it go.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reflection {
    /// Group 0's storage buffers by binding: (binding, written by the shader).
    pub storage: Vec<(u32, bool)>,
    /// Group 0's uniform block: its binding and its members' (offset, size).
    pub uniform: Option<(u32, Vec<(u32, u32)>)>,
    /// The override ids declared.
    pub overrides: Vec<u16>,
    /// The entry point's workgroup size where no override sets it.
    pub fixed_size: Option<[u32; 3]>,
    /// Workgroup storage of constant size, in bytes.
    pub workgroup_bytes: u64,
}

/// The text wgpu builds: the source, then each `-DNAME=VALUE` option as `const NAME = VALUE;`
/// (at the end, so the source's own line numbers stay as written).
pub(crate) fn text(source: &ProgramSource) -> WebGpuResult<String> {
    if source.language != crate::WGSL {
        return Err(WebGpuError::build(
            &source.origin,
            format!("WebGPU builds WGSL, not {}", source.language),
        ));
    }
    let mut text = source.text();
    for option in &source.options {
        let Some(define) = option.strip_prefix("-D").filter(|d| !d.is_empty()) else {
            return Err(WebGpuError::build(
                &source.origin,
                format!("option '{option}': WGSL takes only -DNAME=VALUE (as a const)"),
            ));
        };
        let (name, value) = define.split_once('=').unwrap_or((define, "1"));
        text.push_str(&format!("\nconst {name} = {value};"));
    }
    Ok(text)
}

/// Reads `text` with naga: the entry point `entry` and what the contract needs of it.
pub(crate) fn reflect(text: &str, entry: &str, origin: &str) -> WebGpuResult<Reflection> {
    let module = naga::front::wgsl::parse_str(text)
        .map_err(|e| WebGpuError::build(origin, e.emit_to_string_with_path(text, origin)))?;
    let Some(ep) = module.entry_points.iter().find(|e| e.name == entry) else {
        let names: Vec<&str> = module
            .entry_points
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        return Err(WebGpuError::build(
            origin,
            format!("no entry point '{entry}' (it has: {})", names.join(", ")),
        ));
    };
    if ep.stage != naga::ShaderStage::Compute {
        return Err(WebGpuError::build(
            origin,
            format!("'{entry}' is not a @compute entry point"),
        ));
    }
    let mut storage = Vec::new();
    let mut uniform = None;
    let mut workgroup_bytes = 0u64;
    let gctx = module.to_ctx();
    for (_, var) in module.global_variables.iter() {
        let ty = &module.types[var.ty];
        match (var.space, var.binding.as_ref()) {
            (naga::AddressSpace::Storage { access }, Some(b)) if b.group == 0 => {
                storage.push((b.binding, access.contains(naga::StorageAccess::STORE)));
            }
            (naga::AddressSpace::Uniform, Some(b)) if b.group == 0 => {
                let members = match &ty.inner {
                    naga::TypeInner::Struct { members, .. } => members
                        .iter()
                        .map(|m| (m.offset, module.types[m.ty].inner.size(gctx)))
                        .collect(),
                    other => vec![(0, other.size(gctx))],
                };
                uniform = Some((b.binding, members));
            }
            (naga::AddressSpace::WorkGroup, _) => {
                if let naga::TypeInner::Array {
                    size: naga::ArraySize::Pending(_),
                    ..
                } = ty.inner
                {
                    continue; // sized by an override: the launch's shared bytes
                }
                workgroup_bytes += u64::from(ty.inner.size(gctx));
            }
            _ => {}
        }
    }
    storage.sort_unstable();
    let overrides = module.overrides.iter().filter_map(|(_, o)| o.id).collect();
    let fixed_size = ep
        .workgroup_size_overrides
        .is_none()
        .then_some(ep.workgroup_size);
    Ok(Reflection {
        storage,
        uniform,
        overrides,
        fixed_size,
        workgroup_bytes,
    })
}

/// One scalar in the uniform block: its argument, offset and bytes.
pub(crate) type Slot = (usize, u32, u32);

/// Where each scalar of `args` lies in the uniform block: (argument, offset, bytes), each
/// aligned to its own size in argument order (a u64 or i64 is a `vec2<u32>`/`vec2<i32>`), and
/// the block's size rounded up to 16 bytes.
pub(crate) fn uniform_layout(args: &[ProgramArg], origin: &str) -> WebGpuResult<(Vec<Slot>, u32)> {
    let mut at = 0u32;
    let mut layout = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let ProgramArg::Scalar { ty, .. } = arg else {
            continue;
        };
        if *ty == ScalarType::F64 {
            return Err(WebGpuError::build(
                origin,
                format!("argument {i} is an f64: WGSL has no 64-bit float"),
            ));
        }
        let size = ty.size() as u32;
        at = at.next_multiple_of(size);
        layout.push((i, at, size));
        at += size;
    }
    Ok((layout, at.next_multiple_of(16).max(16)))
}

/// Checks `refl` against the spec's arguments: buffer `k` at binding `k` of group 0, the
/// scalars one uniform block at the binding after them laid out as [`uniform_layout`] says.
pub(crate) fn check_args(refl: &Reflection, args: &[ProgramArg], origin: &str) -> WebGpuResult<()> {
    let buffers = args.iter().filter(|a| a.is_buffer()).count() as u32;
    let bindings: Vec<u32> = refl.storage.iter().map(|s| s.0).collect();
    let want: Vec<u32> = (0..buffers).collect();
    if bindings != want {
        return Err(WebGpuError::build(
            origin,
            format!(
                "the shader's storage buffers of @group(0) are at bindings {bindings:?}; the spec's {buffers} buffers take bindings {want:?} (one per buffer argument, in order)"
            ),
        ));
    }
    let (layout, _) = uniform_layout(args, origin)?;
    let stated = describe(&layout, args);
    match (&refl.uniform, layout.is_empty()) {
        (None, true) => Ok(()),
        (None, false) => Err(WebGpuError::build(
            origin,
            format!("the shader has no var<uniform> at @group(0) @binding({buffers}); the spec's scalars need one: {stated}"),
        )),
        (Some((b, _)), true) => Err(WebGpuError::build(
            origin,
            format!("the shader has a var<uniform> at @binding({b}), but the spec gives no scalars"),
        )),
        (Some((b, members)), false) => {
            let ours: Vec<(u32, u32)> = layout.iter().map(|&(_, o, s)| (o, s)).collect();
            if *b != buffers || *members != ours {
                let theirs: Vec<String> =
                    members.iter().map(|(o, s)| format!("{s} bytes at {o}")).collect();
                return Err(WebGpuError::build(
                    origin,
                    format!(
                        "the shader's uniform block at @binding({b}) has {}; the spec's scalars, at @binding({buffers}), take {stated} (in argument order, each aligned to its size; a u64 is a vec2<u32>)",
                        theirs.join(", ")
                    ),
                ));
            }
            Ok(())
        }
    }
}

/// "argument 2 (f32) at 0, argument 3 (u64) at 8".
fn describe(layout: &[(usize, u32, u32)], args: &[ProgramArg]) -> String {
    let parts: Vec<String> = layout
        .iter()
        .map(|&(i, o, _)| match &args[i] {
            ProgramArg::Scalar { ty, .. } => format!("argument {i} ({ty}) at {o}"),
            _ => format!("argument {i} at {o}"),
        })
        .collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAXPY: &str = "
        @id(0) override bx: u32 = 64u;
        @group(0) @binding(0) var<storage, read> x: array<f32>;
        @group(0) @binding(1) var<storage, read_write> y: array<f32>;
        struct P { a: f32, n: vec2<u32> }
        @group(0) @binding(2) var<uniform> p: P;
        var<workgroup> tile: array<f32, 64>;
        @compute @workgroup_size(bx) fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            tile[id.x % 64u] = x[id.x];
            y[id.x] = p.a * tile[id.x % 64u] + y[id.x];
        }";

    fn saxpy_args(n_type: ScalarType) -> Vec<ProgramArg> {
        let s = |ty: ScalarType| ProgramArg::Scalar {
            ty,
            bytes: vec![0; ty.size()],
        };
        vec![
            ProgramArg::buffer(64),
            ProgramArg::buffer(64),
            s(ScalarType::F32),
            s(n_type),
        ]
    }

    #[test]
    fn a_kernel_is_read_as_the_contract_needs() {
        let r = reflect(SAXPY, "main", "saxpy.wgsl").unwrap();
        assert_eq!(r.storage, vec![(0, false), (1, true)]);
        assert_eq!(r.uniform, Some((2, vec![(0, 4), (8, 8)])));
        assert_eq!(
            (r.overrides.as_slice(), r.fixed_size, r.workgroup_bytes),
            (&[0u16][..], None, 256)
        );
        check_args(&r, &saxpy_args(ScalarType::U64), "saxpy.wgsl").unwrap();
    }

    #[test]
    fn a_uniform_block_unlike_the_scalars_is_refused_naming_both() {
        let r = reflect(SAXPY, "main", "saxpy.wgsl").unwrap();
        let e = check_args(&r, &saxpy_args(ScalarType::U32), "saxpy.wgsl").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("4 bytes at 0, 8 bytes at 8"), "{text}");
        assert!(text.contains("argument 3 (u32) at 4"), "{text}");
        assert_eq!(e.kind(), blocksweep_core::ErrorKind::Build);
    }

    #[test]
    fn wgsl_errors_name_the_file_and_line() {
        let e = reflect("fn main( {", "main", "bad.wgsl")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bad.wgsl"), "{e}");
        let e = reflect(SAXPY, "other", "k.wgsl").unwrap_err().to_string();
        assert!(e.contains("no entry point 'other' (it has: main)"), "{e}");
    }

    #[test]
    fn defines_become_consts_after_the_source() {
        let src = ProgramSource {
            language: crate::WGSL,
            code: b"fn f() {}".to_vec(),
            entry: "main".into(),
            origin: "k.wgsl".into(),
            options: vec!["-DTILE=16".into(), "-DFAST".into()],
        };
        assert_eq!(
            text(&src).unwrap(),
            "fn f() {}\nconst TILE = 16;\nconst FAST = 1;"
        );
    }

    #[test]
    fn f64_scalars_are_refused() {
        let args = [ProgramArg::Scalar {
            ty: ScalarType::F64,
            bytes: vec![0; 8],
        }];
        assert!(uniform_layout(&args, "k")
            .unwrap_err()
            .to_string()
            .contains("no 64-bit float"));
    }
}
