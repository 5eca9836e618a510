//! What `--version` says of the build: the commit it was built from (`git rev-parse --short
//! HEAD`; "unknown" outside a git checkout or without git) and the crate's enabled features.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=BLOCKSWEEP_COMMIT={commit}");
    // A new commit or a switched branch builds again: HEAD, the branch's ref, packed refs
    // (those that exist: a missing one would run this script on every build).
    for path in [
        git(&["rev-parse", "--git-path", "HEAD"]),
        git(&["rev-parse", "--symbolic-full-name", "HEAD"])
            .and_then(|r| git(&["rev-parse", "--git-path", &r])),
        git(&["rev-parse", "--git-path", "packed-refs"]),
    ]
    .into_iter()
    .flatten()
    .filter(|p| std::path::Path::new(p).exists())
    {
        println!("cargo:rerun-if-changed={path}");
    }
    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| k.strip_prefix("CARGO_FEATURE_").map(|f| f.to_lowercase()))
        .collect();
    features.sort();
    let features = match features.is_empty() {
        true => "none".to_string(),
        false => features.join(", "),
    };
    println!("cargo:rustc-env=BLOCKSWEEP_FEATURES={features}");
}
