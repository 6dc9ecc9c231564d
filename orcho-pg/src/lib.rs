//! Orcho's run store on PostgreSQL: one store, and one inbox, shared by
//! every host on every machine that can reach the database.
//!
//! [`PgStorage`] implements the storage seam
//! ([`orcho_core::storage::Storage`]) in a database: runs, their journals,
//! snapshots, decision points with their one decision each, advice,
//! waivers, host metadata and evidence. Receipts, worktrees and the logs of
//! phase commands stay on the disk of the machine whose checkout they
//! belong to; each run records which machine and checkout created it
//! ([`Origin`]).
//!
//! The guarantees are the directory store's, across machines: a decision
//! is recorded once (a conditional insert on a unique key), a run is driven
//! by one host at a time (a session advisory lock the server lets go when
//! the host dies), a log is replayed in the order it was written. The
//! schema is versioned ([`SCHEMA_VERSION`]) and migrated on first use; a
//! newer schema than this build knows is refused.
//!
//! ```no_run
//! use std::sync::Arc;
//! use orcho_core::storage::Storage;
//! use orcho_pg::{Origin, PgStorage};
//!
//! let storage = PgStorage::open("postgres://orcho@db.internal/orcho?sslmode=require")?
//!     .for_origin(Origin::new("build-3", "/home/ci/app"));
//! let storage: Arc<dyn Storage> = Arc::new(storage);
//! let runs = storage.runs()?; // the runs this checkout created
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The URL is a libpq URL (`postgres://USER:PASSWORD@HOST:PORT/DATABASE`,
//! with `sslmode=disable|prefer|require` and `connect_timeout`); TLS uses
//! rustls with the webpki roots, and verifies the server's certificate and
//! name. The password is never shown: [`Storage::location`](orcho_core::storage::Storage::location) and every error
//! say the URL without it.

mod bridge;
mod conn;
mod schema;
mod storage;
#[cfg(feature = "test-util")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-util")))]
pub mod testing;

use std::sync::Arc;

use orcho_core::StoreError;

pub use conn::UrlError;
pub use schema::SCHEMA_VERSION;
pub use storage::{CHANNEL, PgStorage};

/// Which machine and checkout created a run: where its worktree,
/// receipts and phase logs are, and which host may drive it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origin {
    machine: String,
    checkout: String,
    repository: Option<String>,
}

impl Origin {
    /// Runs created on the machine labelled `machine` (its host name,
    /// usually) in the checkout at `checkout`.
    pub fn new(machine: impl Into<String>, checkout: impl Into<String>) -> Self {
        Self {
            machine: machine.into(),
            checkout: checkout.into(),
            repository: None,
        }
    }

    /// With the repository the checkout is of (its remote URL, say), shown
    /// in a team's inbox.
    #[must_use]
    pub fn with_repository(mut self, repository: Option<String>) -> Self {
        self.repository = repository;
        self
    }

    /// The machine's label.
    pub fn machine(&self) -> &str {
        &self.machine
    }

    /// The checkout's path on that machine.
    pub fn checkout(&self) -> &str {
        &self.checkout
    }

    /// The repository, when known.
    pub fn repository(&self) -> Option<&str> {
        self.repository.as_deref()
    }
}

/// `url` without its password, to show.
pub fn redact_url(url: &str) -> String {
    conn::redact(url)
}

/// Whether `store` names a PostgreSQL store (`postgres://` or
/// `postgresql://`) rather than a directory.
pub fn is_url(store: &str) -> bool {
    conn::is_url(store)
}

impl PgStorage {
    /// The store at `url`. The URL is checked now; the database is
    /// connected to (and its schema migrated) on first use, so a store
    /// that is never read costs nothing.
    ///
    /// # Errors
    ///
    /// A URL that is not a PostgreSQL URL Orcho can use (the error shows it
    /// without its password), or a thread that cannot be started.
    pub fn open(url: &str) -> Result<Self, OpenError> {
        let target = conn::Target::parse(url)?;
        let bridge = bridge::Bridge::start().map_err(OpenError::Thread)?;
        Ok(Self {
            inner: Arc::new(storage::Inner::new(bridge, target)),
            origin: None,
            team: false,
        })
    }

    /// Runs created through this storage record `origin`,
    /// [`runs`](orcho_core::storage::Storage::runs) lists only those, and
    /// runs of another origin are not driven from here
    /// ([`Storage::origin`](orcho_core::storage::Storage::origin)).
    #[must_use]
    pub fn for_origin(mut self, origin: Origin) -> Self {
        self.origin = Some(origin);
        self
    }

    /// The same database, listing every run of every machine and checkout
    /// (for a team's inbox); runs created elsewhere are still driven only
    /// there. It shares this storage's connections.
    #[must_use]
    pub fn team(&self) -> Self {
        Self {
            inner: Arc::clone(&self.inner),
            origin: self.origin.clone(),
            team: true,
        }
    }

    /// The origin runs created here record.
    pub fn local_origin(&self) -> Option<&Origin> {
        self.origin.as_ref()
    }

    /// Whether the database answers a query within `within` now, on a
    /// connection of its own: what a host asks when something failed, to
    /// tell "the store is down, try again" from a failure of the request.
    pub fn reachable(&self, within: std::time::Duration) -> bool {
        self.call(move |inner| async move {
            let asked = async {
                let conn = inner.target.connect().await?;
                conn.client
                    .simple_query("SELECT 1")
                    .await
                    .map_err(|e| inner.target.error("asking the store", &e))
            };
            match tokio::time::timeout(within, asked).await {
                Ok(Ok(_)) => Ok(true),
                _ => Ok::<_, StoreError>(false),
            }
        })
        .unwrap_or(false)
    }

    /// Connects, and brings the schema to [`SCHEMA_VERSION`]: returns the
    /// version found before (`0` for a new database).
    ///
    /// # Errors
    ///
    /// When the database cannot be reached, or its schema is newer than
    /// this build knows.
    pub fn migrate(&self) -> Result<i32, StoreError> {
        self.call(|inner| async move {
            let conn = inner.target.connect().await?;
            schema::migrate(&conn, &inner.target).await
        })
    }
}

/// A PostgreSQL store that cannot be opened.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The URL is not one Orcho can use.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The client's thread could not be started.
    #[error("cannot start the database client's thread")]
    Thread(#[source] std::io::Error),
}
