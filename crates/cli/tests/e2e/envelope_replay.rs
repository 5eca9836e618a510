//! End to end: every command's JSON opens with the one envelope (docs/json-schema.md), and
//! `replay` shows a saved run (the committed H200 runs among them) with every column its
//! device had, on a machine without that device.

use crate::support::{available, bad_input, blocksweep, scratch, succeeds, succeeds_at, words};
use serde_json::Value;

/// The envelope's fields, in their order.
const ENVELOPE: &str = "tool version schema_version command date devices";

fn results(path: &str) -> String {
    format!("{}/../../docs/results/{path}", env!("CARGO_MANIFEST_DIR"))
}

/// The document's envelope checked: its fields first and in order, this blocksweep's schema,
/// the command named, a UTC date, the devices with text UUIDs. Returns the document.
fn enveloped(command: &str, text: &str, api_key: Option<&str>) -> Value {
    let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{command}: {e}: {text}"));
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(keys[..6], words(ENVELOPE), "{command}: {keys:?}");
    assert_eq!(
        v["tool"],
        format!("blocksweep {}", v["version"].as_str().unwrap())
    );
    assert_eq!(v["schema_version"], 5, "{command}");
    assert_eq!(v["command"], command);
    let date = v["date"].as_str().unwrap();
    assert!(
        date.len() == 20 && date.ends_with('Z') && date.as_bytes()[10] == b'T',
        "{date}"
    );
    let devices = v["devices"].as_array().unwrap();
    for d in devices {
        assert!(d["name"].is_string() && d["api"].is_string(), "{d}");
        assert!(
            d["uuid"].is_null() || d["uuid"].as_str().unwrap().len() == 36,
            "{d}"
        );
    }
    if let Some(key) = api_key {
        assert!(
            devices.iter().any(|d| d["api"] == key),
            "{command}: {devices:?}"
        );
    }
    v
}

#[test]
fn every_command_opens_with_the_envelope() {
    let devices = succeeds(&["devices", "--format", "json"]);
    enveloped("devices", &devices, None);
    for key in ["opencl", "vulkan"] {
        if !available(key) {
            continue;
        }
        let on = |args: &[&str]| {
            let mut a = args.to_vec();
            a.extend(["--backend", key, "--format", "json"]);
            succeeds(&a)
        };
        let limits = enveloped("limits", &on(&["limits"]), Some(key));
        let first = &limits["limits"][0];
        assert_eq!(first["device"]["api"], key);
        assert!(
            !first["guarantees"].as_array().unwrap().is_empty(),
            "{first}"
        );
        let validate = enveloped("validate", &on(&["validate"]), Some(key));
        assert!(validate["checks"].as_array().unwrap().len() > 5);
        let quick = ["--size", "96x64", "--reps", "2", "--warmups", "0"];
        let sweep = on(&[&["sweep", "--blocks", "32,64"][..], &quick].concat());
        let v = enveloped("sweep", &sweep, Some(key));
        assert_eq!(v["results"][0]["rows"].as_array().unwrap().len(), 2);
        let shapes = on(&[&["shapes", "--threads", "64"][..], &quick].concat());
        enveloped("shapes", &shapes, Some(key));
        let tail = ["tail", "--block", "64", "--waves", "waves:0.5..1:0.5"];
        enveloped("tail", &on(&[&tail[..], &quick].concat()), Some(key));
        let dir = scratch(&format!("envelope-{key}"));
        let (a, b) = (dir.join("a.json"), dir.join("b.json"));
        std::fs::write(&a, &sweep).unwrap();
        std::fs::write(&b, &sweep).unwrap();
        let files = [a.to_str().unwrap(), b.to_str().unwrap()];
        let compare = succeeds(&[&["compare", "--format", "json"][..], &files].concat());
        enveloped("compare", &compare, None);
    }
}

#[test]
fn an_h200_run_replays_with_every_column_here() {
    let file = results("h200-2026-12-01/call3/core/h200-2026-12-01.json");
    let s = succeeds_at("100", &["replay", &file]);
    assert!(
        s.starts_with(
            "Replay of a run measured on NVIDIA H200 (CUDA, Vulkan, OpenCL) on 2026-12-01"
        ),
        "{s}"
    );
    assert!(s.contains("nothing was measured now"), "{s}");
    let header = s
        .lines()
        .find(|l| l.starts_with("thr/blk"))
        .unwrap_or_else(|| panic!("no CUDA table: {s}"));
    for column in ["thr/blk", "warps", "idle", "blk/SM", "occ"] {
        assert!(header.contains(column), "{column}: {header}");
    }
    assert!(s.contains("\nAll APIs on one device\n"), "{s}");
    let md = succeeds(&["replay", &file, "--format", "markdown"]);
    assert!(
        md.starts_with("> Replay of a run measured on NVIDIA H200"),
        "{md}"
    );
}

#[test]
fn a_schema_2_run_and_a_fleet_replay_in_todays_schema() {
    let file = results("h200-2026-11-30-d/core/h200-2026-11-30.json");
    let s = succeeds(&["replay", &file, "--wide"]);
    assert!(s.contains("on 2026-11-30"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.starts_with("thr/blk") && l.contains("occ")),
        "{s}"
    );
    let out = blocksweep()
        .args(["replay", &file, "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let note = String::from_utf8_lossy(&out.stderr);
    assert!(
        note.starts_with("blocksweep: Replay of a run measured on"),
        "{note}"
    );
    let v = enveloped("sweep", &String::from_utf8_lossy(&out.stdout), Some("cuda"));
    assert_eq!(
        v["date"], "2026-11-30T17:38:49Z",
        "the date it was measured"
    );
    assert!(
        v["results"][0]["rows"][0]["verdict"].is_string(),
        "recomputed"
    );
    let csv = succeeds(&["replay", &file, "--format", "csv"]);
    assert!(
        csv.starts_with("api,device,block,threads,warps,idle,"),
        "{csv}"
    );
    let fleet = succeeds(&[
        "replay",
        &results("h200x2-2026-11-30/multi/x2-2026-11-30.json"),
    ]);
    assert!(
        fleet.contains("NVIDIA H200 (CUDA, Vulkan, OpenCL) and NVIDIA H200"),
        "{fleet}"
    );
    assert_eq!(fleet.matches("Answer\n").count(), 2, "{fleet}");
}

#[test]
fn replay_refuses_what_is_not_a_saved_sweep() {
    bad_input(
        &["replay", "/no/such/run.json"],
        "No such file or directory",
    );
    let dir = scratch("refused");
    let text = dir.join("text.json");
    std::fs::write(&text, "a table, not JSON\n").unwrap();
    bad_input(&["replay", text.to_str().unwrap()], "not JSON");
    let old = dir.join("schema1.json");
    std::fs::write(&old, r#"{"schema_version": 1, "results": []}"#).unwrap();
    bad_input(
        &["replay", old.to_str().unwrap()],
        "schema_version 1 is not supported",
    );
    let other = dir.join("devices.json");
    std::fs::write(&other, succeeds(&["devices", "--format", "json"])).unwrap();
    bad_input(
        &["replay", other.to_str().unwrap()],
        "the output of `blocksweep devices`, not of a sweep",
    );
    bad_input(&["replay"], "FILE");
}
