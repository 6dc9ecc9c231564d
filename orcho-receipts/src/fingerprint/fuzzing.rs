//! Entry points for the fuzz targets (`fuzz/`), behind the `fuzzing`
//! feature: the parsers of what a checkout holds (git's index, ignore
//! files, the fingerprint cache), reached with arbitrary bytes. Not an API.

/// Parses `bytes` as a git index (SHA-1 and SHA-256 object names); the
/// number of entries when it parses.
pub fn git_index(bytes: &[u8]) -> Option<usize> {
    let sha1 = super::git::index::parse(bytes, 20)
        .ok()
        .map(|t| t.paths.len());
    let sha256 = super::git::index::parse(bytes, 32)
        .ok()
        .map(|t| t.paths.len());
    sha1.or(sha256)
}

/// Parses `bytes` as an ignore file in `base` and decides `path` with it.
pub fn ignore(base: &[u8], bytes: &[u8], path: &[u8], is_dir: bool) -> Option<bool> {
    super::ignore::PatternFile::parse(base, bytes).decide(path, is_dir)
}

/// Git's wildmatch of `text` against `pattern`.
pub fn wildmatch(pattern: &[u8], text: &[u8], pathname: bool) -> bool {
    super::ignore::wildmatch(pattern, text, pathname)
}

/// Reads `bytes` as a fingerprint cache file; whether it was accepted.
pub fn cache(bytes: Vec<u8>) -> bool {
    super::cache::parse_bytes(bytes)
}

/// Reads `bytes` as `git config -z --list --show-origin` output; how many
/// entries, and what their booleans read as.
pub fn git_config(bytes: &[u8]) -> Option<usize> {
    let config = super::git::parse_config_list(bytes, std::path::Path::new("/repo"))?;
    for entry in &config.values {
        let _ = super::git::git_bool(entry.value.as_deref());
    }
    Some(config.values.len())
}

/// Reads `bytes` as a repository's `.git/config` for its object format.
pub fn object_format(bytes: &[u8]) -> Option<usize> {
    super::git::object_format(bytes)
}
