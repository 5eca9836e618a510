//! The made-up API of blocksweep-core's tests, drawn: `validate` runs its subgroup probe into
//! the table, in its own words, with nothing here or in the core changed for it.

use blocksweep_core::testing::metal_like::validated;

use crate::{Layout, Render};

#[test]
fn a_made_up_apis_subgroups_are_drawn_in_its_words() {
    let text = validated().text(Layout::WIDE, false);
    assert!(
        text.contains("Subgroups: what each API claims, and what ran"),
        "{text}"
    );
    assert!(text.contains("MetalLike: threadExecutionWidth 8"), "{text}");
}
