use super::*;
use blocksweep_core::GridPolicy;

#[test]
fn sizes() {
    assert_eq!(parse_size("640x360"), Ok((640, 360)));
    assert!(parse_size("0x10").unwrap_err().contains("no pixels"));
    assert!(parse_size("4k").unwrap_err().contains("WIDTHxHEIGHT"));
    assert!(parse_size("100000x100000").unwrap_err().contains("2^32"));
}

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("blocksweep").chain(args.iter().copied()))
}

fn sweep(args: &[&str]) -> SweepArgs {
    let mut all = vec!["sweep"];
    all.extend_from_slice(args);
    match parse(&all).unwrap().command {
        Command::Sweep(a) => a,
        other => panic!("{other:?}"),
    }
}

#[test]
fn numbers_and_names_are_trimmed_like_sizes() {
    let a = sweep(&[
        "--reps",
        " 7",
        "--warmups",
        "2 ",
        "--seed",
        " 9 ",
        "--grid",
        " 64",
        "--size",
        " 640x360",
        "--max-time",
        " 30",
        "--backend",
        " opencl ",
        "--format",
        " csv",
    ]);
    assert_eq!(a.timed.reps, Some(7));
    assert_eq!(a.warmups, 2);
    assert_eq!(a.seed, 9);
    assert_eq!(a.grid.0, vec![GridPolicy::Fixed(64)]);
    assert_eq!(a.frame_size(), Ok((640, 360)));
    assert_eq!(a.max_time, 30);
    assert_eq!(a.device.backend.as_deref(), Some("opencl"));
    assert_eq!(a.format, Some(FormatChoice::Csv));
}

#[test]
fn blocks_help_shows_the_default_list() {
    let list: Vec<String> = blocksweep_core::blocks::default_blocks()
        .iter()
        .map(|b| b.to_string())
        .collect();
    let want = format!("[default: {}, the 13 sizes", list.join(","));
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    let sweep = cmd.find_subcommand_mut("sweep").unwrap();
    let help = sweep.render_long_help().to_string();
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains(&want),
        "--blocks help lacks {want:?}:\n{help}"
    );
    assert!(help.contains("docs/guide.md"), "{help}");
    let mut top = command();
    let mut helps = vec![top.render_long_help().to_string()];
    for sub in top.get_subcommands_mut() {
        helps.push(sub.render_long_help().to_string());
    }
    for help in helps {
        for jargon in ["seed's", "the seed ", "Day-10", "course"] {
            assert!(!help.contains(jargon), "course jargon in --help:\n{help}");
        }
    }
}

#[test]
fn no_two_short_flags_differ_only_by_case() {
    use clap::CommandFactory;
    let cmd = Cli::command();
    for sub in cmd.get_subcommands() {
        let shorts: Vec<char> = sub.get_arguments().filter_map(|a| a.get_short()).collect();
        for c in &shorts {
            let twin = if c.is_ascii_lowercase() {
                c.to_ascii_uppercase()
            } else {
                c.to_ascii_lowercase()
            };
            assert!(
                twin == *c || !shorts.contains(&twin),
                "{}: -{c} and -{twin}",
                sub.get_name()
            );
        }
    }
}

#[test]
fn grids_with_more_blocks_than_pixels_are_refused() {
    let a = sweep(&["--grid", "2147483648"]);
    let e = a.check().unwrap_err();
    assert!(
        e.contains("more blocks than") && e.contains("8294400"),
        "{e}"
    );
    assert!(sweep(&["--size", "4x4", "--grid", "16"]).check().is_ok());
    assert!(sweep(&["--size", "4x4", "--grid", "17"]).check().is_err());
    assert!(sweep(&["--grid", "data"]).check().is_ok());
}

#[test]
fn the_help_names_every_api_of_the_driver_list() {
    let help = command().render_long_help().to_string();
    for d in blocksweep_apis::all() {
        assert!(help.contains(d.api().name()), "{help}");
    }
}

#[test]
fn clap_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

/// Each provider's declared options reach the command line and come back as the options a
/// device is opened with; nothing else is set.
#[test]
fn the_drivers_declared_options_are_offered_and_read_back() {
    let declared: Vec<&str> = blocksweep_apis::all()
        .iter()
        .flat_map(|d| d.api().info().options.iter().map(|o| o.flag))
        .collect();
    assert!(declared.contains(&"cuda-compiler") && declared.contains(&"vk-validation"));
    let help = command()
        .find_subcommand_mut("sweep")
        .unwrap()
        .render_long_help()
        .to_string();
    for flag in &declared {
        assert!(
            help.contains(&format!("--{flag}")),
            "--{flag} not in sweep --help"
        );
    }

    let given = sweep(&["--cuda-compiler", " ptx", "--vk-validation"])
        .device
        .api_options();
    assert_eq!(given.choice("cuda-compiler"), Some("ptx"));
    assert!(given.switch("vk-validation"));
    let default = sweep(&[]).device.api_options();
    assert_eq!(default.choice("cuda-compiler"), Some("auto"));
    assert!(!default.switch("vk-validation"));
    let err = parse(&["sweep", "--cuda-compiler", "clang"]).unwrap_err();
    assert_eq!(err.kind(), clap::error::ErrorKind::InvalidValue);
}
