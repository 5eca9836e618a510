//! Tests of the grid sweep's planning: wave ranges as typed, the wave of a block, the points of
//! each series and the slots-busy sawtooth.

use super::*;

#[test]
fn parses_ranges_in_thousandths() {
    let s: WaveSpec = "waves:0.5..4:0.1".parse().unwrap();
    assert_eq!((s.start, s.end, s.step), (500, 4000, 100));
    assert_eq!(s.points().len(), 36);
    assert_eq!(*s.points().last().unwrap(), 4000);
    assert_eq!(s.to_string(), "waves:0.5..4:0.1");
    let s: WaveSpec = " 1..2 ".parse().unwrap();
    assert_eq!(s.step, 100, "a tenth of a wave by default");
    assert_eq!(s.points(), (10..=20).map(|k| k * 100).collect::<Vec<_>>());
    let s: WaveSpec = "1.125".parse().unwrap();
    assert_eq!(s.points(), [1125]);
    let s: WaveSpec = ".5..1:.25".parse().unwrap();
    assert_eq!(s.points(), [500, 750, 1000]);
    assert_eq!(show_waves(1100), "1.1");
    assert_eq!(show_waves(4000), "4");
    assert_eq!(show_waves(1125), "1.125");
}

#[test]
fn rejects_nonsense_with_a_reason() {
    for (bad, why) in [
        ("", "empty"),
        ("waves:", "empty"),
        ("0..4", "at least one block"),
        ("4..1", "start is above its end"),
        ("1..4:0", "step 0"),
        ("1..4:0.0", "step 0"),
        ("abc", "not a number"),
        ("-1..4", "not a number"),
        ("1..4:0.0001", "at most 3 decimals"),
        ("1e3", "not a number"),
        ("1..2000", "at most 1000"),
        ("0.001..1000:0.001", "points"),
        ("1...4", "start is above its end"),
        ("18446744073709551615", "not a number"),
    ] {
        let e = bad.parse::<WaveSpec>().unwrap_err();
        assert!(e.contains(why), "{bad:?}: {e}");
    }
}

fn h200_wave() -> Wave {
    let r = Residency {
        blocks_per_mp: 8,
        source: "cuOccupancyMaxActiveBlocksPerMultiprocessor".into(),
    };
    Wave::new(BlockSize::linear(256), Some(&r), 132, DeviceKind::Gpu)
}

#[test]
fn waves_become_grids() {
    let w = h200_wave();
    assert_eq!(w.blocks, 1056);
    assert_eq!(w.grid(1000), 1056);
    assert_eq!(w.grid(1100), 1162); // 1161.6 rounds up
    assert_eq!(w.grid(500), 528);
    assert_eq!(w.grid(1), 1, "never zero blocks");
    let cpu = Wave::new(BlockSize::linear(64), None, 2, DeviceKind::Cpu);
    assert_eq!(cpu.blocks, 2);
    assert!(cpu.source.contains("CPU"));
    // A residency of 0 (the block does not fit) still gives a launchable grid.
    let none = Residency {
        blocks_per_mp: 0,
        source: "model".into(),
    };
    let w0 = Wave::new(BlockSize::linear(2048), Some(&none), 4, DeviceKind::Gpu);
    assert_eq!(w0.blocks, 4);
}

#[test]
fn series_plans_same_grids_and_the_data_sized_frame_follows_the_grid() {
    let w = h200_wave();
    let spec: WaveSpec = "0.5..4:0.1".parse().unwrap();
    let a = plan(&spec, &w, WaveKernel::GridStride, (3840, 2160));
    let b = plan(&spec, &w, WaveKernel::OnePerThread, (3840, 2160));
    assert_eq!(a.len(), 36);
    assert_eq!(
        a.iter().map(|p| p.grid).collect::<Vec<_>>(),
        b.iter().map(|p| p.grid).collect::<Vec<_>>()
    );
    assert!(a.iter().all(|p| p.pixels() == 3840 * 2160));
    for p in &b {
        assert_eq!(p.pixels(), p.grid * 256, "one pixel per thread");
    }
    // Rounded to blocks, the real waves are close to the asked ones.
    assert!(a
        .iter()
        .all(|p| (p.waves * 1000.0 - p.asked as f64).abs() < 1.0));
    // On a 2-block wave, 0.5..1:0.1 rounds to grids 1, 1, 1, 2, 2, 2: measured once each.
    let cpu = Wave::new(BlockSize::linear(64), None, 2, DeviceKind::Cpu);
    let spec: WaveSpec = "0.5..1".parse().unwrap();
    let p = plan(&spec, &cpu, WaveKernel::GridStride, (64, 64));
    assert_eq!(p.iter().map(|p| p.grid).collect::<Vec<_>>(), [1, 2]);
}

#[test]
fn the_sawtooth_model() {
    assert_eq!(slots_busy(1.0), 1.0);
    assert!((slots_busy(1.1) - 0.55).abs() < 1e-12);
    assert_eq!(slots_busy(2.0), 1.0);
    assert!((slots_busy(0.5) - 0.5).abs() < 1e-12);
    assert_eq!(slots_busy(0.0), 0.0);
}
