//! Every available API computes the same pixels from the same frame, and each API's device
//! enumeration joins into physical devices without losing a device.
//!
//! One trial per pair of devices (`same_pixels::<api>#<i> <name> vs <api>#<j> <name>`); an API
//! without a device shows as an ignored `same_pixels::<api>` with the reason, or, when
//! BLOCKSWEEP_REQUIRE names it, as a failing `driver_available::<api>`.

use std::process::ExitCode;

use blocksweep_conformance::{probe, skip, Harness};
use blocksweep_core::builtin;
use blocksweep_core::physical;
use blocksweep_core::verify::verify;
use blocksweep_core::{
    Backend, BlockSize, DeviceIdentity, Frame, KernelVariant, Launch, OpenOptions, Provider,
    Stamps, Work,
};

fn provider(d: &DeviceIdentity) -> &'static dyn Provider {
    *blocksweep_apis::all()
        .iter()
        .find(|x| x.api() == d.api)
        .expect("every API is in the provider list")
}

fn label(d: &DeviceIdentity) -> String {
    format!("{}#{} {}", d.api.key(), d.index, d.name)
}

/// The frame's output on `d`, verified against the CPU reference.
fn output(d: &DeviceIdentity, frame: &Frame) -> Vec<f32> {
    let mut b: Box<dyn Backend> = provider(d)
        .open(d, &OpenOptions::default())
        .unwrap_or_else(|e| panic!("open {}: {e}", label(d)));
    builtin::load(b.as_mut(), KernelVariant::GridStride, frame).unwrap();
    builtin::poison(b.as_mut(), frame.pixels()).unwrap();
    let launch = Launch::linear(BlockSize::linear(96), 7);
    b.run_batch(Work::Kernel(launch), 1, Stamps::None).unwrap();
    let mut out = vec![0f32; frame.pixels() as usize];
    builtin::read(b.as_mut(), &mut out).unwrap();
    verify(&out, &frame.reference()).unwrap_or_else(|m| panic!("{}: {m:?}", label(d)));
    out
}

fn same_pixels(a: &DeviceIdentity, b: &DeviceIdentity) {
    let frame = Frame::generate(333, 77, 11); // odd sizes: no launch divides them evenly
    let (x, y) = (output(a, &frame), output(b, &frame));
    let worst = x
        .iter()
        .zip(&y)
        .map(|(p, q)| (p - q).abs())
        .fold(0f32, f32::max);
    // Both outputs passed `verify`, so 2 x TOLERANCE could not fail. The bound here is the
    // arithmetic's own: inputs, products and sums lie in [0, 1), where half an ulp is at most
    // 2^-25, and each API rounds at most five times (three products, two sums; a fused
    // multiply-add rounds less), so two correct APIs differ by at most 10 x 2^-25 (3.0e-7),
    // a third of TOLERANCE: a wrong weight or a stale pixel that verify admits fails here.
    let bound = 10.0 * 2f32.powi(-25);
    assert!(
        worst <= bound,
        "{} vs {}: pixels differ by {worst}, more than rounding explains ({bound})",
        label(a),
        label(b)
    );
}

fn grouping_keeps_every_device(all: &[DeviceIdentity]) {
    let groups = physical::group(all);
    let members: usize = groups.iter().map(|g| g.members.len()).sum();
    assert_eq!(members, all.len());
    for g in &groups {
        let mut apis = g.apis();
        apis.dedup();
        assert_eq!(
            apis.len(),
            g.members.len(),
            "an API appears twice in one physical device: {g:?}"
        );
    }
}

fn main() -> ExitCode {
    let mut h = Harness::new();
    let mut all: Vec<DeviceIdentity> = Vec::new();
    for &d in blocksweep_apis::all() {
        match probe(d) {
            Ok(devices) => all.extend(devices),
            Err(why) => h = h.unavailable(d.api(), &why, &["same_pixels"]),
        }
    }
    for (i, a) in all.iter().enumerate() {
        for b in &all[i + 1..] {
            let (a, b) = (a.clone(), b.clone());
            h = h.test(
                format!("same_pixels::{} vs {}", label(&a), label(&b)),
                move || same_pixels(&a, &b),
            );
        }
    }
    if let [only] = all.as_slice() {
        let name = format!("same_pixels::{}", label(only));
        h = h.test(name, || skip("only one device: nothing to compare it with"));
    }
    let devices = all.clone();
    h.test("grouping_keeps_every_device", move || {
        grouping_keeps_every_device(&devices)
    })
    .run()
}
