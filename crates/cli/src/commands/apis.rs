//! `blocksweep apis`: the APIs of the provider list, in display order, for scripts and tests that
//! act per API. The keys alone load no driver; csv and json probe every API for its status.

use std::process::ExitCode;

use blocksweep_core::report::Envelope;
use blocksweep_core::{Provider, Registry};
use blocksweep_render::to_csv;
use serde_json::{json, Value};

use crate::args::apis::{ApisArgs, ApisFormat};
use crate::output::stdio;

pub fn run(args: &ApisArgs) -> anyhow::Result<ExitCode> {
    let providers = blocksweep_apis::all();
    let text = match args.format {
        ApisFormat::Keys => keys(providers),
        ApisFormat::Csv => csv(&crate::session::registry()),
        ApisFormat::Json => json(&crate::session::registry()),
    };
    stdio::print(&text)?;
    Ok(ExitCode::SUCCESS)
}

fn keys(providers: &[&dyn Provider]) -> String {
    providers
        .iter()
        .map(|d| format!("{}\n", d.api().key()))
        .collect()
}

fn csv(reg: &Registry) -> String {
    let header = ["key", "name", "available", "unavailable"];
    let mut records = vec![header.map(String::from).to_vec()];
    for api in reg.apis() {
        let why = reg.unavailable(api);
        let available = if why.is_none() { "true" } else { "false" };
        let row = [api.key(), api.name(), available, why.unwrap_or_default()];
        records.push(row.map(String::from).to_vec());
    }
    to_csv(&records)
}

fn json(reg: &Registry) -> String {
    let apis: Vec<Value> = reg
        .apis()
        .map(|api| {
            let why = reg.unavailable(api);
            json!({"key": api.key(), "name": api.name(), "available": why.is_none(), "unavailable": why})
        })
        .collect();
    let devices = reg.apis().flat_map(|api| reg.devices(api));
    Envelope::now("apis", devices).document(&json!({ "apis": apis }))
}

#[cfg(test)]
#[path = "apis_tests.rs"]
mod tests;
