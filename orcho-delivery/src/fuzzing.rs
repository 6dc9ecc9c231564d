//! Entry points for the fuzz targets (`fuzz/`), behind the `fuzzing`
//! feature: the readers of git's output. Not an API.

/// Parses `bytes` as `git status --porcelain -z` output; how many entries.
pub fn git_status(bytes: &[u8]) -> usize {
    crate::git::parse_status(bytes).len()
}

/// Parses `bytes` as `git diff --numstat -z` output; how many files.
pub fn git_numstat(bytes: &[u8]) -> usize {
    crate::git::parse_numstat(bytes).len()
}
