//! Which files of a command's subject were written while it ran.
//!
//! The fingerprints before and after a run catch a command that leaves its
//! subject changed. They miss one that changes a file and puts it back
//! before it ends: a fix swapped in only while the tests run. On Linux,
//! inotify watches every directory that holds a file of the subject for
//! the whole run, on a thread that drains the events as they come; what
//! was written, created, removed or renamed among the subject's files is
//! named in the receipt, which is then stale. A file created in a watched
//! directory that was not in the subject counts when git would list it
//! (it is not ignored), since it was part of the subject while it existed.
//! Where inotify cannot watch (another platform, no watches left), the
//! receipt says so and nothing is claimed either way.

use std::{
    collections::{BTreeSet, HashMap},
    os::unix::ffi::OsStrExt,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::Duration,
};

use camino::Utf8PathBuf;

/// What stands in for the paths when the kernel dropped events.
pub(crate) const OVERFLOW: &str = "(more changes than could be followed)";

/// A running watch of a subject's directories.
pub(crate) struct Watch {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Seen>,
}

/// What the watch saw: written paths of the subject, and created names
/// that were not (relative to the root).
#[derive(Default)]
struct Seen {
    written: BTreeSet<Vec<u8>>,
    created: BTreeSet<Vec<u8>>,
    overflow: bool,
}

impl Watch {
    /// Watches the directories of `listed` (paths relative to `root`).
    /// `None` where inotify is not to be had.
    pub(crate) fn start(root: &Path, listed: &[PathBuf]) -> Option<Self> {
        imp::start(root, listed)
    }

    /// Stops watching: the subject's files written while it ran (sorted),
    /// and the names created among its directories that were not its
    /// files, for the caller to check against the ignore rules.
    pub(crate) fn finish(self) -> (Vec<Utf8PathBuf>, Vec<Utf8PathBuf>) {
        self.stop.store(true, Ordering::Release);
        let seen = self.thread.join().unwrap_or_default();
        let utf8 = |set: BTreeSet<Vec<u8>>| -> Vec<Utf8PathBuf> {
            set.into_iter()
                .map(|p| Utf8PathBuf::from(String::from_utf8_lossy(&p).into_owned()))
                .collect()
        };
        let mut written = utf8(seen.written);
        if seen.overflow {
            written.push(Utf8PathBuf::from(OVERFLOW));
        }
        (written, utf8(seen.created))
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::mem::MaybeUninit;

    use rustix::{
        event::{PollFd, PollFlags, Timespec},
        fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags},
        io::Errno,
    };

    use super::*;

    /// How often the thread looks at the stop flag while no event comes.
    const TICK: Duration = Duration::from_millis(50);

    pub(super) fn start(root: &Path, listed: &[PathBuf]) -> Option<Watch> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        let files: std::collections::HashSet<Vec<u8>> = listed
            .iter()
            .map(|p| p.as_os_str().as_bytes().to_vec())
            .collect();
        let mut dirs: BTreeSet<Vec<u8>> = BTreeSet::new();
        dirs.insert(Vec::new());
        for path in &files {
            let mut at = path.as_slice();
            while let Some(slash) = at.iter().rposition(|&b| b == b'/') {
                at = &at[..slash];
                if !dirs.insert(at.to_vec()) {
                    break;
                }
            }
        }
        let flags = WatchFlags::MODIFY
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::ATTRIB
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::DONT_FOLLOW
            | WatchFlags::ONLYDIR;
        let mut watched: HashMap<i32, Vec<u8>> = HashMap::new();
        for dir in dirs {
            let path = if dir.is_empty() {
                root.to_owned()
            } else {
                root.join(std::ffi::OsStr::from_bytes(&dir))
            };
            match inotify::add_watch(&fd, &path, flags) {
                Ok(wd) => {
                    watched.insert(wd, dir);
                }
                // Out of watches: nothing can be said for the run.
                Err(Errno::NOSPC) => return None,
                Err(_) => {}
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("orcho-watch".to_owned())
            .spawn(move || drain(&fd, &watched, &files, &flag))
            .ok()?;
        Some(Watch { stop, thread })
    }

    fn drain(
        fd: &rustix::fd::OwnedFd,
        watched: &HashMap<i32, Vec<u8>>,
        files: &std::collections::HashSet<Vec<u8>>,
        stop: &AtomicBool,
    ) -> Seen {
        let mut seen = Seen::default();
        let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
        let tick = Timespec {
            tv_sec: 0,
            tv_nsec: i64::try_from(TICK.as_nanos()).unwrap_or(50_000_000),
        };
        loop {
            // The last read happens after the stop: nothing the command did
            // before it ended is left in the queue.
            let stopping = stop.load(Ordering::Acquire);
            let mut reader = inotify::Reader::new(fd, &mut buf);
            while let Ok(event) = reader.next() {
                if event.events().contains(ReadFlags::QUEUE_OVERFLOW) {
                    seen.overflow = true;
                    continue;
                }
                let (Some(dir), Some(name)) = (watched.get(&event.wd()), event.file_name()) else {
                    continue;
                };
                let mut path = dir.clone();
                if !path.is_empty() {
                    path.push(b'/');
                }
                path.extend_from_slice(name.to_bytes());
                if files.contains(&path) {
                    seen.written.insert(path);
                } else if event
                    .events()
                    .intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO)
                    && !event.events().contains(ReadFlags::ISDIR)
                {
                    seen.created.insert(path);
                }
            }
            if stopping {
                return seen;
            }
            let mut fds = [PollFd::new(fd, PollFlags::IN)];
            let _ = rustix::event::poll(&mut fds, Some(&tick));
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::*;

    pub(super) fn start(_root: &Path, _listed: &[PathBuf]) -> Option<Watch> {
        None
    }
}
