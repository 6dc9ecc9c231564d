//! "Did you mean …?" for misspelt names.

/// The candidate closest to `input` by edit distance (ignoring ASCII case),
/// if it is close enough to be a likely typo: at most a third of the longer
/// word's length, and at least one edit is always tolerated.
///
/// Ties go to the earliest candidate.
///
/// ```
/// use orcho_core::nearest;
///
/// let known = ["halt", "feed_into_next", "trigger_replan", "informational"];
/// assert_eq!(nearest("feed_into_nxt", known), Some("feed_into_next"));
/// assert_eq!(nearest("HALT", known), Some("halt"));
/// assert_eq!(nearest("banana", known), None);
/// ```
pub fn nearest<'a>(input: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let input: Vec<char> = input.to_lowercase().chars().collect();
    let mut best: Option<(usize, &'a str)> = None;
    for candidate in candidates {
        let cand: Vec<char> = candidate.to_lowercase().chars().collect();
        let distance = edit_distance(&input, &cand);
        let limit = (input.len().max(cand.len()) / 3).max(1);
        if distance <= limit && best.is_none_or(|(d, _)| distance < d) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The optimal string alignment distance: insertions, deletions,
/// substitutions, and two neighbours swapped (`tset` is one edit from
/// `test`, as a typist sees it), with three rows of memory.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut row: Vec<usize> = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let mut best = (previous[j] + usize::from(ca != cb))
                .min(row[j] + 1)
                .min(previous[j + 1] + 1);
            if i > 0 && j > 0 && *ca == b[j - 1] && a[i - 1] == *cb {
                best = best.min(before[j - 1] + 1);
            }
            row[j + 1] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut row);
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        let d = |a: &str, b: &str| {
            edit_distance(
                &a.chars().collect::<Vec<_>>(),
                &b.chars().collect::<Vec<_>>(),
            )
        };
        assert_eq!(d("", ""), 0);
        assert_eq!(d("abc", ""), 3);
        assert_eq!(d("kitten", "sitting"), 3);
        // Two neighbours swapped are one edit.
        assert_eq!(d("on_fail", "on_fial"), 1);
        assert_eq!(d("tset", "test"), 1);
        assert_eq!(d("ab", "ba"), 1);
        assert_eq!(d("ca", "abc"), 3);
    }

    #[test]
    fn suggestions() {
        let keys = ["name", "uses", "on_fail", "lock_group", "timeout", "with"];
        assert_eq!(nearest("on_fial", keys), Some("on_fail"));
        assert_eq!(nearest("use", keys), Some("uses"));
        assert_eq!(nearest("timout", keys), Some("timeout"));
        assert_eq!(nearest("completely_different", keys), None);
        assert_eq!(nearest("x", std::iter::empty()), None);
        assert_eq!(nearest("tset", ["test", "lint"]), Some("test"));
        assert_eq!(nearest("stauts", ["status", "start"]), Some("status"));
    }
}
