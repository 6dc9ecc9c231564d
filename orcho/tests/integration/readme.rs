//! The README's embedding snippet is the front-page example of this crate,
//! which runs as a doctest: the two must say the same.

/// The lines of the first fenced block after `marker` in `text`.
fn block_after<'a>(text: &'a str, marker: &str) -> Vec<&'a str> {
    let start = text.find(marker).expect("the marker is in the text");
    text[start..]
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("```"))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("```"))
        .collect()
}

#[test]
fn the_readme_embedding_snippet_is_the_front_page_doctest() {
    let readme = include_str!("../../../README.md");
    let lib = include_str!("../../src/lib.rs");
    let snippet = block_after(readme, "## Embedding the engine");
    // The doctest's visible lines: `//! ` lines that rustdoc does not hide.
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    let shown: Vec<&str> = block_after(&doc, "# Embedding the engine")
        .into_iter()
        .filter(|l| !l.starts_with("# ") && *l != "#")
        .collect();
    assert!(!snippet.is_empty());
    assert_eq!(
        snippet, shown,
        "README.md and the front page of orcho/src/lib.rs differ"
    );
}
