//! Every command's real JSON against its JSON Schema in docs/schemas, with the jsonschema crate:
//! each command run here on the CPU drivers, and `replay` and `compare` on the committed H200
//! runs. Then docs/json-schema.md against the schemas: every field it documents is a property
//! there, and every property is documented.

use std::collections::BTreeSet;

use crate::support::schemas::{conforms, read, repo, schemas, violations};
use crate::support::{available_apis, succeeds, words};
use serde_json::Value;

const QUICK: &str = "--size 96x64 --reps 2 --warmups 0";

#[test]
fn every_command_run_here_matches_its_schema() {
    let apis = available_apis();
    let json = |line: &str| succeeds(&[words(line), words("--format json")].concat());
    conforms("devices", &json("devices"));
    conforms("apis", &json("apis"));
    if apis.is_empty() {
        return;
    }
    let backend = |cmd: &str| match apis.len() {
        1 => json(&format!("{cmd} --backend {}", apis[0])),
        _ => json(&format!("{cmd} --backend all")),
    };
    let limits = conforms("limits", &backend("limits"));
    let unit = &limits["limits"][0]["limits"]["max_threads_per_block"]["unit"];
    assert_eq!(unit, "threads", "{limits}");
    let validate = conforms("validate", &backend("validate"));
    // A user's kernel's validate names it and the sizes it launched at.
    let saxpy = format!(
        "{}/../../examples/kernels/saxpy/kernel.toml",
        env!("CARGO_MANIFEST_DIR")
    );
    let theirs = conforms(
        "validate",
        &backend(&format!("validate --kernel {saxpy} --size 4096")),
    );
    assert!(
        theirs["kernel"]
            .as_str()
            .unwrap_or_default()
            .starts_with("saxpy ("),
        "{theirs}"
    );
    let targeted = conforms(
        "validate",
        &backend("validate --target webgpu,cuda-cc-9.0,amd-rdna3"),
    );
    assert_eq!(targeted["targets"]["rows"].as_array().unwrap().len(), 12);
    conforms(
        "limits",
        &backend("limits --target roadmap-2026,cuda-cc-7.5"),
    );
    let cost = conforms(
        "launch-cost",
        &backend("launch-cost --dispatches 50 --round-trips 5"),
    );
    assert_eq!(
        cost["groups"][0]["costs"].as_array().unwrap().len(),
        apis.len()
    );
    let checks = validate["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["outcome"]["kind"].is_string()));
    let sweep = backend(&format!("sweep --blocks 32,64 {QUICK}"));
    let v = conforms("sweep", &sweep);
    let targeted = backend(&format!("sweep --blocks 32,512 --target webgpu {QUICK}"));
    let t = conforms("sweep", &targeted);
    assert_eq!(t["targets"]["answer"]["launch_everywhere"][0], "32", "{t}");
    assert_eq!(
        v["answer"]["best"].as_array().unwrap().len(),
        apis.len(),
        "{v}"
    );
    // A tune (a grid list): the sweep's document, under the one schema; its measurements and
    // answer are a sweep's, its search beside them.
    let tune = backend(&format!(
        "sweep --blocks 32,64 --grid 1w,data --no-cache {QUICK}"
    ));
    let t = conforms("sweep", &tune);
    assert_eq!(t["command"], "tune", "{t}");
    assert_eq!(t["search"]["space"], 4, "{t}");
    assert_eq!(
        t["measurements"].as_array().unwrap().len(),
        4 * apis.len(),
        "{t}"
    );
    for doc in [&v, &t] {
        let m = &doc["measurements"][0];
        assert!(m["config"]["block"]["x"].is_u64() && m["outcome"]["kind"].is_string());
        assert!(
            doc["answer"]["best"][0]["config"]["grid"].is_string(),
            "{doc}"
        );
    }
    conforms("shapes", &backend(&format!("shapes --threads 64 {QUICK}")));
    let tail = format!("tail --block 64 --waves waves:0.5..1:0.25 {QUICK}");
    conforms("tail", &backend(&tail));
    let all = json(&format!("sweep --device all --blocks 32 {QUICK}"));
    conforms("sweep", &all);
    let dir = crate::support::scratch("schemas");
    let file = dir.join("run.json");
    std::fs::write(&file, &sweep).unwrap();
    let f = file.to_str().unwrap();
    conforms("replay", &succeeds(&["replay", f, "--format", "json"]));
    let compare = conforms("compare", &succeeds(&["compare", f, f, "--format", "json"]));
    assert_eq!(
        compare["devices"], v["devices"],
        "compare names the devices measured"
    );
}

/// Every committed sweep (schemas 2 to 4, one device or a fleet, built-in or a user's kernel)
/// and every committed tune (schema 4's `tunes`) replays as a document of today's schema.
#[test]
fn every_committed_run_replays_and_compares_within_its_schema() {
    let mut runs = Vec::new();
    let mut tunes = 0;
    let mut stack = vec![repo().join("docs/results")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let Ok(v) = serde_json::from_str::<Value>(&std::fs::read_to_string(&path).unwrap())
                else {
                    continue;
                };
                // A committed tune (the H200's, from call14 on) replays in the one shape.
                if v["command"] == "tune" {
                    tunes += 1;
                    runs.push(path);
                    continue;
                }
                let sweep = v["command"].is_null() || v["command"] == "sweep";
                // Schema 1 (the first H200 run) is no longer read, and says so.
                if v["schema_version"].as_u64().is_some_and(|n| n >= 2) && sweep {
                    runs.push(path);
                }
            }
        }
    }
    runs.sort();
    assert!(runs.len() > 50, "{runs:?}");
    assert!(tunes >= 3, "the H200's tune files: {tunes}");
    for run in &runs {
        let f = run.to_str().unwrap();
        let out = crate::support::blocksweep()
            .args(["replay", f, "--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{f}: {}",
            crate::support::stderr(&out)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let bad = violations("replay", &doc);
        assert!(bad.is_empty(), "{f}: {}", bad.join("\n"));
        assert_eq!(doc["schema_version"], 5, "{f}");
    }
    // Schema 4's tunes merged by `compare` are one document of today's schema.
    let tune = |name: &str| {
        let p = repo().join(format!(
            "docs/results/h200-2026-12-02/call14/tune/{name}.json"
        ));
        p.to_str().unwrap().to_string()
    };
    let (a, b) = (tune("reduce-elems"), tune("reduce-elems-cached"));
    let merged = conforms("sweep", &succeeds(&["compare", &a, &b, "--format", "json"]));
    assert_eq!(merged["command"], "tune");
    assert_eq!(merged["answer"]["best"].as_array().unwrap().len(), 3);
    let core = [
        "h200-2026-12-01/call3/core/h200-2026-12-01.json",
        "h200-2026-11-30-d/core/h200-2026-11-30.json",
        "h200x2-2026-11-30/multi/x2-2026-11-30.json",
    ];
    let files: Vec<String> = core
        .iter()
        .map(|p| format!("{}/docs/results/{p}", repo().display()))
        .collect();
    let mut args = vec!["compare", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let v = conforms("compare", &succeeds(&args));
    let uuids: BTreeSet<&str> = v["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["uuid"].as_str().unwrap())
        .collect();
    assert_eq!(
        uuids.len(),
        4,
        "one H200, another, and the fleet's two: {uuids:?}"
    );
}

/// The schemas are no rubber stamp: the special cases a script used to meet are refused.
#[test]
fn the_schemas_refuse_the_old_special_cases() {
    let file = repo().join("docs/results/h200-2026-12-01/call3/core/h200-2026-12-01.json");
    let mut sweep: Value = serde_json::from_str(&succeeds(&[
        "replay",
        file.to_str().unwrap(),
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(violations("sweep", &sweep).is_empty());
    assert_eq!(
        sweep["answer"]["best"][0]["config"]["block"]["x"], 64,
        "CUDA's best"
    );
    sweep.as_object_mut().unwrap().remove("answer");
    assert!(
        !violations("sweep", &sweep).is_empty(),
        "a sweep without an answer"
    );
    // Schema 4's tune (its reports under `tunes`, their `entries`) is not today's shape.
    let old_tune = read(&repo().join("docs/results/h200-2026-12-02/call14/tune/reduce-elems.json"));
    assert!(
        !violations("sweep", &old_tune).is_empty(),
        "schema 4's tune"
    );
    let mut doc = serde_json::json!({
        "tool": "blocksweep 0.1.0", "version": "0.1.0", "schema_version": 5,
        "command": "validate", "date": "2026-12-02T00:00:00Z", "devices": [],
        "checks": [{ "api": "cuda", "limits_say": null, "outcome": { "kind": "verified" },
            "holds": true,
            "assumption": { "claim": "c", "expects": "runs", "guarantee": "g", "launch": {
                "block": { "x": 1, "y": 1, "z": 1 }, "grid": { "x": 1, "y": 1 } } } }]
    });
    assert!(violations("validate", &doc).is_empty());
    for old in [
        serde_json::json!("ran"),
        serde_json::json!({"rejected": {"message": "m"}}),
    ] {
        doc["checks"][0]["outcome"] = old;
        assert!(!violations("validate", &doc).is_empty(), "{doc}");
    }
    doc["checks"][0].as_object_mut().unwrap().remove("outcome");
    assert!(
        !violations("validate", &doc).is_empty(),
        "an outcome never absent"
    );
}

/// The field names docs/json-schema.md documents: the first column of its field tables (those
/// headed `| field |`) and the keys of its examples (`"name":`).
fn documented_fields(md: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (mut in_block, mut field_table) = (false, false);
    for line in md.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !line.starts_with('|') {
            field_table = false;
        } else if line.starts_with("| field ") {
            field_table = true;
        }
        if !in_block && !field_table {
            continue;
        }
        if in_block {
            for piece in line.split('"').collect::<Vec<_>>().windows(2) {
                let [key, after] = piece else { continue };
                if after.trim_start().starts_with(':') && is_name(key) {
                    out.insert(key.to_string());
                }
            }
        } else if let Some(cell) = line.strip_prefix("| `") {
            let name = cell.split('`').next().unwrap_or("");
            if is_name(name) {
                out.insert(name.to_string());
            }
        }
    }
    out
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit())
}

/// Every property name anywhere in `schema`.
fn properties(schema: &Value, out: &mut BTreeSet<String>) {
    match schema {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = m.get("properties") {
                out.extend(props.keys().cloned());
            }
            m.values().for_each(|v| properties(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| properties(v, out)),
        _ => {}
    }
}

#[test]
fn the_schema_page_and_the_schemas_name_the_same_fields() {
    let md = std::fs::read_to_string(repo().join("docs/json-schema.md")).unwrap();
    let mut props = BTreeSet::new();
    for (_, s) in schemas() {
        properties(&s, &mut props);
    }
    let documented = documented_fields(&md);
    let missing: Vec<&String> = documented.iter().filter(|f| !props.contains(*f)).collect();
    assert!(missing.is_empty(), "documented, in no schema: {missing:?}");
    // The other way: each property is named on the page, in backticks or quotes.
    let unnamed: Vec<&String> = props
        .iter()
        .filter(|p| !md.contains(&format!("`{p}`")) && !md.contains(&format!("\"{p}\"")))
        .collect();
    assert!(
        unnamed.is_empty(),
        "in a schema, not on docs/json-schema.md: {unnamed:?}"
    );
    for command in
        words("sweep replay limits validate devices compare shapes tail apis launch-cost")
    {
        assert!(
            md.contains(&format!("schemas/{command}.schema.json")),
            "the page links {command}'s schema"
        );
    }
}

/// A GPU run's clocks (read through NVML, never on this machine): the committed H100 sweep
/// with clocks written into its first result is accepted, and a reading without its SM clock
/// is refused.
#[test]
fn the_sweep_schema_takes_the_clocks_of_a_turn() {
    let path = repo().join("docs/results/h100-2026-12-06/call1/runs/sweep-2026-12-06.json");
    let mut doc = read(&path);
    let reading = |sm: u32| serde_json::json!({"sm_mhz": sm, "mem_mhz": 2619, "max_sm_mhz": 1980, "reasons": ["gpu_idle"]});
    doc["results"][0]["clocks"] = serde_json::json!({"start": reading(345), "end": reading(1980)});
    doc["results"][0]["clocks_moved"] = "SM clock 345 MHz → 1980 MHz during the turn".into();
    let bad = violations("sweep", &doc);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    doc["results"][0]["clocks"]["end"]
        .as_object_mut()
        .unwrap()
        .remove("sm_mhz");
    assert!(
        !violations("sweep", &doc).is_empty(),
        "a reading needs its SM clock"
    );
}
