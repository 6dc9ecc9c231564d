//! What a run changed: its files, insertions and deletions.

use std::fmt;

use camino::{Utf8Path, Utf8PathBuf};

/// One file the run changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    pub(crate) path: Utf8PathBuf,
    pub(crate) lines: Option<(u64, u64)>,
    pub(crate) untracked: bool,
}

impl FileChange {
    /// The path, relative to the checkout root.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    /// Lines added, or `None` for a binary file.
    pub fn insertions(&self) -> Option<u64> {
        self.lines.map(|(i, _)| i)
    }

    /// Lines removed, or `None` for a binary file.
    pub fn deletions(&self) -> Option<u64> {
        self.lines.map(|(_, d)| d)
    }

    /// Whether the file is binary.
    pub fn is_binary(&self) -> bool {
        self.lines.is_none()
    }

    /// Whether the file was untracked in the retained worktree (a new file
    /// the run never added to git).
    pub fn is_untracked(&self) -> bool {
        self.untracked
    }
}

/// The diff summary of a run: its files, insertions and deletions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffSummary {
    pub(crate) files: Vec<FileChange>,
}

impl DiffSummary {
    /// Every changed file, in path order.
    pub fn files(&self) -> &[FileChange] {
        &self.files
    }

    /// How many files changed.
    pub fn files_changed(&self) -> usize {
        self.files.len()
    }

    /// Lines added (binary files count none).
    pub fn insertions(&self) -> u64 {
        self.files.iter().filter_map(FileChange::insertions).sum()
    }

    /// Lines removed (binary files count none).
    pub fn deletions(&self) -> u64 {
        self.files.iter().filter_map(FileChange::deletions).sum()
    }

    /// The files that were untracked in the retained worktree.
    pub fn untracked(&self) -> impl Iterator<Item = &Utf8Path> {
        self.files
            .iter()
            .filter(|f| f.untracked)
            .map(|f| f.path.as_path())
    }

    /// Whether the run changed nothing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

impl fmt::Display for DiffSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} changed, {} {}(+), {} {}(-)",
            self.files_changed(),
            plural(self.files_changed() as u64, "file", "files"),
            self.insertions(),
            plural(self.insertions(), "insertion", "insertions"),
            self.deletions(),
            plural(self.deletions(), "deletion", "deletions"),
        )
    }
}

/// git's wording: "1 file", "2 files".
fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, lines: Option<(u64, u64)>) -> FileChange {
        FileChange {
            path: path.into(),
            lines,
            untracked: false,
        }
    }

    #[test]
    fn diff_summaries_read_like_gits() {
        let one = DiffSummary {
            files: vec![change("src/lib.rs", Some((1, 1)))],
        };
        assert_eq!(
            one.to_string(),
            "1 file changed, 1 insertion(+), 1 deletion(-)"
        );
        let two = DiffSummary {
            files: vec![change("src/lib.rs", Some((3, 0))), change("logo.png", None)],
        };
        assert_eq!(
            two.to_string(),
            "2 files changed, 3 insertions(+), 0 deletions(-)"
        );
    }
}
