//! Where a git work tree starts, decided without running git.

use std::io::Read as _;
use std::path::Path;

/// Whether `dir` is the top of a git work tree: its `.git` is a directory
/// that holds `HEAD`, or a file that names one (`gitdir: …`, as a linked
/// worktree or a submodule has).
///
/// A `.git` that is neither is not a repository, as git itself would say:
/// an empty `.git` directory is what an agent's sandbox leaves as a mount
/// point in `/tmp`, and taking it for a repository would make every
/// directory below it one checkout.
#[must_use]
pub fn is_git_top(dir: &Path) -> bool {
    let dot_git = dir.join(".git");
    let Ok(meta) = std::fs::metadata(&dot_git) else {
        return false;
    };
    if meta.is_dir() {
        return dot_git.join("HEAD").is_file();
    }
    let mut head = [0_u8; 8];
    std::fs::File::open(&dot_git)
        .and_then(|mut file| file.read_exact(&mut head))
        .is_ok_and(|()| &head == b"gitdir: ")
}

#[cfg(test)]
mod tests {
    use super::is_git_top;
    use std::io::Write as _;
    use std::path::Path;

    fn put(path: &Path, bytes: &[u8]) {
        std::fs::File::create(path)
            .and_then(|mut file| file.write_all(bytes))
            .unwrap();
    }

    #[test]
    fn a_repository_a_linked_worktree_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert!(!is_git_top(root), "no .git");

        std::fs::create_dir(root.join(".git")).unwrap();
        assert!(
            !is_git_top(root),
            "an empty .git directory is a mount point"
        );

        put(&root.join(".git/HEAD"), b"ref: refs/heads/main\n");
        assert!(is_git_top(root), "a .git directory with HEAD");

        let linked = root.join("linked");
        std::fs::create_dir(&linked).unwrap();
        put(
            &linked.join(".git"),
            b"gitdir: /elsewhere/.git/worktrees/x\n",
        );
        assert!(is_git_top(&linked), "a .git file naming its git directory");

        let junk = root.join("junk");
        std::fs::create_dir(&junk).unwrap();
        put(&junk.join(".git"), b"nope");
        assert!(!is_git_top(&junk), "a .git file of something else");
    }
}
