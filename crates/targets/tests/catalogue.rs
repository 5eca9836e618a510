//! The catalogue as data: every file reads, every value has a source that says where and when,
//! every name is unique, and a `--target` list resolves or is refused in one line.

use blocksweep_targets::{Catalogue, SelectError};

#[test]
fn every_catalogue_value_has_a_source_that_says_where_and_when() {
    let c = Catalogue::embedded().expect("the embedded catalogue reads");
    assert!(c.targets.len() >= 2, "{} targets", c.targets.len());
    for t in &c.targets {
        for (key, stated) in &t.limits {
            assert!(
                stated.source.is_complete(),
                "{} {key}: source {:?}",
                t.name,
                stated.source
            );
            assert!(!stated.name.is_empty(), "{} {key}: no name", t.name);
        }
        if let Some(s) = &t.subgroup {
            assert!(
                s.source.is_complete(),
                "{} subgroup: {:?}",
                t.name,
                s.source
            );
        }
    }
}

#[test]
fn a_value_without_a_source_is_refused_naming_the_file_and_the_key() {
    let text = r#"
family = "x"
[[targets]]
name = "no-source"
api = "vulkan"
[targets.limits]
threads_per_block = { value = 128, name = "maxComputeWorkGroupInvocations" }
"#;
    let e = Catalogue::from_files(&[("x.toml", text)]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "x.toml: targets[0] ('no-source').limits.threads_per_block: no source (give the value \
         or the target one)"
    );
    let undated = "family = \"x\"\n[sources.s]\ndocument = \"a page\"\n";
    let e = Catalogue::from_files(&[("y.toml", undated)]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("y.toml: sources.s: a source needs `read`"),
        "{e}"
    );
}

#[test]
fn a_malformed_file_names_the_file_and_the_key() {
    let text = r#"
family = "x"
[sources.s]
document = "d"
read = "2026-12-06"
[[targets]]
name = "t"
api = "vulkan"
source = "s"
[targets.limits]
thread_per_block = { value = 128, name = "n" }
"#;
    let e = Catalogue::from_files(&[("x.toml", text)]).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("x.toml: targets[0] ('t').limits.thread_per_block: not a limit"),
        "{e}"
    );
    let e = Catalogue::from_files(&[("z.toml", "family = \"z\"\nlimits = 3\n")]).unwrap_err();
    assert!(e.to_string().contains("unknown field `limits`"), "{e}");
}

#[test]
fn a_target_list_resolves_names_families_and_tags_and_refuses_an_unknown_name() {
    let c = Catalogue::embedded().unwrap();
    let one = c.select("webgpu-default").unwrap();
    assert_eq!(one.len(), 1);
    let family = c.select("webgpu").unwrap();
    let names: Vec<&str> = family.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["webgpu-default", "webgpu-compat"]);
    let e = c.select("webgpu,no-such-gpu").unwrap_err();
    assert!(matches!(e, SelectError::Unknown { .. }));
    let line = e.to_string();
    assert!(
        line.starts_with("--target no-such-gpu: no such target"),
        "{line}"
    );
    assert!(
        line.contains("webgpu-default") && !line.contains('\n'),
        "{line}"
    );
    assert!(matches!(c.select(" , "), Err(SelectError::Empty)));
}

#[test]
fn names_are_unique_and_inheritance_resolves_across_files() {
    let a = "family = \"a\"\n[sources.s]\ndocument = \"d\"\nread = \"2026-12-06\"\n\
             [[targets]]\nname = \"base\"\napi = \"vulkan\"\nsource = \"s\"\n\
             [targets.limits]\nthreads_per_block = { value = 128, name = \"n\" }\n";
    let b =
        "family = \"b\"\n[[targets]]\nname = \"child\"\napi = \"vulkan\"\ninherits = \"base\"\n";
    // The child comes first: inheritance does not depend on the files' order.
    let c = Catalogue::from_files(&[("b.toml", b), ("a.toml", a)]).unwrap();
    assert_eq!(
        c.get("child")
            .unwrap()
            .one(blocksweep_targets::Key::ThreadsPerBlock),
        Some(128)
    );
    let e = Catalogue::from_files(&[("a.toml", a), ("a2.toml", a)]).unwrap_err();
    assert!(e.to_string().contains("named twice"), "{e}");
    let orphan =
        "family = \"o\"\n[[targets]]\nname = \"o\"\napi = \"vulkan\"\ninherits = \"nobody\"\n";
    let e = Catalogue::from_files(&[("o.toml", orphan)]).unwrap_err();
    assert!(e.to_string().contains("inherits 'nobody'"), "{e}");
}

#[test]
fn docs_targets_md_lists_every_catalogue_target_and_family() {
    let md = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/targets.md"
    ))
    .unwrap();
    let c = Catalogue::embedded().unwrap();
    for t in &c.targets {
        assert!(
            md.contains(&format!("| `{}` |", t.name)),
            "docs/targets.md lacks {}",
            t.name
        );
    }
    for f in &c.families {
        assert!(
            md.contains(&format!("`{}`", f.name)),
            "docs/targets.md lacks {}",
            f.name
        );
    }
}
