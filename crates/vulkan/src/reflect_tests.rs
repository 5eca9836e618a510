//! reflect.rs's unit tests.

use super::*;

fn words(spirv: &[u8]) -> Vec<u32> {
    ash::util::read_spv(&mut std::io::Cursor::new(spirv)).unwrap()
}

/// The push layout of scalars of these types, in order.
fn scalars(types: &[blocksweep_core::ScalarType]) -> PushLayout {
    let args: Vec<_> = types
        .iter()
        .map(|&ty| blocksweep_core::ProgramArg::Scalar {
            ty,
            bytes: vec![0; ty.size()],
        })
        .collect();
    crate::kernel::push_layout(&args)
}

fn scalars_of(args: &[blocksweep_core::ProgramArg]) -> PushLayout {
    crate::kernel::push_layout(args)
}

#[test]
fn the_grayscale_shader_is_read_right() {
    use blocksweep_core::ScalarType::{U32, U64};
    let r = reflect(&words(crate::SPIRV)).unwrap();
    assert_eq!(r.entry_points, ["main"]);
    assert_eq!(r.storage, (0..4).map(|b| (0, b)).collect());
    assert!(r.uniform.is_empty() && r.arrays.is_empty());
    // The core's u64 n, read as a uvec2.
    assert_eq!(r.push_constants, Some(Some(8)));
    assert_eq!(r.push_members, [(0, Some(8))]);
    assert!((0..3).all(|i| r.spec_ids.contains(&i)), "{:?}", r.spec_ids);
    assert!(
        !r.spec_ids.contains(&3),
        "no shared memory: {:?}",
        r.spec_ids
    );
    assert_eq!(r.check("main", 4, &scalars(&[U64])), Ok(()));
    let e = r.check("main", 3, &scalars(&[U64])).unwrap_err();
    assert_eq!(
        e,
        "the shader binds 4 storage buffers, the spec declares 3 buffers"
    );
    assert!(r
        .check("grayscale", 4, &scalars(&[U64]))
        .unwrap_err()
        .contains("`grayscale`"));
    assert!(r
        .check("main", 4, &scalars(&[]))
        .unwrap_err()
        .contains("no scalars"));
    // An 8-byte block where the spec has a u64 and a u32: smaller, named both ways.
    let e = r.check("main", 4, &scalars(&[U64, U32])).unwrap_err();
    assert!(e.contains("is 8 bytes, smaller than the spec's"), "{e}");
    assert!(e.contains("argument 0 (u64) at 0"), "{e}");
    assert!(
        e.contains("the shader's block has member 0 at 0 (8 bytes)"),
        "{e}"
    );
}

#[test]
fn the_builtins_take_the_cores_arguments() {
    for k in blocksweep_core::KernelVariant::ALL {
        let args = blocksweep_core::builtin::args(k, 16, 4);
        let buffers = args.iter().filter(|a| a.is_buffer()).count();
        let code = crate::builtin::source(k).code;
        let r = reflect(&words(&code)).unwrap();
        assert_eq!(
            r.check("main", buffers, &scalars_of(&args)),
            Ok(()),
            "{k:?}"
        );
        // Only the shared-memory kernel sizes an array by the launch.
        assert_eq!(
            r.spec_ids.contains(&3),
            k == blocksweep_core::KernelVariant::SharedProbe
        );
    }
}

#[test]
fn a_push_block_of_another_size_and_bad_bindings_are_named() {
    use blocksweep_core::ScalarType::{F32, U32, U64};
    let mut r = reflect(&words(crate::SPIRV_2D)).unwrap();
    assert_eq!(r.push_constants, Some(Some(8)));
    let e = r.check("main", 4, &scalars(&[U32])).unwrap_err();
    assert!(e.contains("is 8 bytes, larger than the spec's"), "{e}");
    // Two 4-byte members at 0 and 4 against (f32, u64): the second lies in the padding.
    r.push_constants = Some(Some(16));
    let e = r.check("main", 4, &scalars(&[F32, U64])).unwrap_err();
    assert!(
        e.contains("member 1 (offset 4, 4 bytes) lies in the padding"),
        "{e}"
    );
    // Both layouts named: the shader's members and the spec's scalars.
    assert!(
        e.contains("the shader's block has member 0 at 0 (4 bytes), member 1 at 4 (4 bytes)"),
        "{e}"
    );
    assert!(e.contains("argument 1 (u64) at 8"), "{e}");
    r.push_constants = Some(Some(8));
    r.storage.remove(&(0, 0));
    r.storage.insert((0, 7));
    let two = scalars(&[U32, U32]);
    assert!(r
        .check("main", 4, &two)
        .unwrap_err()
        .contains("[1, 2, 3, 7]"));
    r.storage.insert((1, 0));
    assert!(r.check("main", 5, &two).unwrap_err().contains("set 1"));
}

#[test]
fn static_workgroup_arrays_are_counted_and_spec_sized_ones_are_not() {
    // The shared-memory probe sizes its array by specialisation constant 3.
    let r = reflect(&words(crate::SPIRV_SHARED)).unwrap();
    assert_eq!(r.workgroup_bytes, 0);
}

#[test]
fn non_spirv_is_refused() {
    assert!(reflect(&[1, 2, 3]).unwrap_err().contains("magic"));
    assert!(reflect(&[MAGIC.swap_bytes(), 0, 0, 0, 0])
        .unwrap_err()
        .contains("big-endian"));
    // An instruction claiming more words than remain.
    assert!(reflect(&[MAGIC, 0, 0, 0, 0, 9 << 16 | 15])
        .unwrap_err()
        .contains("past"));
}
