//! Cross-process advisory locks with typed guards.

use std::{
    fs::{File, OpenOptions, TryLockError},
    time::{Duration, Instant},
};

use camino::{Utf8Path, Utf8PathBuf};

use crate::{LockError, LockErrorKind};

/// A lock file: cross-process advisory locks, shared or exclusive.
///
/// Each `lock_*` call opens the file anew, so locks taken through two calls
/// conflict even inside one process (two threads never both hold the
/// exclusive lock). Locks are released when the guard drops, and by the
/// operating system when the process dies, so a crashed holder never leaves
/// a stale lock behind.
///
/// The lock file is created if it does not exist; its parent directory must
/// exist. Its content is never read or written.
///
/// ```
/// use orcho_core::fs::LockFile;
/// # let dir = tempfile::tempdir()?;
/// # let path = camino::Utf8PathBuf::try_from(dir.path().join("run.lock"))?;
/// let lock = LockFile::new(&path);
/// let guard = lock.lock_exclusive()?;
/// assert!(lock.try_lock_shared()?.is_none(), "held exclusively");
/// drop(guard);
/// let _a = lock.lock_shared()?;
/// let _b = lock.try_lock_shared()?.expect("shared locks coexist");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct LockFile {
    path: Utf8PathBuf,
}

/// Proof that a shared lock is held. Released on drop.
#[derive(Debug)]
#[must_use = "the lock is released when the guard is dropped"]
pub struct SharedGuard {
    file: File,
    path: Utf8PathBuf,
}

/// Proof that the exclusive lock is held. Released on drop.
///
/// Stores hand out their mutating methods only to holders of this guard.
#[derive(Debug)]
#[must_use = "the lock is released when the guard is dropped"]
pub struct ExclusiveGuard {
    file: File,
    path: Utf8PathBuf,
}

#[derive(Clone, Copy)]
enum Mode {
    Shared,
    Exclusive,
}

impl LockFile {
    /// A lock at `path`. Nothing is opened until a lock is taken.
    pub fn new(path: impl Into<Utf8PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// The lock file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }

    fn open(&self) -> Result<File, LockError> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .map_err(|e| LockError::new(&self.path, LockErrorKind::Io(e)))
    }

    fn blocking(&self, mode: Mode) -> Result<File, LockError> {
        let file = self.open()?;
        match mode {
            Mode::Shared => file.lock_shared(),
            Mode::Exclusive => file.lock(),
        }
        .map_err(|e| LockError::new(&self.path, LockErrorKind::Io(e)))?;
        Ok(file)
    }

    fn attempt(&self, mode: Mode) -> Result<Option<File>, LockError> {
        let file = self.open()?;
        let result = match mode {
            Mode::Shared => file.try_lock_shared(),
            Mode::Exclusive => file.try_lock(),
        };
        match result {
            Ok(()) => Ok(Some(file)),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(LockError::new(&self.path, LockErrorKind::Io(e))),
        }
    }

