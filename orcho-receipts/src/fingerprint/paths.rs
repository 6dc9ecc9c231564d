//! [`PathList`]: many relative paths in one allocation.

use std::ops::Range;

/// Relative paths (raw bytes, `/`-separated) stored end to end in one
/// buffer: a listing of 28,000 paths is two allocations, not 28,000.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PathList {
    bytes: Vec<u8>,
    ends: Vec<u32>,
}

impl PathList {
    /// Room for `paths` more paths of `bytes` bytes in all.
    pub(crate) fn reserve(&mut self, paths: usize, bytes: usize) {
        self.ends.reserve(paths);
        self.bytes.reserve(bytes);
    }

    /// Appends `path`; returns its index.
    ///
    /// # Panics
    ///
    /// Past 4 GiB of path bytes, which no listing this crate reads reaches
    /// (git's own listing output is capped well below).
    pub(crate) fn push(&mut self, path: &[u8]) -> u32 {
        self.bytes.extend_from_slice(path);
        let end = u32::try_from(self.bytes.len()).expect("a listing under 4 GiB");
        self.ends.push(end);
        u32::try_from(self.ends.len() - 1).expect("a listing under 4 GiB")
    }

    /// The path bytes, end to end, and where each path ends.
    pub(crate) fn as_raw(&self) -> (&[u8], &[u32]) {
        (&self.bytes, &self.ends)
    }

    /// A list from [`as_raw`](Self::as_raw)'s parts; `None` when the ends
    /// do not describe the bytes.
    pub(crate) fn from_raw(bytes: Vec<u8>, ends: Vec<u32>) -> Option<Self> {
        let mut previous = 0;
        for &end in &ends {
            if end < previous {
                return None;
            }
            previous = end;
        }
        (previous as usize == bytes.len()).then_some(Self { bytes, ends })
    }

    /// How many paths.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The path at `i`.
    pub(crate) fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        &self.bytes[start..self.ends[i] as usize]
    }

    /// Every path, in order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &[u8]> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }

    /// Whether the paths are sorted by their bytes, each once.
    pub(crate) fn is_sorted(&self) -> bool {
        (1..self.len()).all(|i| self.get(i - 1) < self.get(i))
    }

    /// The index of `path` in a sorted list.
    #[cfg(test)]
    pub(crate) fn find(&self, path: &[u8]) -> Option<usize> {
        let i = self.lower_bound(path);
        (i < self.len() && self.get(i) == path).then_some(i)
    }

    /// The first index whose path is not less than `key`, in a sorted list.
    #[cfg(test)]
    pub(crate) fn lower_bound(&self, key: &[u8]) -> usize {
        self.lower_bound_in(0..self.len(), key)
    }

    /// [`lower_bound`](Self::lower_bound) within `range` of a sorted list.
    pub(crate) fn lower_bound_in(&self, range: Range<usize>, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (range.start, range.end.min(self.len()));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid) < key {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The indices of the paths below the directory `dir` in a sorted list
    /// (`""`: every path).
    pub(crate) fn below(&self, dir: &[u8]) -> Range<usize> {
        self.below_in(0..self.len(), dir)
    }

    /// [`below`](Self::below) within `range` of a sorted list (the paths
    /// below a parent of `dir`, say).
    pub(crate) fn below_in(&self, range: Range<usize>, dir: &[u8]) -> Range<usize> {
        if dir.is_empty() {
            return range;
        }
        let mut key = Vec::with_capacity(dir.len() + 1);
        key.extend_from_slice(dir);
        key.push(b'/');
        let start = self.lower_bound_in(range.clone(), &key);
        // `0` is the byte after `/`: every path below sorts before it.
        *key.last_mut().unwrap_or(&mut 0) = b'0';
        start..self.lower_bound_in(start..range.end, &key)
    }

    /// The paths of two sorted lists, merged: sorted, each once.
    pub(crate) fn merged(&self, other: &Self) -> Self {
        let mut out = Self::default();
        out.reserve(
            self.len() + other.len(),
            self.bytes.len() + other.bytes.len(),
        );
        let (mut i, mut j) = (0, 0);
        loop {
            let next = match (
                (i < self.len()).then(|| self.get(i)),
                (j < other.len()).then(|| other.get(j)),
            ) {
                (Some(a), Some(b)) => match a.cmp(b) {
                    std::cmp::Ordering::Less => {
                        i += 1;
                        a
                    }
                    std::cmp::Ordering::Greater => {
                        j += 1;
                        b
                    }
                    std::cmp::Ordering::Equal => {
                        i += 1;
                        j += 1;
                        a
                    }
                },
                (Some(a), None) => {
                    i += 1;
                    a
                }
                (None, Some(b)) => {
                    j += 1;
                    b
                }
                (None, None) => break,
            };
            out.push(next);
        }
        out
    }
}

impl<'a> FromIterator<&'a [u8]> for PathList {
    fn from_iter<I: IntoIterator<Item = &'a [u8]>>(iter: I) -> Self {
        let mut out = Self::default();
        for path in iter {
            out.push(path);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(paths: &[&str]) -> PathList {
        paths.iter().map(|p| p.as_bytes()).collect()
    }

    #[test]
    fn below_a_directory() {
        let l = list(&["a", "a-b", "a/b", "a/c/d", "a0", "b"]);
        assert!(l.is_sorted());
        assert_eq!(l.below(b"a"), 2..4);
        assert_eq!(l.below(b"a/c"), 3..4);
        assert_eq!(l.below(b"b"), 6..6);
        assert_eq!(l.below(b""), 0..6);
        assert_eq!(l.find(b"a/b"), Some(2));
        assert_eq!(l.find(b"a/x"), None);
    }

    #[test]
    fn merging_keeps_order_and_drops_repeats() {
        let merged = list(&["a", "c", "e"]).merged(&list(&["b", "c", "f"]));
        assert_eq!(merged, list(&["a", "b", "c", "e", "f"]));
    }
}
