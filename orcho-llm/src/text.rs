//! Bounding text: what goes into a prompt and what an error quotes.

/// The most characters of foreign text quoted in an error.
pub(crate) const EXCERPT_CHARS: usize = 200;

/// The start of foreign text for an error message: at most
/// [`EXCERPT_CHARS`] characters, whitespace runs collapsed to one space.
pub(crate) fn excerpt(text: &str) -> String {
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.is_empty() {
        return "(empty)".to_owned();
    }
    clip(&collapsed, EXCERPT_CHARS)
}

/// At most `max` characters of `text`, with `…` when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The last `max` characters of `text`, with `…` when cut.
pub(crate) fn tail(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_owned();
    }
    let start = text
        .char_indices()
        .nth(count - max)
        .map_or(0, |(start, _)| start);
    format!("…{}", &text[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clipping_respects_characters() {
        assert_eq!(clip("héllo", 2), "hé…");
        assert_eq!(clip("héllo", 5), "héllo");
        assert_eq!(tail("héllo", 3), "…llo");
        assert_eq!(tail("héllo", 9), "héllo");
        assert_eq!(excerpt("  a \n\t b "), "a b");
        assert_eq!(excerpt(" "), "(empty)");
    }
}