    fn with_timeout(&self, mode: Mode, timeout: Duration) -> Result<File, LockError> {
        let start = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            if let Some(file) = self.attempt(mode)? {
                return Ok(file);
            }
            let waited = start.elapsed();
            if waited >= timeout {
                return Err(LockError::new(
                    &self.path,
                    LockErrorKind::Timeout { waited },
                ));
            }
            std::thread::sleep(pause.min(timeout - waited));
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    fn shared(&self, file: File) -> SharedGuard {
        SharedGuard {
            file,
            path: self.path.clone(),
        }
    }

    fn exclusive(&self, file: File) -> ExclusiveGuard {
        ExclusiveGuard {
            file,
            path: self.path.clone(),
        }
    }

    /// Takes a shared lock, waiting as long as it takes.
    ///
    /// # Errors
    ///
    /// When the lock file cannot be opened or locked.
    pub fn lock_shared(&self) -> Result<SharedGuard, LockError> {
        self.blocking(Mode::Shared).map(|f| self.shared(f))
    }

    /// Takes the exclusive lock, waiting as long as it takes.
    ///
    /// # Errors
    ///
    /// When the lock file cannot be opened or locked.
    pub fn lock_exclusive(&self) -> Result<ExclusiveGuard, LockError> {
        self.blocking(Mode::Exclusive).map(|f| self.exclusive(f))
    }

    /// Takes a shared lock if no one holds the exclusive lock; `Ok(None)`
    /// otherwise.
    ///
    /// # Errors
    ///
    /// When the lock file cannot be opened or locked.
    pub fn try_lock_shared(&self) -> Result<Option<SharedGuard>, LockError> {
        Ok(self.attempt(Mode::Shared)?.map(|f| self.shared(f)))
    }

    /// Takes the exclusive lock if no one holds any lock; `Ok(None)`
    /// otherwise.
    ///
    /// # Errors
    ///
    /// When the lock file cannot be opened or locked.
    pub fn try_lock_exclusive(&self) -> Result<Option<ExclusiveGuard>, LockError> {
        Ok(self.attempt(Mode::Exclusive)?.map(|f| self.exclusive(f)))
    }

    /// Takes a shared lock, giving up after `timeout`.
    ///
    /// # Errors
    ///
    /// [`LockError::is_timeout`] when the exclusive lock was held for the whole
    /// timeout, or an I/O error.
    pub fn lock_shared_timeout(&self, timeout: Duration) -> Result<SharedGuard, LockError> {
        self.with_timeout(Mode::Shared, timeout)
            .map(|f| self.shared(f))
    }

    /// Takes the exclusive lock, giving up after `timeout`.
    ///
    /// # Errors
    ///
    /// [`LockError::is_timeout`] when the lock was held for the whole timeout,
    /// or an I/O error.
    pub fn lock_exclusive_timeout(&self, timeout: Duration) -> Result<ExclusiveGuard, LockError> {
        self.with_timeout(Mode::Exclusive, timeout)
            .map(|f| self.exclusive(f))
    }
}

impl SharedGuard {
    /// The lock file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }
}

impl ExclusiveGuard {
    /// The lock file.
    pub fn path(&self) -> &Utf8Path {
        &self.path
    }
}

impl Drop for SharedGuard {
    fn drop(&mut self) {
        // Closing the file releases the lock too; unlocking first makes the
        // release immediate even if the descriptor were shared.
        let _ = self.file.unlock();
    }
}

impl Drop for ExclusiveGuard {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp() -> (tempfile::TempDir, LockFile) {
        let dir = tempfile::tempdir().unwrap();
        let path = Utf8PathBuf::try_from(dir.path().join("x.lock")).unwrap();
        (dir, LockFile::new(path))
    }

    #[test]
    fn exclusive_excludes_everything_and_shared_coexist() {
        let (_dir, lock) = temp();
        let g = lock.lock_exclusive().unwrap();
        assert!(lock.try_lock_exclusive().unwrap().is_none());
        assert!(lock.try_lock_shared().unwrap().is_none());
        drop(g);
        let s1 = lock.try_lock_shared().unwrap().unwrap();
        let _s2 = lock.lock_shared().unwrap();
        assert!(lock.try_lock_exclusive().unwrap().is_none());
        drop(s1);
    }

    #[test]
    fn timeouts_are_typed() {
        let (_dir, lock) = temp();
        let _g = lock.lock_exclusive().unwrap();
        let err = lock
            .lock_exclusive_timeout(Duration::from_millis(30))
            .unwrap_err();
        assert!(err.is_timeout());
        assert!(err.kind().to_string().starts_with("timed out after"));
        assert!(
            lock.lock_shared_timeout(Duration::ZERO)
                .unwrap_err()
                .is_timeout()
        );
    }

    #[test]
    fn a_waiter_gets_the_lock_when_it_is_released() {
        let (_dir, lock) = temp();
        let g = lock.lock_exclusive().unwrap();
        let waiter = {
            let lock = LockFile::new(lock.path());
            std::thread::spawn(move || {
                lock.lock_exclusive_timeout(Duration::from_secs(10))
                    .map(|_| ())
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        drop(g);
        waiter.join().unwrap().unwrap();
    }

    #[test]
    fn a_missing_directory_is_an_io_error_naming_the_path() {
        let lock = LockFile::new("/nonexistent-orcho-dir/run.lock");
        let err = lock.lock_exclusive().unwrap_err();
        assert!(!err.is_timeout());
        insta::assert_snapshot!(err, @"failed to lock `/nonexistent-orcho-dir/run.lock`");
    }
}
