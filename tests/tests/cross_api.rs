//! Every available API computes the same pixels from the same frame, and each API's device
//! enumeration joins into physical devices without losing a device.

use blocksweep_core::conformance::{required, skip_unavailable};
use blocksweep_core::physical;
use blocksweep_core::verify::{verify, TOLERANCE};
use blocksweep_core::{
    Api, Backend, BlockSize, DeviceIdentity, Driver, Frame, Launch, OpenOptions, Stamps, Work,
};

fn driver(api: Api) -> &'static dyn Driver {
    *blocksweep_drivers::all()
        .iter()
        .find(|d| d.api() == api)
        .expect("every API is in the driver list")
}

fn apis() -> Vec<Api> {
    blocksweep_drivers::all().iter().map(|d| d.api()).collect()
}

fn probe(api: Api) -> Option<Vec<DeviceIdentity>> {
    let r = driver(api).probe().map_err(|e| e.message);
    match r {
        Ok(d) if !d.is_empty() => Some(d),
        Ok(_) => (!skip_unavailable(api, "no device")).then(Vec::new),
        Err(e) => (!skip_unavailable(api, &e)).then(Vec::new),
    }
}

fn open(d: &DeviceIdentity) -> Box<dyn Backend> {
    driver(d.api).open(d, &OpenOptions::default()).unwrap()
}

#[test]
fn all_apis_agree_pixel_for_pixel() {
    let frame = Frame::generate(333, 77, 11); // odd sizes: no launch divides them evenly
    let reference = frame.reference();
    let mut outputs: Vec<(Api, String, Vec<f32>)> = Vec::new();
    for api in apis() {
        let Some(devices) = probe(api) else { continue };
        for d in devices {
            let mut b = open(&d);
            b.upload(&frame).unwrap();
            b.poison_output().unwrap();
            let launch = Launch::linear(BlockSize::linear(96), 7);
            b.run_batch(Work::Kernel(launch), 1, Stamps::None).unwrap();
            let mut out = vec![0f32; frame.pixels() as usize];
            b.read_output(&mut out).unwrap();
            verify(&out, &reference).unwrap_or_else(|m| panic!("{api} on {}: {m:?}", d.name));
            outputs.push((api, d.name.clone(), out));
        }
    }
    for w in outputs.windows(2) {
        let worst = w[0]
            .2
            .iter()
            .zip(&w[1].2)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(
            worst <= 2.0 * TOLERANCE,
            "{} {} vs {} {}: {worst}",
            w[0].0,
            w[0].1,
            w[1].0,
            w[1].1
        );
    }
    for api in apis().into_iter().filter(|&a| required(a)) {
        assert!(
            outputs.iter().any(|o| o.0 == api),
            "{api} is required but produced no output"
        );
    }
}

#[test]
fn grouping_keeps_every_device() {
    let all: Vec<DeviceIdentity> = apis().into_iter().filter_map(probe).flatten().collect();
    let groups = physical::group(&all);
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
