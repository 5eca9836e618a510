//! The toolchain floor: every workspace package's `rust-version` must be at least the highest
//! `rust-version` of any package the workspace builds: the resolved dependency graph of
//! `cargo metadata` for this host, following normal and build dependencies from the workspace
//! members (dev-dependencies only matter for the tests, and are reported beside it). Optional
//! dependencies that no enabled feature turns on are not in the resolved graph, so they do not
//! count. Only one toolchain exists on the CI machines, so this takes the place of
//! `cargo +<msrv> check`. tools/ci/msrv-check.sh runs it and prints which package sets the floor.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::process::Command;

use serde_json::Value;

type Version = (u64, u64, u64);

fn parse_version(s: &str) -> Version {
    let mut parts = s.trim().split('.').map(|p| {
        p.parse::<u64>()
            .unwrap_or_else(|_| panic!("rust-version {s:?} is not MAJOR.MINOR[.PATCH]"))
    });
    let major = parts.next().unwrap();
    let minor = parts.next().unwrap_or(0);
    let patch = parts.next().unwrap_or(0);
    (major, minor, patch)
}

fn show((major, minor, patch): Version) -> String {
    format!("{major}.{minor}.{patch}")
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

fn host_triple() -> String {
    let out = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-vV")
        .output()
        .expect("rustc -vV runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV names the host")
        .to_owned()
}

/// The highest `rust-version` reachable from the workspace members through edges whose kind is
/// in `kinds` (None = normal, Some("build"), Some("dev")), with the chain that reaches it.
struct Floor {
    version: Version,
    package: String,
    chain: Vec<String>,
}

fn floor(meta: &Value, follow: impl Fn(&Value) -> bool) -> Floor {
    let packages: BTreeMap<&str, &Value> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p))
        .collect();
    let nodes: BTreeMap<&str, &Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let label = |id: &str| {
        let p = packages[id];
        format!(
            "{} {}",
            p["name"].as_str().unwrap(),
            p["version"].as_str().unwrap()
        )
    };
    // Breadth first from the members, remembering who reached each package first.
    let mut parent: BTreeMap<&str, Option<&str>> = BTreeMap::new();
    let mut queue: VecDeque<&str> = VecDeque::new();
    for m in meta["workspace_members"].as_array().unwrap() {
        let id = m.as_str().unwrap();
        parent.insert(id, None);
        queue.push_back(id);
    }
    let members: Vec<&str> = queue.iter().copied().collect();
    while let Some(id) = queue.pop_front() {
        for dep in nodes[id]["deps"].as_array().unwrap() {
            let dep_id = dep["pkg"].as_str().unwrap();
            let kinds = dep["dep_kinds"].as_array().unwrap();
            // Dev edges only count out of a workspace member: a dependency's own
            // dev-dependencies are never built.
            let wanted = kinds
                .iter()
                .any(|k| follow(&k["kind"]) && (k["kind"] != "dev" || members.contains(&id)));
            if wanted && !parent.contains_key(dep_id) {
                parent.insert(dep_id, Some(id));
                queue.push_back(dep_id);
            }
        }
    }
    let mut best: Option<(Version, &str)> = None;
    for &id in parent.keys() {
        if members.contains(&id) {
            continue;
        }
        if let Some(rv) = packages[id]["rust_version"].as_str() {
            let v = parse_version(rv);
            if best.is_none_or(|(b, _)| v > b) {
                best = Some((v, id));
            }
        }
    }
    let (version, id) = best.expect("some dependency declares a rust-version");
    let mut chain = vec![label(id)];
    let mut at = id;
    while let Some(Some(p)) = parent.get(at) {
        chain.push(label(p));
        at = p;
    }
    chain.reverse();
    Floor {
        version,
        package: label(id),
        chain,
    }
}

#[test]
fn workspace_rust_version_covers_every_built_dependency() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../Cargo.toml");
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--filter-platform"])
        .arg(host_triple())
        .arg("--manifest-path")
        .arg(&root)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).unwrap();

    let build = floor(&meta, |k| k.is_null() || k == "build");
    let with_tests = floor(&meta, |_| true);
    println!(
        "toolchain floor for building the workspace: {} set by {} (via {})",
        show(build.version),
        build.package,
        build.chain.join(" -> ")
    );
    println!(
        "with the dev-dependencies (cargo test): {} set by {} (via {})",
        show(with_tests.version),
        with_tests.package,
        with_tests.chain.join(" -> ")
    );

    let members: Vec<&Value> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| {
            meta["workspace_members"]
                .as_array()
                .unwrap()
                .contains(&p["id"])
        })
        .collect();
    assert!(!members.is_empty());
    for p in members {
        let name = p["name"].as_str().unwrap();
        let declared = p["rust_version"].as_str().unwrap_or_else(|| {
            panic!("{name} declares no rust-version (rust-version.workspace = true)")
        });
        println!("{name}: rust-version {declared}");
        assert!(
            parse_version(declared) >= build.version,
            "{name} says rust-version {declared}, but {} needs {} (reached through {}): \
             raise rust-version in the root Cargo.toml to {}.{}",
            build.package,
            show(build.version),
            build.chain.join(" -> "),
            build.version.0,
            build.version.1
        );
    }
}

#[test]
fn versions_compare_numerically() {
    assert!(parse_version("1.88") > parse_version("1.9.9"));
    assert_eq!(parse_version("1.88"), parse_version("1.88.0"));
    assert!(parse_version("1.88.1") > parse_version("1.88"));
}
