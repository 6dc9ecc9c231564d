//! Finding a program on the child's `PATH` before it is spawned.
//!
//! std spawns with `posix_spawn` (a `vfork`-style clone that shares the
//! parent's memory until `exec`) only when the program is a path. For a
//! bare name under a cleared environment it falls back to `fork` and
//! `execvp`: `fork` copies the parent's page tables, so a spawn costs more
//! the bigger the host process is, and the copy-on-write faults that follow
//! make concurrent spawns wait on each other. Resolving the name here, the
//! way `execvp` would in the child, keeps every spawn on the fast path.

use std::{
    ffi::OsStr,
    io,
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
};

use rustix::fs::Access;

/// The search path when the child's environment has no `PATH`: what glibc's
/// `execvp` uses in that case.
pub(crate) const DEFAULT_SEARCH_PATH: &str = "/bin:/usr/bin";

/// Where the child will find `program`: `program` itself when it contains a
/// `/`, otherwise the first executable regular file named `program` in
/// `search_path` (the child's `PATH`, or [`DEFAULT_SEARCH_PATH`] when it has
/// none).
///
/// As in `execvp`, an empty entry is the current directory, and entries are
/// relative to the directory the child starts in (`cwd`, when it is not the
/// parent's). A relative entry stays relative in the returned path, which
/// always contains a `/`, since the child changes directory before it
/// executes the program.
///
/// # Errors
///
/// [`io::ErrorKind::PermissionDenied`] when a file of that name was found
/// but none could be executed, [`io::ErrorKind::NotFound`] otherwise.
pub(crate) fn find_program(
    program: &OsStr,
    search_path: Option<&OsStr>,
    cwd: Option<&Path>,
) -> io::Result<PathBuf> {
    let name = program.as_bytes();
    if name.contains(&b'/') {
        return Ok(PathBuf::from(program));
    }
    if name.is_empty() {
        return Err(io::ErrorKind::NotFound.into());
    }
    let search_path = search_path.map_or(DEFAULT_SEARCH_PATH.as_bytes(), OsStrExt::as_bytes);
    let mut denied = false;
    for entry in search_path.split(|&b| b == b':') {
        let dir = if entry.is_empty() {
            Path::new(".")
        } else {
            Path::new(OsStr::from_bytes(entry))
        };
        let candidate = dir.join(program);
        let probe = match cwd {
            Some(cwd) if candidate.is_relative() => cwd.join(&candidate),
            _ => candidate.clone(),
        };
        match executable(&probe) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::PermissionDenied => denied = true,
            Err(_) => {}
        }
    }
    Err(if denied {
        io::ErrorKind::PermissionDenied
    } else {
        io::ErrorKind::NotFound
    }
    .into())
}

/// Whether `path` is a regular file this process may execute.
///
/// # Errors
///
/// [`io::ErrorKind::PermissionDenied`] for a file without execute
/// permission or a directory (which `execve` refuses the same way), and the
/// error of the access check otherwise (typically
/// [`io::ErrorKind::NotFound`]).
pub(crate) fn executable(path: &Path) -> io::Result<()> {
    match rustix::fs::access(path, Access::EXEC_OK) {
        Ok(()) if std::fs::metadata(path).is_ok_and(|m| m.is_file()) => Ok(()),
        Ok(()) => Err(io::ErrorKind::PermissionDenied.into()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use std::{fs, os::unix::fs::PermissionsExt};

    use super::*;

    fn executable(path: &Path) {
        fs::write(path, "#!/bin/sh\n").expect("write");
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    fn search(dirs: &[&Path]) -> std::ffi::OsString {
        std::env::join_paths(dirs).expect("joinable")
    }

    #[test]
    fn a_path_is_left_alone() {
        for program in ["/no/such/tool", "./tool", "bin/tool"] {
            assert_eq!(
                find_program(OsStr::new(program), None, None).expect("a path"),
                Path::new(program)
            );
        }
    }

    #[test]
    fn the_first_executable_match_on_the_childs_path_wins() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        for d in [&a, &b, &c] {
            fs::create_dir(d).expect("mkdir");
        }
        // `a/tool` is not executable and `b/tool` is a directory: both are
        // passed over, as `execvp` would.
        fs::write(a.join("tool"), "").expect("write");
        fs::create_dir(b.join("tool")).expect("mkdir");
        executable(&c.join("tool"));
        let found = find_program(OsStr::new("tool"), Some(&search(&[&a, &b, &c])), None);
        assert_eq!(found.expect("found"), c.join("tool"));
    }

    #[test]
    fn without_path_the_default_search_path_is_used() {
        let found = find_program(OsStr::new("sh"), None, None).expect("sh in /bin or /usr/bin");
        assert!(
            found.starts_with("/bin") || found.starts_with("/usr/bin"),
            "{found:?}"
        );
    }

    #[test]
    fn relative_entries_are_relative_to_the_childs_directory() {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::create_dir(dir.path().join("bin")).expect("mkdir");
        executable(&dir.path().join("bin/tool"));
        executable(&dir.path().join("here"));
        let cwd = Some(dir.path());
        assert_eq!(
            find_program(OsStr::new("tool"), Some(OsStr::new("bin")), cwd).expect("found"),
            Path::new("bin/tool")
        );
        // An empty entry is the current directory, spelled so that the
        // result is still a path.
        assert_eq!(
            find_program(OsStr::new("here"), Some(OsStr::new("/nowhere:")), cwd).expect("found"),
            Path::new("./here")
        );
        assert_eq!(
            find_program(OsStr::new("tool"), Some(OsStr::new("bin")), None)
                .expect_err("not relative to this process's directory")
                .kind(),
            io::ErrorKind::NotFound
        );
    }

    #[test]
    fn missing_and_not_executable_are_told_apart() {
        let dir = tempfile::tempdir().expect("temp dir");
        fs::write(dir.path().join("data"), "").expect("write");
        fs::create_dir(dir.path().join("folder")).expect("mkdir");
        let path = Some(dir.path().as_os_str());
        let kind = |name: &str| {
            find_program(OsStr::new(name), path, None)
                .expect_err("not runnable")
                .kind()
        };
        assert_eq!(kind("missing"), io::ErrorKind::NotFound);
        assert_eq!(kind(""), io::ErrorKind::NotFound);
        // Without any execute bit, not even root may execute it.
        assert_eq!(kind("data"), io::ErrorKind::PermissionDenied);
        assert_eq!(kind("folder"), io::ErrorKind::PermissionDenied);
    }
}
