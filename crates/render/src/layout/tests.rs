use super::*;

#[test]
fn wraps_prose_with_a_hanging_indent_and_cuts_long_words() {
    let s = wrap("  one two three four five six", 12);
    assert_eq!(s, "  one two\n    three\n    four\n    five six");
    let s = wrap_line("abcdefghijkl", 5, "");
    assert_eq!(s, "abcde\nfghij\nkl");
    assert_eq!(wrap("short  ", 80), "short  ");
    assert_eq!(wrap("a b c d e f g h  ", 5), "a b c\n  d e\n  f g\n  h  ");
}

fn table() -> Table {
    let mut t = Table::new(vec![
        Column::right("block").key(),
        Column::right("aaaaaaaaaa"),
        Column::right("bbbbbbbbbb").drop(1),
        Column::right("cccccccccc").drop(2),
        Column::left("note").wrap(8),
    ]);
    t.push(vec![
        "32".into(),
        "1".into(),
        "2".into(),
        "3".into(),
        "a long note that must wrap onto lines".into(),
    ]);
    t.section("a group");
    t
}

#[test]
fn a_table_fits_by_wrapping_then_leaving_columns_out() {
    let t = table();
    let wide = t.render(Layout::WIDE);
    assert_eq!(wide.lines().count(), 3, "{wide}");
    assert!(wide
        .lines()
        .next()
        .unwrap()
        .starts_with("block  aaaaaaaaaa"));
    let narrow = t.render(Layout::new(40));
    assert!(max_line_width(&narrow) <= 40, "{narrow}");
    let head = narrow.lines().next().unwrap();
    assert!(
        head.contains("note") && !head.contains("cccccccccc"),
        "{narrow}"
    );
    assert!(narrow.contains("a long\n"), "the note wraps: {narrow}");
    assert!(narrow.contains("Left out to fit 40 columns"), "{narrow}");
    assert!(narrow.contains("COLUMNS="), "{narrow}");
    let md = t.markdown();
    assert!(md.starts_with("| block | aaaaaaaaaa |"), "{md}");
    assert!(
        md.contains("\n| **a group**  "),
        "a section spans its row: {md}"
    );
}

#[test]
fn a_split_table_repeats_its_key_columns() {
    let t = table().overflow(Overflow::Split);
    let s = t.render(Layout::new(40));
    assert!(max_line_width(&s) <= 40, "{s}");
    assert_eq!(s.matches("block").count(), 2, "{s}");
    assert!(s.contains("cccccccccc"), "nothing is dropped: {s}");
}

#[test]
fn native_names_are_never_cut() {
    let mut t = Table::new(vec![
        Column::left("concept").wrap(8),
        Column::left("native name").wrap(10),
    ]);
    t.push(vec![
        "warp / subgroup size".into(),
        "CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE".into(),
    ]);
    let s = t.render(Layout::new(60));
    assert!(
        s.contains("CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE"),
        "{s}"
    );
    assert!(max_line_width(&s) <= 60, "{s}");
    assert!(is_native_name("maxComputeWorkGroupInvocations"));
    assert!(is_native_name("(CU_FUNC_ATTRIBUTE_NUM_REGS)"));
    assert!(!is_native_name("BLOCKSWEEP_KERNEL_grayscale"));
    assert!(!is_native_name("pthread-x86_64-pc-linux-gnu"));
    assert!(is_native_name("cl_khr_subgroups;"));
    assert!(is_native_name("vkCmdDispatch"));
    assert!(!is_native_name("current"));
    assert!(is_native_name("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X/Y/Z"));
}

#[test]
fn footnotes_number_each_text_once() {
    let mut n = Notes::new();
    assert_eq!(n.mark("x"), "[1]");
    assert_eq!(n.mark("y"), "[2]");
    assert_eq!(n.mark("x"), "[1]");
    assert_eq!(n.render(Layout::default(), false), "[1] x\n[2] y");
}

#[test]
fn a_bracketed_launch_is_never_split_across_lines() {
    let s = wrap_line("a 32x32 block (1024 threads) runs [32x32x1 x 4]", 30, "");
    assert_eq!(s, "a 32x32 block (1024 threads)\nruns [32x32x1 x 4]");
    // A bracket left open groups nothing: the words wrap as words.
    let s = wrap_line("see [the notes below for more", 12, "");
    assert_eq!(s, "see [the\nnotes below\nfor more");
}
