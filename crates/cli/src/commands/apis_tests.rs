use super::*;
use blocksweep_core::provider::Probed;
use blocksweep_core::{DeviceIdentity, DeviceKind};

fn list_keys() -> Vec<&'static str> {
    blocksweep_apis::all()
        .iter()
        .map(|d| d.api().key())
        .collect()
}

/// The real provider list with made-up probes: the first API sees one CPU device, every other
/// one is unavailable for a reason holding a comma and a quote (which CSV must quote).
fn registry() -> Registry {
    let probes = blocksweep_apis::all()
        .iter()
        .enumerate()
        .map(|(i, &provider)| Probed {
            provider,
            devices: match i {
                0 => Ok(vec![DeviceIdentity {
                    api: provider.api(),
                    index: 0,
                    name: "cpu-device".into(),
                    vendor: String::new(),
                    driver_version: String::new(),
                    api_version: String::new(),
                    platform: String::new(),
                    kind: DeviceKind::Cpu,
                    uuid: None,
                    pci_bus_id: None,
                }]),
                _ => Err(format!("no \"{}\" here, none at all", provider.api().key())),
            },
        })
        .collect();
    Registry::from_probes(probes)
}

#[test]
fn keys_are_the_driver_list_one_a_line() {
    let text = keys(blocksweep_apis::all());
    assert!(text.ends_with('\n'), "{text:?}");
    assert_eq!(text.lines().collect::<Vec<_>>(), list_keys());
}

#[test]
fn csv_says_each_api_status_and_quotes_the_reason() {
    let text = csv(&registry());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "key,name,available,unavailable");
    assert_eq!(lines.len(), list_keys().len() + 1, "{text}");
    for (i, (line, d)) in lines[1..].iter().zip(blocksweep_apis::all()).enumerate() {
        let api = d.api();
        let want = match i {
            0 => format!("{},{},true,", api.key(), api.name()),
            _ => format!(
                "{},{},false,\"no \"\"{}\"\" here, none at all\"",
                api.key(),
                api.name(),
                api.key()
            ),
        };
        assert_eq!(*line, want);
    }
}

#[test]
fn json_has_the_envelope_then_each_api() {
    let v: Value = serde_json::from_str(&json(&registry())).unwrap();
    assert_eq!(v["command"], "apis");
    let first = blocksweep_apis::all()[0].api();
    assert_eq!(
        v["devices"],
        json!([{"api": first.key(), "name": "cpu-device", "uuid": null, "pci_bus_id": null}])
    );
    let apis = v["apis"].as_array().unwrap();
    let got: Vec<&str> = apis.iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert_eq!(got, list_keys());
    assert_eq!(apis[0]["name"], first.name());
    assert_eq!(
        (&apis[0]["available"], &apis[0]["unavailable"]),
        (&json!(true), &Value::Null)
    );
    for a in &apis[1..] {
        assert_eq!(a["available"], false, "{a}");
        let why = format!("no \"{}\" here, none at all", a["key"].as_str().unwrap());
        assert_eq!(a["unavailable"], why.as_str(), "{a}");
    }
}
